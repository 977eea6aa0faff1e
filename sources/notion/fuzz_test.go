package notion

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A page as Notion (or a user's odd database) may send it: every parser of
// it must survive anything.
const seedPage = `{"object":"page","id":"p1","created_time":"2026-02-01T02:15:00.000Z","last_edited_time":"2026-02-01T02:16:00.000Z","archived":false,
"parent":{"type":"database_id","database_id":"db"},
"properties":{"Name":{"id":"title","type":"title","title":[{"type":"text","text":{"content":"Design"},"plain_text":"Design"}]},
"ID":{"id":"u","type":"unique_id","unique_id":{"prefix":"TASK","number":42}},
"Status":{"id":"s","type":"select","select":{"name":"IN_PROGRESS"}},
"Claimed By":{"id":"c","type":"select","select":null},
"Agent":{"id":"a","type":"rich_text","rich_text":[{"type":"text","text":{"content":"handoff:ORACLE"},"plain_text":"handoff:ORACLE"}]},
"Priority":{"id":"n","type":"number","number":null},
"Lock Expires":{"id":"e","type":"date","date":{"start":"2026-02-01T02:35:00.000+00:00","end":null}},
"Dependencies":{"id":"d","type":"rollup","rollup":{"type":"number","number":2,"function":"count"}},
"Mystery":{"id":"m","type":"unsupported","unsupported":{}},
"Go":{"id":"b","type":"button","button":{}}}}`

func FuzzDecodePage(f *testing.F) {
	f.Add([]byte(seedPage))
	f.Add([]byte(`{"properties":{"Status":{"type":"select","select":{"name":""}}}}`))
	f.Add([]byte(`{"properties":{"handoff_history":{"type":"rich_text","rich_text":[{"plain_text":"[{\"node\":1}]"}]}}}`))
	f.Add([]byte(`{"properties":{"Priority":{"type":"number","number":1e308}}}`))
	f.Add([]byte(`not json`))
	// Today's notion-task skill: a person, a run, a lock, a parent.
	f.Add([]byte(`{"properties":{"Status":{"type":"status","status":{"name":"In Progress"}},"Assignee":{"type":"people","people":[{"object":"user","id":"u","name":"ntask bot"}]},` +
		`"Agent Run":{"type":"rich_text","rich_text":[{"plain_text":"HUMAN:olga · r"}]},"Lock Token":{"type":"rich_text","rich_text":[{"plain_text":"t"}]},` +
		`"Parent-task":{"type":"relation","relation":[{"id":"p"}]},"Blocker Reason":{"type":"rich_text","rich_text":[{"plain_text":"failed: x"}]},"ClassRank":{"type":"number","number":9}}}`))
	f.Add([]byte(`{"properties":{"Status":{"type":"status","status":{"name":"Ready"}},"Agent Run":{"type":"rich_text","rich_text":[{"plain_text":"handoff:ORACLE"}]}}}`))
	presets := []Mapping{ntask(), claimProtocol(), meshHandoff(), today()}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p notionapi.Page
		if json.Unmarshal(sanitize(raw), &p) != nil {
			return
		}
		for i := range presets {
			task := decodeTask(&presets[i], "fuzz", &p)
			if task.Version == "" {
				t.Fatal("a task without a version")
			}
			if task.Claim().Holder == model.HolderNone && (task.Claim().Token != "" || task.Claim().Name != "") {
				t.Fatalf("an unheld claim keeps lock fields: %+v", task.Claim())
			}
			model.Eligible(task, time.Now())
		}
	})
}

func FuzzSanitize(f *testing.F) {
	f.Add([]byte(seedPage))
	f.Add([]byte(`{"results":[{"properties":{"x":{"type":"button"}}}]}`))
	f.Add([]byte(`{"properties":{"x":7}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := sanitize(raw)
		if json.Valid(raw) && !json.Valid(out) {
			t.Fatalf("sanitize broke valid JSON: %q → %q", raw, out)
		}
	})
}

func FuzzHistory(f *testing.F) {
	f.Add(`[{"node":"SANDMAN","action":"claimed","at":"2026-02-01T02:15:00Z"}]`)
	f.Add(`[{"node":"SANDMAN","action":"claimed","at":"2026-02-01T02:15:00Z","door":"ntask"}]`)
	f.Add(`[{"node":null,"at":12}]`)
	f.Add(`{"node":"x"}`)
	f.Add(`[{"action":"history-trimmed","detail":"7 older entries dropped"},{"node":"a","action":"claimed","reason":"` + strings.Repeat("é𝄞", 120000) + `"}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		events := decodeHistory(raw)
		enc := encodeHistory(events)
		again := decodeHistory(enc)
		if !json.Valid([]byte(enc)) || len(utf16Units(enc)) > historyRoom || len(chunks(enc)) > maxChunks {
			t.Fatalf("the history does not fit one rich text value whole: %d units", len(utf16Units(enc)))
		}
		kept := again
		if len(kept) > 0 && kept[0].Action == actionTrimmed {
			kept = kept[1:]
		}
		if len(kept) > maxHistory {
			t.Fatalf("%d entries kept", len(kept))
		}
		if n := len(events); n > 0 && events[n-1].Action != actionTrimmed && (len(kept) == 0 || kept[len(kept)-1].Action != events[n-1].Action) {
			t.Fatalf("the newest entry was lost: %d → %d", len(events), len(again))
		}
	})
}

func FuzzCursor(f *testing.F) {
	st := pollState{Mark: 1769912100, Full: 1769912100, Seen: map[string]seen{"p": {Version: "v", Edited: 1}}}
	f.Add(string(st.cursor()))
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, c string) {
		if st, ok := decodeCursor(sources.Cursor(c)); ok {
			if back, ok := decodeCursor(st.cursor()); !ok || back.Mark != st.Mark {
				t.Fatalf("cursor round trip lost the watermark: %+v", st)
			}
		}
	})
}

func FuzzAuditNote(f *testing.F) {
	f.Add("takeover", "alice", "agent looping", "to: ORACLE", "")
	f.Add("", "", "", "", "claimdeck · approve · by HUMAN:alice · reason: ship it ·")
	f.Add("review", "carol", "", "v 1a2b", "claimdeck · review · by carol · sig 0123456789abcdef0123456789abcdef")
	key := trailKey("", "secret_token")
	const page = "0123456789abcdef0123456789abcdef"
	f.Fuzz(func(t *testing.T, action, actor, reason, detail, comment string) {
		note := auditNote(model.Action(action), actor, reason, detail, &model.Task{RawStatus: "READY"})
		signed := note + noteSep + sigPart + noteMAC(key, page, note)
		if n, ok := readNote(key, page, signed, time.Time{}); ok && n.signed && n.Action != action && oneLine(action) == action {
			t.Fatalf("action %q read back as %q", action, n.Action)
		}
		// Whatever a caller writes — any text, any name before it — is
		// never read back as claimdeck's event without the key.
		for _, text := range []string{comment, actor + ": " + comment, note, note + noteSep + sigPart + noteMAC(trailKey("", "other"), page, note)} {
			if n, ok := readNote(key, page, text, time.Time{}); ok && n.signed {
				t.Fatalf("an unsigned comment %q was read as claimdeck's %s by %s", text, n.Action, n.Actor)
			}
		}
		// A signed note copied to another page is a comment there.
		if n, ok := readNote(key, "ffffffffffffffffffffffffffffffff", signed, time.Time{}); ok && n.signed {
			t.Fatalf("a note signed for one page was read as claimdeck's on another")
		}
	})
}

func TestChunksRespectNotionsLimits(t *testing.T) {
	for _, s := range []string{"", "short", string(make([]rune, 4500)), "😀😀😀" + string(make([]byte, 3999))} {
		parts := chunks(s)
		joined := ""
		for _, p := range parts {
			if n := len(utf16Units(p.Text.Content)); n > maxChunk {
				t.Fatalf("a chunk of %d UTF-16 units", n)
			}
			joined += p.Text.Content
		}
		if joined != s {
			t.Fatalf("chunks of %d bytes rejoin to %d", len(s), len(joined))
		}
	}
}

// The answers our own layer decodes: pages with their data source parent
// and trash flag, error objects, database data source lists, property
// items. None may panic, and a page is trashed whichever flag says so.
func FuzzDecodeAPI(f *testing.F) {
	f.Add([]byte(`{"object":"page","id":"p","in_trash":true,"parent":{"type":"data_source_id","data_source_id":"ds","database_id":"db"},"properties":{}}`))
	f.Add([]byte(`{"object":"error","status":400,"code":"validation_error","message":"Databases with multiple data sources are not supported in this API version.","request_id":"r","additional_data":{"error_type":"multiple_data_sources_for_database","child_data_source_ids":["a","b"]}}`))
	f.Add([]byte(`{"object":"database","data_sources":[{"id":"a","name":"Tasks"},{"id":"b","name":null}]}`))
	f.Add([]byte(`{"object":"list","results":[],"has_more":false,"type":"property_item","property_item":{"type":"rollup","rollup":{"type":"number","number":30}}}`))
	f.Add([]byte(`{"object":"property_item","type":"formula","formula":{"type":"number","number":null}}`))
	f.Add([]byte(`{"archived":"yes","parent":[]}`))
	f.Add([]byte(`{"object":"data_source","id":"ds","properties":{"Name":{"id":"title","type":"title","title":{}},"Sub-tasks":{"id":"a%3Bb","type":"relation","relation":{"data_source_id":"ds"}},` +
		`"Status":{"id":"s%7D","type":"status","status":{"options":[{"name":"Ready"},{"name":"Done"}],"groups":[{"name":"To-do","option_ids":[]},{"name":"Complete","option_ids":[]}]}}}}`))
	f.Add([]byte(`{"properties":{"Status":{"id":null,"type":"status","status":{"groups":[{"name":null}]}},"x":[]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sc schema
		if json.Unmarshal(sanitize(raw), &sc) == nil {
			m, _ := Preset(PresetNtask)
			m.States[model.StateDone] = "Complete"
			_ = m.bind(sc.Properties, sc.ids)
			_ = m.read()
		}
		var p page
		if json.Unmarshal(sanitize(raw), &p) == nil {
			var flags struct {
				Archived bool `json:"archived"`
				InTrash  bool `json:"in_trash"`
			}
			if json.Unmarshal(raw, &flags) == nil && (flags.Archived || flags.InTrash) && !p.trashed {
				t.Fatalf("a trashed page reads as live: %s", raw)
			}
			decodeTask(&Mapping{Title: "Name", Status: "Status"}, "s", &p.Page)
		}
		var e apiError
		_ = json.Unmarshal(raw, &e)
		_ = e.Error()
		var db struct {
			DataSources []dataSourceRef `json:"data_sources"`
		}
		_ = json.Unmarshal(raw, &db)
		var item propertyItem
		if json.Unmarshal(raw, &item) == nil {
			item.number()
		}
	})
}

func TestAPageInTheTrashUnderTodaysNameIsTrashed(t *testing.T) {
	var p page
	// 2026-03-11 sends only in_trash (https://developers.notion.com/page/changelog).
	if err := json.Unmarshal([]byte(`{"object":"page","id":"p","in_trash":true,"parent":{"type":"data_source_id","data_source_id":"ds","database_id":"db"},"properties":{}}`), &p); err != nil {
		t.Fatal(err)
	}
	if !p.trashed || p.dataSource != "ds" {
		t.Fatalf("trashed %v, data source %q", p.trashed, p.dataSource)
	}
}
