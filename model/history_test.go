package model

import (
	"strings"
	"testing"
	"time"
)

func TestTimeline(t *testing.T) {
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	line := func(evs []Event) string {
		var out []string
		for _, e := range evs {
			s := e.At.Sub(t0).String() + " " + e.Action
			if e.Actor != "" {
				s += " by " + e.Actor
			}
			if e.Reason != "" {
				s += " (" + e.Reason + ")"
			}
			if e.Detail != "" {
				s += " [" + e.Detail + "]"
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	cases := []struct {
		name string
		task Task
		want string
	}{
		{"an SQL row claimed with the seed's own UPDATE has no audit row: its claim and heartbeat come from its fields",
			*(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "w1", RunID: "r1", Node: "n1", ClaimedAt: StampOf(m(0)), HeartbeatAt: StampOf(m(5))}),
			"0s claim by w1 [run r1 on node n1]; 5m0s heartbeat by w1 [last sign of life]"},
		{"events come out newest last whatever order the trail kept them in",
			Task{State: StateQueued, more: &More{History: []Event{
				{At: m(9), Actor: "alice", Action: "force-release", Reason: "stuck"},
				{At: m(1), Actor: "w1", Action: "claim"},
			}}},
			"1m0s claim by w1; 9m0s force-release by alice (stuck)"},
		{"a claim the trail already has is not added again, even under seed 001's word",
			*(&Task{State: StateClaimed,
				more: &More{History: []Event{{At: m(0), Actor: "w1", Action: "claimed"}}}}).WithClaim(Claim{Holder: HolderAgent, Name: "w1", ClaimedAt: StampOf(m(0))}),
			"0s claimed by w1"},
		{"a human's claim reads as a takeover",
			*(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:alice", ClaimedAt: StampOf(m(2))}),
			"2m0s takeover by HUMAN:alice"},
		{"heartbeats by one holder fold into one line saying how many since when",
			Task{State: StateClaimed, more: &More{History: []Event{
				{At: m(0), Actor: "w1", Action: "claim"},
				{At: m(5), Actor: "w1", Action: "heartbeat"},
				{At: m(10), Actor: "w1", Action: "heartbeat"},
				{At: m(15), Actor: "w1", Action: "heartbeat"},
				{At: m(16), Actor: "bob", Action: "comment", Reason: "looks slow"},
				{At: m(20), Actor: "w1", Action: "heartbeat"},
			}}},
			"0s claim by w1; 15m0s heartbeat by w1 [3 heartbeats since 2026-02-01T02:20:00Z]; 16m0s comment by bob (looks slow); 20m0s heartbeat by w1"},
		{"a Notion comment beside the same handoff_history entry shows once",
			Task{State: StateQueued, more: &More{History: []Event{
				{At: m(3), Actor: "alice", Action: "handoff", Reason: "knows it", Detail: "to bravo"},
				{At: m(3).Add(20 * time.Second), Actor: "alice", Action: "handoff", Reason: "knows it", Detail: "to bravo · was: IN_PROGRESS held by w1"},
			}}},
			"3m0s handoff by alice (knows it) [to bravo · was: IN_PROGRESS held by w1]"},
		{"two rescues by one agent ten seconds apart are two claims, not one event kept twice",
			Task{State: StateDone, more: &More{History: []Event{
				{At: m(1).Add(49383 * time.Millisecond), Actor: "agent-02", Action: ActionRescue, Detail: "from agent-07"},
				{At: m(1).Add(59646 * time.Millisecond), Actor: "agent-02", Action: ActionRescue, Detail: "from agent-02"},
				{At: m(2).Add(10034 * time.Millisecond), Actor: "agent-03", Action: "complete"},
			}}},
			"1m49.383s rescue by agent-02 [from agent-07]; 1m59.646s rescue by agent-02 [from agent-02]; 2m10.034s complete by agent-03"},
		{"a blocked task with no block event tells its reason, unblock action and next check from its fields",
			Task{State: StateBlocked, EditedAt: StampOf(m(30)), more: &More{Reason: "waiting for DBA", Unblock: &Unblock{Action: "grant access", NextCheckAt: m(90)}}},
			"30m0s block (waiting for DBA) [unblock: grant access; next check 2026-02-01T03:45:00Z]"},
		{"a completion the trail recorded is not repeated",
			Task{State: StateDone, EditedAt: StampOf(m(40)), more: &More{History: []Event{{At: m(39), Actor: "w1", Action: "completed"}}}},
			"39m0s completed by w1"},
		{"a queued task with no trail has no history", Task{State: StateQueued, EditedAt: StampOf(m(1))}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := line(Timeline(&c.task)); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestTimelineLeavesTheTaskAlone(t *testing.T) {
	task := Task{State: StateClaimed, more: &More{History: []Event{{At: t0.Add(time.Minute), Action: "heartbeat"}, {At: t0, Action: "claim"}}}}
	Timeline(&task)
	if task.More().History[0].Action != "heartbeat" || len(task.More().History) != 2 {
		t.Fatalf("Timeline changed the task's own history: %+v", task.More().History)
	}
}
