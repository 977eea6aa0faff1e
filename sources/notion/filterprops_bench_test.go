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

// BenchmarkList10000FilterProperties lists 10,000 pages of a database set
// up by today's notion-task skill (notionemu.PresetToday: 27 properties,
// of which the source reads 21) as a full poll does, with and without
// filter_properties, in one run: served-B/op is the payload the emulator
// counts for the list (Stats.Bytes), requests/op its queries. Without
// filter_properties is the source before 2026-12-01 (every property of
// every page); with it, the properties the source reads
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01:
// asking only for them is also "the cheapest list Notion serves").
//
//	go test -run '^$' -bench List10000FilterProperties -benchtime 3x -count 3 ./sources/notion/
func BenchmarkList10000FilterProperties(b *testing.B) {
	const n = 10000
	emu := newEmulator(b)
	schema := notionemu.PresetToday()
	schema.Properties = append(schema.Properties, notionemu.Property{Name: "ClassRank", Type: notionemu.TypeNumber})
	db := emu.database(b, schema)
	// Pages as a team's board holds them: the claim fields claimdeck
	// reads, and a summary, a link and a due date it does not.
	statuses := []string{"Backlog", "Ready", "In Progress", "Blocked", "Review"}
	props := make([]string, n)
	for i := range n {
		props[i] = fmt.Sprintf(`{"Task name":{"title":[{"text":{"content":"task %05d: migrate the billing export"}}]},`+
			`"Status":{"status":{"name":%q}},"Priority":{"number":%d},"Class":{"select":{"name":"Standard"}},`+
			`"Summary":{"rich_text":[{"text":{"content":"Move the nightly billing export to the new bucket and check the totals against last month's."}}]},`+
			`"URL":{"url":"https://example.com/tickets/%d"},"Due":{"date":{"start":"2026-12-%02d"}},`+
			`"Agent Run":{"rich_text":[{"text":{"content":"run-%d"}}]},"Lock Token":{"rich_text":[{"text":{"content":"%08x"}}]}}`,
			i, statuses[i%len(statuses)], i%3+1, i, i%28+1, i, i)
	}
	start := time.Now()
	if err := emu.post(db, props); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d pages in %s", n, time.Since(start).Round(time.Millisecond))
	cfg := emu.config(db, PresetNtask)
	cfg.Version = VersionCurrent
	src := emu.open(b, cfg)
	read := slices.Clone(src.api.props)

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
	b.Logf("filter_properties names %d properties: %s", len(read), strings.Join(read, " "))
}
