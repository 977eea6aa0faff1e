package notion

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

const (
	operatorID = "6a1f3b2c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	agentUser  = "7b2e4c3d-5e6f-4071-9b8c-0d1e2f3a4b5c"
)

// skillDB is a database set up by today's notion-task skill, with the
// skill's agent and an operator as workspace members.
func skillDB(t *testing.T) (*emulator, string, Config) {
	t.Helper()
	emu := newEmulator(t)
	for id, name := range map[string]string{operatorID: "Olga Operator", agentUser: "ntask bot"} {
		if err := emu.srv.AddUser(id, name); err != nil {
			t.Fatal(err)
		}
	}
	schema := notionemu.PresetToday()
	schema.Properties = append(schema.Properties, notionemu.Property{Name: "ClassRank", Type: notionemu.TypeNumber})
	db := emu.database(t, schema)
	cfg := emu.config(db, PresetNtask)
	cfg.OperatorUser = operatorID
	return emu, db, cfg
}

// skillPage creates a page as the skill's `create` and a person would,
// from property JSON keyed by name.
func skillPage(t *testing.T, emu *emulator, db string, props ...string) string {
	t.Helper()
	body := `{"parent":{"database_id":"` + db + `"},"properties":{` + strings.Join(props, ",") + `}}`
	return emu.raw(t, "POST", "/v1/pages", body)["id"].(string)
}

func title(s string) string  { return fmt.Sprintf(`"Task name":{"title":[{"text":{"content":%q}}]}`, s) }
func status(s string) string { return fmt.Sprintf(`"Status":{"status":{"name":%q}}`, s) }

// skillReclaims is the binary's claim guard for an In Progress task
// (Commands/Claim.swift at 75590fd): it re-claims unless "Lock Token" is
// set and "Lock Expires" is in the future.
func skillReclaims(t *testing.T, emu *emulator, id string, now time.Time) bool {
	t.Helper()
	pg := emu.raw(t, "GET", "/v1/pages/"+id, "")
	props := pg["properties"].(map[string]any)
	token := ""
	for _, part := range props["Lock Token"].(map[string]any)["rich_text"].([]any) {
		token += part.(map[string]any)["plain_text"].(string)
	}
	d, _ := props["Lock Expires"].(map[string]any)["date"].(map[string]any)
	if token == "" || d == nil {
		return true
	}
	expires, err := time.Parse(time.RFC3339, d["start"].(string))
	return err != nil || !now.Before(expires)
}

func TestTheNtaskSchemaSaysWhichGenerationItFound(t *testing.T) {
	emu, _, cfg := skillDB(t)
	if got := emu.open(t, cfg).Schema(); got != "ntask (today's notion-task skill)" {
		t.Fatalf("today's database reads as %q", got)
	}
	seed := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	if got := emu.open(t, seed).Schema(); got != "ntask (seed 002)" {
		t.Fatalf("seed 002's database reads as %q", got)
	}
	lacking := notionemu.PresetToday()
	lacking.Properties = slices.DeleteFunc(lacking.Properties, func(p notionemu.Property) bool { return p.Name == "Lock Token" })
	_, err := Open(context.Background(), emu.config(emu.database(t, lacking), PresetNtask))
	wantCode(t, err, model.CodeMisconfigured, "today's notion-task skill", `"Lock Token"`)
}

// The skill's PullPolicy (Policy/Sort.swift): Status Ready and the lock
// empty or expired; class rank (ClassRank when present), priority
// descending, last edited ascending. Backlog is shown, never pulled.
func TestTodaysDatabaseIsReadAsTheSkillsAgentsReadIt(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	backlog := skillPage(t, emu, db, title("untriaged"), status("Backlog"), `"Priority":{"number":3}`, `"Class":{"select":{"name":"Expedite"}}`)
	skillPage(t, emu, db, title("low"), status("Ready"), `"Priority":{"number":1}`)
	skillPage(t, emu, db, title("high"), status("Ready"), `"Priority":{"number":3}`)
	skillPage(t, emu, db, title("fixed date"), status("Ready"), `"Priority":{"number":1}`, `"Class":{"select":{"name":"Fixed Date"}}`)
	ranked := skillPage(t, emu, db, title("ranked"), status("Ready"), `"Priority":{"number":1}`, `"Class":{"select":{"name":"Intangible"}}`, `"ClassRank":{"number":1}`)
	locked := skillPage(t, emu, db, title("locked"), status("Ready"), `"Priority":{"number":3}`, `"Class":{"select":{"name":"Expedite"}}`,
		`"Lock Token":{"rich_text":[{"text":{"content":"t-1"}}]}`, `"Lock Expires":{"date":{"start":"`+future+`"}}`)
	expired := skillPage(t, emu, db, title("expired lock"), status("Ready"), `"Priority":{"number":2}`,
		`"Lock Token":{"rich_text":[{"text":{"content":"t-2"}}]}`, `"Lock Expires":{"date":{"start":"`+past+`"}}`)
	var order []string
	for {
		next, err := src.Next(ctx, "A")
		if err != nil {
			t.Fatal(err)
		}
		if next == nil {
			break
		}
		order = append(order, next.Title)
		if _, err := src.Claim(ctx, next.ID, sources.ClaimRequest{Agent: "A"}); err != nil {
			t.Fatalf("claim %s: %v", next.Title, err)
		}
	}
	if want := []string{"ranked", "fixed date", "high", "expired lock", "low"}; !slices.Equal(order, want) {
		t.Fatalf("pulled %v, want %v", order, want)
	}
	for id, want := range map[string]string{backlog: "Backlog", locked: "Ready"} {
		got, err := src.Get(ctx, id)
		if err != nil || got.RawStatus != want {
			t.Fatalf("%s: %v %v", want, got, err)
		}
	}
	got, _ := src.Get(ctx, ranked)
	if got.Key == "" || !strings.HasPrefix(got.Key, "TASK-") || got.Class != model.ClassExpedite {
		t.Fatalf("ranked reads key %q class %s", got.Key, got.Class)
	}
	if got, _ := src.Get(ctx, expired); got.Claim().Name != "A" || got.Claim().Holder != model.HolderAgent {
		t.Fatalf("claimdeck's claim reads holder %q (%s)", got.Claim().Name, got.Claim().Holder)
	}
	// The binary's own claim: Assignee its Notion user, Agent Run its run id.
	bin := skillPage(t, emu, db, title("binary's"), status("In Progress"),
		`"Assignee":{"people":[{"object":"user","id":"`+agentUser+`"}]}`, `"Agent Run":{"rich_text":[{"text":{"content":"run-9"}}]}`,
		`"Lock Token":{"rich_text":[{"text":{"content":"t-3"}}]}`, `"Lock Expires":{"date":{"start":"`+future+`"}}`)
	if got, _ := src.Get(ctx, bin); got.Claim().Name != "ntask bot" || got.Claim().RunID != "run-9" || got.Claim().Holder != model.HolderAgent || got.State != model.StateClaimed {
		t.Fatalf("the binary's claim reads %+v in %s", got.Claim(), got.State)
	}
}

func TestTodaysWritesAreTheOnesTheSkillReads(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	id := skillPage(t, emu, db, title("take me"), status("Ready"))
	seen, _ := src.Get(ctx, id)
	held, err := src.Takeover(ctx, id, sources.Human{Actor: "olga", Expect: seen.Version})
	if err != nil {
		t.Fatal(err)
	}
	pg := emu.raw(t, "GET", "/v1/pages/"+id, "")["properties"].(map[string]any)
	who := pg["Assignee"].(map[string]any)["people"].([]any)
	if held.Claim().Holder != model.HolderHuman || len(who) != 1 || who[0].(map[string]any)["id"] != operatorID {
		t.Fatalf("a person's claim: %+v, Assignee %v", held.Claim(), who)
	}
	if skillReclaims(t, emu, id, time.Now().AddDate(50, 0, 0)) {
		t.Fatal("the skill's re-claim would take a person's claim")
	}
	released, err := src.ForceRelease(ctx, id, sources.Human{Actor: "olga", Expect: held.Version})
	if err != nil {
		t.Fatal(err)
	}
	if released.RawStatus != "Ready" || !skillReclaims(t, emu, id, time.Now()) {
		t.Fatalf("force-release left %s with a live lock", released.RawStatus)
	}
	if next, err := src.Next(ctx, "A"); err != nil || next == nil || next.ID != id {
		t.Fatalf("next after force-release: %v %v", next, err)
	}
	canceled, err := src.Cancel(ctx, id, sources.Human{Actor: "olga", Reason: "duplicate of TASK-7", Expect: released.Version})
	if err != nil {
		t.Fatal(err)
	}
	pg = emu.raw(t, "GET", "/v1/pages/"+id, "")["properties"].(map[string]any)
	reason := pg["Blocker Reason"].(map[string]any)["rich_text"].([]any)
	if canceled.RawStatus != "Canceled" || len(reason) != 1 || reason[0].(map[string]any)["plain_text"] != "duplicate of TASK-7" {
		t.Fatalf("cancel wrote %s with Blocker Reason %v", canceled.RawStatus, reason)
	}
}

// Notion refuses a status written as a select; the source writes the
// status type's shape.
func TestAStatusWrittenAsASelectIsRefused(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	id := skillPage(t, emu, db, title("t"), status("Ready"))
	p := patch{}
	p.option(src.m.Status, "Review")
	if _, err := src.api.updatePage(context.Background(), id, notionapi.Properties(p)); err == nil || !strings.Contains(err.Error(), "Status is expected to be status") {
		t.Fatalf("a select value for a status property: %v", err)
	}
	if _, err := src.api.updatePage(context.Background(), id, src.m.fit(p)); err != nil {
		t.Fatalf("the status shape: %v", err)
	}
}

func TestTodaysSubtasksComeFromTheRollups(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	parent := skillPage(t, emu, db, title("parent"), status("Ready"))
	for i, st := range []string{"Done", "Ready", "Canceled"} {
		skillPage(t, emu, db, title(fmt.Sprint("criterion ", i)), status(st), `"Parent-task":{"relation":[{"id":"`+parent+`"}]}`)
	}
	got, err := src.Get(ctx, parent)
	if err != nil || got.OpenSubtasks != 1 {
		t.Fatalf("open sub-tasks %d (%v), want 1", got.OpenSubtasks, err)
	}
	held, err := src.Claim(ctx, parent, sources.ClaimRequest{Agent: "A"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Finish(ctx, parent, held.Claim().Token, sources.Outcome{State: model.StateDone})
	wantCode(t, err, model.CodeIncompleteSubtasks, "1 sub-task")
}

// Approve and rework write what the skill's binary writes
// (NotionCLI.swift: updateForApprove, updateForRework).
func TestTodaysApproveAndReworkWriteWhatTheBinaryWrites(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	stale := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	lockOf := func(id string) (string, any, any) {
		pg := emu.raw(t, "GET", "/v1/pages/"+id, "")["properties"].(map[string]any)
		return fmt.Sprint(pg["Lock Token"].(map[string]any)["rich_text"]), pg["Lock Expires"].(map[string]any)["date"], pg["Done At"].(map[string]any)["date"]
	}
	// A Review page the binary left with a dead lock behind (an older
	// binary's review kept it): approve clears it and stamps Done At.
	id := skillPage(t, emu, db, title("reviewed"), status("Review"),
		`"Lock Token":{"rich_text":[{"text":{"content":"t-old"}}]}`, `"Lock Expires":{"date":{"start":"`+stale+`"}}`)
	seen, _ := src.Get(ctx, id)
	done, err := src.Update(ctx, id, sources.MoveEdit(model.MoveApprove, sources.Human{Actor: "olga", Expect: seen.Version}))
	if err != nil {
		t.Fatal(err)
	}
	if token, expires, doneAt := lockOf(id); done.RawStatus != "Done" || token != "[]" || expires != nil || doneAt == nil {
		t.Fatalf("approve left %s, Lock Token %s, Lock Expires %v, Done At %v", done.RawStatus, token, expires, doneAt)
	}
	id = skillPage(t, emu, db, title("sent back"), status("Review"),
		`"Lock Token":{"rich_text":[{"text":{"content":"t-old"}}]}`, `"Lock Expires":{"date":{"start":"`+stale+`"}}`)
	seen, _ = src.Get(ctx, id)
	back, err := src.Update(ctx, id, sources.MoveEdit(model.MoveRework, sources.Human{Actor: "olga", Reason: "keep comments", Expect: seen.Version}))
	if err != nil {
		t.Fatal(err)
	}
	if token, expires, _ := lockOf(id); back.RawStatus != "Ready" || token != "[]" || expires != nil {
		t.Fatalf("rework left %s, Lock Token %s, Lock Expires %v", back.RawStatus, token, expires)
	}
}

// Where the database has the Parent-task relation, each sub-task names its
// parent, so the dashboard's detail lists a parent's sub-tasks.
func TestTodaysSubtasksNameTheirParent(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	parent := skillPage(t, emu, db, title("parent"), status("Ready"))
	var kids []string
	for i, st := range []string{"Done", "Ready"} {
		kids = append(kids, skillPage(t, emu, db, title(fmt.Sprint("criterion ", i)), status(st), `"Parent-task":{"relation":[{"id":"`+parent+`"}]}`))
	}
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	index := model.SubtaskIndex{}
	var p *model.Task
	for _, task := range d.Tasks {
		index.Add(task)
		if task.ID == parent {
			p = task
		}
	}
	var got []string
	for _, s := range index.Of(p) {
		got = append(got, s.ID)
	}
	slices.Sort(got)
	slices.Sort(kids)
	if !slices.Equal(got, kids) || index.Open(p) != 1 {
		t.Fatalf("sub-tasks %v (open %d), want %v (open 1)", got, index.Open(p), kids)
	}
}

// The task_id Notion prints (TASK-3) addresses a task in every operation,
// as the page id does: holder writes, comments, edits and a person's
// actions all resolve it the one way Get and Claim do.
func TestThePrintedTaskIDAddressesEveryOperation(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	id := skillPage(t, emu, db, title("by key"), status("Ready"))
	seen, err := src.Get(ctx, id)
	if err != nil || !strings.HasPrefix(seen.Key, "TASK-") {
		t.Fatalf("the page reads key %q: %v", seen.Key, err)
	}
	key := seen.Key
	step := func(what string) func(*model.Task, error) *model.Task {
		return func(got *model.Task, err error) *model.Task {
			t.Helper()
			if err != nil {
				t.Fatalf("%s %s: %v", what, key, err)
			}
			if got != nil && got.ID != id {
				t.Fatalf("%s %s wrote page %s, want %s", what, key, got.ID, id)
			}
			return got
		}
	}
	held := step("claim")(src.Claim(ctx, key, sources.ClaimRequest{Agent: "A", RunID: "r1"}))
	tok := held.Claim().Token
	step("heartbeat")(src.Heartbeat(ctx, key, tok, time.Hour))
	step("comment")(nil, src.Comment(ctx, key, sources.Note{Author: "A", Text: "halfway"}))
	renamed := "by key, renamed"
	step("update")(src.Update(ctx, key, sources.Edit{Actor: "A", Token: tok, Title: &renamed}))
	blocked := step("block")(src.Finish(ctx, key, tok, sources.Outcome{State: model.StateBlocked, Reason: "waiting on keys", Writer: "A"}))
	taken := step("takeover")(src.Takeover(ctx, key, sources.Human{Actor: "olga", Reason: "mine", Expect: blocked.Version}))
	released := step("force-release")(src.ForceRelease(ctx, key, sources.Human{Actor: "olga", Reason: "back", Expect: taken.Version}))
	handed := step("handoff")(src.Handoff(ctx, key, sources.Handoff{Human: sources.Human{Actor: "olga", Reason: "for B", Expect: released.Version}, To: "B"}))
	step("cancel")(src.Cancel(ctx, key, sources.Human{Actor: "olga", Reason: "duplicate", Expect: handed.Version}))
	if got, _ := src.Get(ctx, id); got.Title != renamed || got.State != model.StateCanceled {
		t.Fatalf("after every operation by %s the page reads %q in %s", key, got.Title, got.State)
	}
}

// A person finishing their own claim (complete, review, block) leaves the
// audit comment every other human action leaves, naming them.
func TestAPersonsFinishLeavesAnAuditComment(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	for _, a := range []model.Action{model.ActionComplete, model.ActionReview, model.ActionBlock} {
		id := skillPage(t, emu, db, title("mine to "+string(a)), status("Ready"))
		seen, _ := src.Get(ctx, id)
		held, err := src.Takeover(ctx, id, sources.Human{Actor: "olga", Expect: seen.Version})
		if err != nil {
			t.Fatal(err)
		}
		o := sources.Outcome{State: a.Outcome(), Reason: "because " + string(a)}
		if _, err := src.Finish(ctx, id, held.Claim().Token, o); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		notes, err := src.comments(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(notes, func(e note) bool {
			return e.signed && e.Action == string(a) && e.Actor == "olga" && e.Reason == o.Reason
		}) {
			t.Fatalf("%s by a person left the comments %+v", a, notes)
		}
	}
}

// A review's summary goes where today's skill puts it (references/
// pull_policy.md at 75590fd: "Summary → provided summary text"), not into
// Blocker Reason, which the skill keeps for blockers; a database without
// Summary keeps it in Blocker Reason.
func TestAReviewSummaryGoesToSummary(t *testing.T) {
	richText := func(emu *emulator, id, prop string) string {
		pg := emu.raw(t, "GET", "/v1/pages/"+id, "")["properties"].(map[string]any)
		p, ok := pg[prop].(map[string]any)
		if !ok {
			return ""
		}
		var s string
		for _, part := range p["rich_text"].([]any) {
			s += part.(map[string]any)["plain_text"].(string)
		}
		return s
	}
	review := func(emu *emulator, src *Source, id string) {
		t.Helper()
		ctx := context.Background()
		held, err := src.Claim(ctx, id, sources.ClaimRequest{Agent: "A"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Finish(ctx, id, held.Claim().Token, sources.Outcome{State: model.StateReview, Reason: "ready: see PR 12"}); err != nil {
			t.Fatal(err)
		}
	}
	emu, db, cfg := skillDB(t)
	id := skillPage(t, emu, db, title("review me"), status("Ready"))
	review(emu, emu.open(t, cfg), id)
	if sum, blocker := richText(emu, id, "Summary"), richText(emu, id, "Blocker Reason"); sum != "ready: see PR 12" || blocker != "" {
		t.Fatalf("a review wrote Summary %q, Blocker Reason %q", sum, blocker)
	}

	lacking := notionemu.PresetToday()
	lacking.Properties = slices.DeleteFunc(lacking.Properties, func(p notionemu.Property) bool { return p.Name == "Summary" })
	db = emu.database(t, lacking)
	id = skillPage(t, emu, db, title("review me too"), status("Ready"))
	review(emu, emu.open(t, emu.config(db, PresetNtask)), id)
	if blocker := richText(emu, id, "Blocker Reason"); blocker != "ready: see PR 12" {
		t.Fatalf("without Summary a review wrote Blocker Reason %q", blocker)
	}
}
