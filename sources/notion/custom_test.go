package notion

import (
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A team's own database: seed 002's protocol under other property names
// and another status vocabulary, mapped in the configuration.
func TestCustomMappingRunsTheProtocolOnRenamedProperties(t *testing.T) {
	ctx := context.Background()
	e := newEmulator(t)
	schema := presetSchema(PresetNtask)
	rename := map[string]string{"Name": "Task", "Status": "State", "Agent": "Owner", "Lock Token": "Fence"}
	for i, p := range schema.Properties {
		if n, ok := rename[p.Name]; ok {
			schema.Properties[i].Name = n
		}
		if p.Name == "Status" {
			schema.Properties[i].Options = []string{"TODO", "DOING", "DONE", "BLOCKED", "REVIEW", "CANCELED", "FAILED"}
		}
	}
	db := e.database(t, schema)
	m, err := Custom{
		Properties: map[string]string{"title": "Task", "status": "State", "holder": "Owner", "token": "Fence"},
		Statuses:   map[string]string{"queued": "TODO", "claimed": "DOING"},
	}.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config(db, "")
	cfg.Mapping = &m
	src := e.open(t, cfg)
	task, err := src.Create(ctx, sources.NewTask{Title: "renamed"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil || held.RawStatus != "DOING" || held.Claim().Name != "SANDMAN" {
		t.Fatalf("claim under the custom mapping: %v %+v", err, held)
	}
	done, err := src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("complete: %v %v", done, err)
	}

	// The same mapping on the unrenamed preset database names what is missing.
	plain := e.database(t, presetSchema(PresetNtask))
	cfg = e.config(plain, "")
	cfg.Mapping = &m
	if _, err := Open(ctx, cfg); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "Fence") {
		t.Fatalf("custom mapping on a database without its properties: %v", err)
	}
}

func TestCustomMappingNamesEveryMistake(t *testing.T) {
	_, err := Custom{
		Base:       PresetNtask,
		Properties: map[string]string{"titel": "Task", "status": ""},
		Statuses:   map[string]string{"wip": "DOING"},
	}.Build()
	if err == nil {
		t.Fatal("a custom mapping with an unknown role and state was accepted")
	}
	for _, want := range []string{`unknown role "titel"`, `unknown state "wip"`, "cannot be switched off", "roles: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := (Custom{Base: "jira"}).Build(); err == nil || !strings.Contains(err.Error(), "jira") {
		t.Fatalf("unknown base preset: %v", err)
	}
}
