package lincheck_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

func TestHistoryRoundTripsInCallOrder(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	late := lincheck.Op{Client: 1, Kind: lincheck.Finish, Task: "t1", Token: "tok", Outcome: "done", Call: at.Add(time.Second), Return: at.Add(2 * time.Second), Result: "LOST_LOCK"}
	early := lincheck.Op{Client: 0, Kind: lincheck.ClaimNext, Agent: "a", Call: at, Result: lincheck.Unknown}
	var b bytes.Buffer
	for _, o := range []lincheck.Op{late, early} {
		if err := lincheck.WriteOp(&b, o); err != nil {
			t.Fatal(err)
		}
	}
	ops, err := lincheck.ReadHistory(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Kind != lincheck.ClaimNext || !ops[0].Pending() || ops[1].Token != "tok" {
		t.Fatalf("read back %+v", ops)
	}
}

func TestBadHistoryLinesAreNamed(t *testing.T) {
	call := `"call":"2026-11-25T12:00:00Z"`
	for _, tc := range []struct{ line, want string }{
		{`{"op":"claim"`, "line 2: not an operation"},
		{`{"op":"steal","task":"t",` + call + `,"result":"ok"}`, `op "steal" is not one of`},
		{`{"op":"finish","task":"t","result":"ok"}`, "finish has no call time"},
		{`{"op":"finish","task":"t",` + call + `}`, "finish has no result"},
		{`{"op":"heartbeat",` + call + `,"result":"ok"}`, "heartbeat names no task"},
		{`{"op":"claim","task":"t",` + call + `,"result":"ok"}`, "claim answered ok shows no lock token"},
		{`{"op":"claim","task":"t",` + call + `,"return":"2026-11-25T11:00:00Z","result":"CONFLICT"}`, "returned (2026-11-25T11:00:00Z) before it was called"},
	} {
		good := `{"op":"read",` + call + `,"result":"ok"}`
		ops, err := lincheck.ReadHistory(strings.NewReader(good + "\n" + tc.line + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || ops != nil {
			t.Errorf("%s: got %v (%d ops), want an error saying %q and nothing read", tc.line, err, len(ops), tc.want)
		}
	}
}

func FuzzReadHistory(f *testing.F) {
	f.Add([]byte(`{"op":"claim-next","agent":"a","call":"2026-11-25T12:00:00Z","result":"unknown"}` + "\n"))
	f.Add([]byte(`{"op":"read","call":"2026-11-25T12:00:00Z","return":"2026-11-25T12:00:01Z","result":"ok","seen":[{"task":"t","state":"claimed","holder":"AGENT","token":"x"}]}`))
	f.Add([]byte("{}\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := lincheck.ReadHistory(bytes.NewReader(data))
		if err != nil {
			if ops != nil || !strings.HasPrefix(err.Error(), "history") {
				t.Fatalf("a refused history returned operations or an unnamed error: %v", err)
			}
			return
		}
		// whatever was accepted can be checked without a panic
		lincheck.Check(ops, lincheck.Rules{Grace: time.Second, Lease: time.Second, Timeout: time.Second})
	})
}

// TestSavedHistory checks a history the fault suite kept: set
// LINCHECK_HISTORY to its directory (every *.jsonl in it is one lane) and
// LINCHECK_GRACE and LINCHECK_LEASE to the run's (the suite's 2s and 3s);
// LINCHECK_NO_RESCUE=1 for a queue whose next never rescues (Notion).
func TestSavedHistory(t *testing.T) {
	dir := os.Getenv("LINCHECK_HISTORY")
	if dir == "" {
		t.Skip("set LINCHECK_HISTORY to a directory of a fault run's history")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var all bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	ops, err := lincheck.ReadHistory(&all)
	if err != nil {
		t.Fatal(err)
	}
	r := lincheck.Rules{Grace: 2 * time.Second, Rescue: os.Getenv("LINCHECK_NO_RESCUE") == "", Lease: 3 * time.Second, Resolution: time.Second, Timeout: time.Minute}
	for env, d := range map[string]*time.Duration{"LINCHECK_GRACE": &r.Grace, "LINCHECK_LEASE": &r.Lease} {
		if v := os.Getenv(env); v != "" {
			if *d, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: %v", env, err)
			}
		}
	}
	rep := lincheck.Check(ops, r)
	t.Log(rep)
	if !rep.Linearizable() {
		html := filepath.Join(dir, "violations.html")
		if err := rep.Visualize(html); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("not linearizable; Porcupine's view: %s", html)
	}
}
