package mesh

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

func TestParseHealth(t *testing.T) {
	ok := []struct {
		body string
		want HealthReport
	}{
		{`{"node":"SANDMAN","status":"healthy","last_task_at":"2026-02-01T02:15:00Z","queue_depth":3,"claimed_tasks":["task-123","task-456"]}`,
			HealthReport{Node: "SANDMAN", Status: "healthy", LastTaskAt: time.Date(2026, 2, 1, 2, 15, 0, 0, time.UTC), QueueDepth: 3, ClaimedTasks: []string{"task-123", "task-456"}}},
		{`{"node":"A","status":"draining","last_task_at":null,"claimed_tasks":null,"uptime":12,"extra":{"x":[1]}}`,
			HealthReport{Node: "A", Status: "draining"}},
	}
	for _, c := range ok {
		got, err := ParseHealth([]byte(c.body))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", c.body, got, err, c.want)
		}
	}
	bad := []struct{ body, want string }{
		{``, "not JSON"},
		{`<html>`, "not JSON"},
		{`[]`, "is a JSON array, not an object"},
		{`"healthy"`, "is a JSON string, not an object"},
		{`null`, "field node: missing"},
		{`{"status":"healthy"}`, "field node: missing"},
		{`{"node":"A"}`, "field status: missing"},
		{`{"node":1,"status":"healthy"}`, "field node: wrong type (number)"},
		{`{"node":"A","status":"healthy","queue_depth":1.5}`, "field queue_depth: wrong type (number 1.5)"},
		{`{"node":"A","status":"healthy","queue_depth":-1}`, "field queue_depth: negative"},
		{`{"node":"A","status":"healthy","claimed_tasks":"t-1"}`, "field claimed_tasks: wrong type (string)"},
		{`{"node":"A","status":"healthy","claimed_tasks":[1]}`, "field claimed_tasks: wrong type (number)"},
		{`{"node":"A","status":"healthy","last_task_at":"02:15"}`, "field last_task_at: not an RFC 3339 time"},
		{`{"node":"A","status":"healthy"} {}`, "not JSON"},
	}
	for _, c := range bad {
		if _, err := ParseHealth([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
}

func FuzzParseHealth(f *testing.F) {
	f.Add([]byte(`{"node":"SANDMAN","status":"healthy","last_task_at":"2026-02-01T02:15:00Z","queue_depth":3,"claimed_tasks":["task-123"]}`))
	f.Add([]byte(`{"node":"A","status":"x","queue_depth":1e3,"claimed_tasks":[null]}`))
	f.Add([]byte(`{"node":"\u00e9","status":"healthy","last_task_at":"2026-02-01T02:15:00+14:00"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseHealth(data)
		if err != nil {
			return
		}
		if r.Node == "" || r.Status == "" || r.QueueDepth < 0 {
			t.Fatalf("accepted %+v", r)
		}
		// What a node-side Handler would send back must parse to the same report.
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseHealth(out)
		if err != nil || again.Node != r.Node || again.QueueDepth != r.QueueDepth || !again.LastTaskAt.Equal(r.LastTaskAt) ||
			len(again.ClaimedTasks) != len(r.ClaimedTasks) {
			t.Fatalf("round trip: %+v → %s → %+v, %v", r, out, again, err)
		}
	})
}

func TestReportFor(t *testing.T) {
	now := time.Date(2026, 2, 1, 3, 0, 0, 0, time.UTC)
	claimed := func(id, agent, node string, at time.Time) *model.Task {
		return (&model.Task{ID: id, State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: agent, Node: node, ClaimedAt: model.StampOf(at), Expires: model.StampOf(at.Add(20 * time.Minute))})
	}
	tasks := []*model.Task{
		claimed("t-2", "sandman-1", "", now.Add(-5*time.Minute)),
		claimed("t-1", "elsewhere", "SANDMAN", now.Add(-2*time.Minute)), // the claim's node wins over the agent list
		claimed("t-3", "sandman-1", "ORACLE", now.Add(-time.Minute)),
		claimed("t-4", "oracle-1", "", now.Add(-time.Minute)),
		(&model.Task{ID: "t-5", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderHuman, Name: "HUMAN:alice", Node: "SANDMAN"}),
		{ID: "q-1", State: model.StateQueued},
		(&model.Task{ID: "q-2", State: model.StateQueued}).WithReservation(&model.Reservation{For: "oracle-1"}),
		{ID: "d-1", State: model.StateDone},
	}
	got := ReportFor("SANDMAN", []string{"sandman-1"}, tasks, now)
	want := HealthReport{Node: "SANDMAN", Status: "healthy", LastTaskAt: now.Add(-2 * time.Minute), QueueDepth: 1, ClaimedTasks: []string{"t-1", "t-2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// With no agents listed, every eligible task counts, reserved or not.
	if idle := ReportFor("IDLE", nil, tasks, now); idle.QueueDepth != 2 || len(idle.ClaimedTasks) != 0 || !idle.LastTaskAt.IsZero() {
		t.Errorf("idle node: %+v", idle)
	}
}

func TestInbox(t *testing.T) {
	in := NewInbox("hook-token")
	srv := httptest.NewServer(in)
	defer srv.Close()
	post := func(auth, body string) int {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post("Bearer nope", `{"message":"hi","deliver":false}`); c != http.StatusUnauthorized {
		t.Errorf("wrong token: HTTP %d", c)
	}
	if c := post("Bearer hook-token", `{"deliver":false}`); c != http.StatusBadRequest {
		t.Errorf("no message: HTTP %d", c)
	}
	if c := post("Bearer hook-token", `{"message":"⚠️ Task went stale","deliver":false}`); c != http.StatusOK {
		t.Errorf("good notification: HTTP %d", c)
	}
	if got := in.Messages(); len(got) != 1 || got[0].Message != "⚠️ Task went stale" || got[0].Deliver {
		t.Errorf("inbox = %+v", got)
	}
}
