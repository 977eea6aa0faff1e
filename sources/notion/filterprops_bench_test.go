package notion

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// BenchmarkList10000FilterProperties lists 10,000 pages as a full poll
// does, with and without filter_properties, in one run: served-B/op is the
// payload the emulator counts for the list (Stats.Bytes), requests/op its
// queries. Without filter_properties is the source before 2026-12-01
// (every property of every page); with it, the properties the source
// reads (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01:
// "Computing every property for every page in a list is slow"). Two
// databases: today's notion-task skill database (notionemu.PresetToday,
// whose properties claimdeck nearly all reads), and the same with six
// columns a team adds that claimdeck does not read.
//
//	go test -run '^$' -bench List10000FilterProperties -benchtime 1x -count 3 ./sources/notion/
func BenchmarkList10000FilterProperties(b *testing.B) {
	const n = 10000
	team := []notionemu.Property{
		{Name: "Notes", Type: notionemu.TypeRichText}, {Name: "Customer", Type: notionemu.TypeRichText},
		{Name: "Reviewer", Type: notionemu.TypePeople}, {Name: "Estimate", Type: notionemu.TypeNumber},
		{Name: "Spec", Type: notionemu.TypeURL}, {Name: "Approved", Type: notionemu.TypeCheckbox},
	}
	for _, board := range []struct {
		name  string
		extra []notionemu.Property
	}{{"today", nil}, {"today+team-columns", team}} {
		b.Run(board.name, func(b *testing.B) {
			emu := newEmulator(b)
			reviewer := "8c3f5d4e-6f70-4182-8c9d-1e2f3a4b5c6d"
			if err := emu.srv.AddUser(reviewer, "Rita Reviewer"); err != nil {
				b.Fatal(err)
			}
			schema := notionemu.PresetToday()
			schema.Properties = append(schema.Properties, notionemu.Property{Name: "ClassRank", Type: notionemu.TypeNumber})
			schema.Properties = append(schema.Properties, board.extra...)
			db := emu.database(b, schema)
			// Pages as a team's board holds them: the claim fields claimdeck
			// reads, a summary, and a link and a due date it does not.
			statuses := []string{"Backlog", "Ready", "In Progress", "Blocked", "Review"}
			props := make([]string, n)
			for i := range n {
				p := fmt.Sprintf(`"Task name":{"title":[{"text":{"content":"task %05d: migrate the billing export"}}]},`+
					`"Status":{"status":{"name":%q}},"Priority":{"number":%d},"Class":{"select":{"name":"Standard"}},`+
					`"Summary":{"rich_text":[{"text":{"content":"Move the nightly billing export to the new bucket and check the totals against last month's."}}]},`+
					`"URL":{"url":"https://example.com/tickets/%d"},"Due":{"date":{"start":"2026-12-%02d"}},`+
					`"Agent Run":{"rich_text":[{"text":{"content":"run-%d"}}]},"Lock Token":{"rich_text":[{"text":{"content":"%08x"}}]}`,
					i, statuses[i%len(statuses)], i%3+1, i, i%28+1, i, i)
				if board.extra != nil {
					p += fmt.Sprintf(`,"Notes":{"rich_text":[{"text":{"content":"Agreed with finance on the 3rd; the old bucket stays read-only for a month."}}]},`+
						`"Customer":{"rich_text":[{"text":{"content":"Acme Corp %d"}}]},"Reviewer":{"people":[{"id":%q}]},`+
						`"Estimate":{"number":%d},"Spec":{"url":"https://example.com/specs/%d"},"Approved":{"checkbox":%t}`,
						i%40, reviewer, i%8+1, i, i%2 == 0)
				}
				props[i] = "{" + p + "}"
			}
			start := time.Now()
			if err := emu.post(db, props); err != nil {
				b.Fatal(err)
			}
			cfg := emu.config(db, PresetNtask)
			cfg.Version = VersionCurrent
			src := emu.open(b, cfg)
			read := slices.Clone(src.api.props)
			sc, err := src.api.schema(context.Background(), src.ds)
			if err != nil {
				b.Fatal(err)
			}
			var left []string
			for name, id := range sc.ids {
				if !slices.Contains(read, id) {
					left = append(left, name)
				}
			}
			slices.Sort(left)
			b.Logf("seeded %d pages in %s; filter_properties names %d of %d properties, leaving out %s",
				n, time.Since(start).Round(time.Millisecond), len(read), len(sc.ids), strings.Join(left, ", "))

			for _, arm := range []struct {
				name  string
				props []string
			}{{"all-properties", nil}, {"filter_properties", read}} {
				b.Run(arm.name, func(b *testing.B) {
					src.api.props = arm.props
					defer func() { src.api.props = read }()
					emu.srv.ResetStats()
					b.ResetTimer()
					for range b.N {
						d, err := src.Poll(context.Background(), "")
						if err != nil || len(d.Tasks) != n {
							b.Fatalf("%v, %d tasks", err, len(d.Tasks))
						}
					}
					b.StopTimer()
					st := emu.srv.Stats()
					b.ReportMetric(float64(st.Bytes)/float64(b.N), "served-B/op")
					b.ReportMetric(float64(st.ByEndpoint[notionemu.EndpointDataSourceQuery])/float64(b.N), "requests/op")
				})
			}
		})
	}
}
