package notion

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// gate holds back every request of one client after Notion answered one of
// its page updates with a given status, until released: what a client
// sees when its Retry-After (or a slow network) outlasts another
// client's whole claim.
type gate struct {
	next     http.RoundTripper
	status   int
	once     sync.Once
	tripped  chan struct{}
	released chan struct{}
}

func newGate(next http.RoundTripper, status int) *gate {
	return &gate{next: next, status: status, tripped: make(chan struct{}), released: make(chan struct{})}
}

func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-g.tripped:
		<-g.released
	default:
	}
	res, err := g.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPatch && res.StatusCode == g.status {
		g.once.Do(func() { close(g.tripped) })
	}
	return res, err
}

// claimRace runs agent A's claim, fails its page update with fault, lets
// agent B claim the task in full meanwhile, then lets A go on. It returns
// both results and the task as Notion holds it at the end.
func claimRace(t *testing.T, fault notionemu.Fault) (a, b error, final *model.Task) {
	t.Helper()
	emu := newEmulator(t)
	db := emu.database(t, notionemu.PresetNtask())
	cfgA := emu.config(db, PresetNtask)
	g := newGate(emu.rt, fault.Status)
	cfgA.Transport = g
	srcA, srcB := emu.open(t, cfgA), emu.open(t, emu.config(db, PresetNtask))
	ctx := context.Background()
	task, err := srcB.Create(ctx, sources.NewTask{Title: "contested"})
	if err != nil {
		t.Fatal(err)
	}
	fault.Endpoint = notionemu.EndpointPageUpdate
	if err := emu.srv.Inject(1, fault); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := srcA.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "A"})
		done <- err
	}()
	<-g.tripped
	_, b = srcB.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "B"})
	close(g.released)
	a = <-done
	final, err = srcB.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a, b, final
}

func TestA429OnAClaimNeverTellsTwoAgentsTheyHoldTheTask(t *testing.T) {
	a, b, final := claimRace(t, notionemu.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	if a == nil && b == nil {
		t.Fatalf("double claim: A and B were both told they hold the task; Notion says %s holds it", final.Claim().Name)
	}
	if b != nil || final.Claim().Name != "B" {
		t.Fatalf("B claimed while A waited and must keep it: B %v, holder %s", b, final.Claim().Name)
	}
	wantCode(t, a, model.CodeConflict, "held by B")
}

func TestAWriteThatLandedBeforeA5xxIsNotMadeTwice(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, withExtras(notionemu.PresetNtask(), PresetNtask)), PresetNtask))
	ctx := context.Background()
	applied := func(endpoint string) {
		t.Helper()
		if err := emu.srv.Inject(1, notionemu.Fault{Endpoint: endpoint, Status: http.StatusGatewayTimeout, Apply: true}); err != nil {
			t.Fatal(err)
		}
	}
	applied(notionemu.EndpointPageCreate)
	task, err := src.Create(ctx, sources.NewTask{Title: "once"})
	if err != nil {
		t.Fatalf("create whose answer was lost: %v", err)
	}
	if all, err := src.query(ctx, "test", nil); err != nil || len(all) != 1 {
		t.Fatalf("%d tasks after one create (%v): the create was sent twice", len(all), err)
	}
	applied(notionemu.EndpointPageUpdate)
	got, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "A"})
	if err != nil || got.Claim().Name != "A" {
		t.Fatalf("claim whose answer was lost: %v", err)
	}
	applied(notionemu.EndpointPageUpdate)
	if _, err := src.Finish(ctx, task.ID, got.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
		t.Fatalf("finish whose answer was lost: %v", err)
	}
}

// The last attempt of a write lands and is answered 504: it landed, and
// saying otherwise sends the agent to retry into LOST_LOCK on a task that is
// done.
func TestAWriteThatLandsOnItsLastAttemptIsReportedAsLanded(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "finish on the last try"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "A"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		n     int
		fault notionemu.Fault
	}{
		{claimAttempts - 1, notionemu.Fault{Endpoint: notionemu.EndpointPageUpdate, Status: http.StatusServiceUnavailable}},
		{1, notionemu.Fault{Endpoint: notionemu.EndpointPageUpdate, Status: http.StatusGatewayTimeout, Apply: true}},
	} {
		if err := emu.srv.Inject(f.n, f.fault); err != nil {
			t.Fatal(err)
		}
	}
	done, err := src.Finish(ctx, task.ID, got.Claim().Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("a finish that landed on its last attempt: %v", err)
	}
}

func TestA409OnClaimNextMovesToTheNextCandidate(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	for _, title := range []string{"first", "second"} {
		if _, err := src.Create(ctx, sources.NewTask{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	emu.srv.ResetStats()
	if err := emu.srv.Inject(claimAttempts, notionemu.Fault{Endpoint: notionemu.EndpointPageUpdate, Status: http.StatusConflict}); err != nil {
		t.Fatal(err)
	}
	got, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "A"})
	if err != nil {
		t.Fatalf("claim-next after 409s on the head: %v", err)
	}
	if n := emu.srv.Stats().ByStatus[http.StatusConflict]; n != claimAttempts || got.Claim().Name != "A" {
		t.Fatalf("%d answers 409, holder %q: the test did not make the first candidate contended", n, got.Claim().Name)
	}
}
