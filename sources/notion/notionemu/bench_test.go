package notionemu

import (
	"fmt"
	"testing"
)

// BenchmarkQueryEligible runs seed 002's eligibility filter and pull order
// over a 1,000-task database, the size the Notion targets name.
func BenchmarkQueryEligible(b *testing.B) {
	h := newHarness(b)
	statuses := []string{"READY", "IN_PROGRESS", "DONE", "BLOCKED"}
	for i := range 1000 {
		h.createTask(fmt.Sprintf(`{"Name":{"title":[{"text":{"content":"t%d"}}]},"Status":{"select":{"name":%q}},"Priority":{"number":%d},"Class":{"select":{"name":"STANDARD"}}}`,
			i, statuses[i%len(statuses)], i%10))
	}
	body := `{"filter":{"and":[{"property":"Status","select":{"equals":"READY"}},{"property":"Claimed By","select":{"does_not_equal":"HUMAN"}}]},
		"sorts":[{"property":"Class","direction":"ascending"},{"property":"Priority","direction":"descending"},{"timestamp":"last_edited_time","direction":"ascending"}]}`
	b.ReportAllocs()
	for b.Loop() {
		if r := h.call("POST", "/v1/databases/"+h.db+"/query", body); r.Status != 200 {
			b.Fatalf("status %d", r.Status)
		}
	}
}

// BenchmarkPageUpdate is one claim: four properties written, page returned.
func BenchmarkPageUpdate(b *testing.B) {
	h := newHarness(b)
	id := h.createTask(titled("claimed"))["id"].(string)
	body := `{"properties":{"Status":{"select":{"name":"IN_PROGRESS"}},"Claimed By":{"select":{"name":"AGENT"}},
		"Lock Token":{"rich_text":[{"text":{"content":"9b2f6c1e"}}]},"Lock Expires":{"date":{"start":"2026-02-01T02:35:00Z"}}}}`
	b.ReportAllocs()
	for b.Loop() {
		if r := h.call("PATCH", "/v1/pages/"+id, body); r.Status != 200 {
			b.Fatalf("status %d", r.Status)
		}
	}
}
