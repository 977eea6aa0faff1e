package notionemu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/jomei/notionapi"
)

// redirect sends every request to the emulator: jomei/notionapi has no
// base-URL option, only a replaceable HTTP client.
type redirect struct {
	target *url.URL
	next   http.RoundTripper
}

func (rt redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = rt.target.Scheme, rt.target.Host, rt.target.Host
	return rt.next.RoundTrip(out)
}

// newLibraryClient serves the harness's emulator on 127.0.0.1 and returns
// a jomei/notionapi client pointed at it.
func newLibraryClient(t *testing.T, h *harness) *notionapi.Client {
	t.Helper()
	ts := httptest.NewServer(h.srv)
	t.Cleanup(ts.Close)
	target, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	rt := redirect{target: target, next: ts.Client().Transport}
	return notionapi.NewClient(testToken, notionapi.WithHTTPClient(&http.Client{Transport: rt}), notionapi.WithRetry(1))
}

func text(s string) []notionapi.RichText {
	return []notionapi.RichText{{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: s}}}
}

func TestDrivenByNotionapi(t *testing.T) {
	h := newHarness(t)
	client := newLibraryClient(t, h)
	ctx := context.Background()
	dbID := notionapi.DatabaseID(h.db)

	db, err := client.Database.Get(ctx, dbID)
	if err != nil {
		t.Fatalf("Database.Get: %v", err)
	}
	if cfg, ok := db.Properties["Status"].(*notionapi.SelectPropertyConfig); !ok || len(cfg.Select.Options) != 6 {
		t.Fatalf("Status schema %#v", db.Properties["Status"])
	}

	for i := range 250 {
		status := "READY"
		if i%5 == 0 {
			status = "DONE"
		}
		_, err := client.Page.Create(ctx, &notionapi.PageCreateRequest{
			Parent: notionapi.Parent{Type: notionapi.ParentTypeDatabaseID, DatabaseID: dbID},
			Properties: notionapi.Properties{
				"Name":     notionapi.TitleProperty{Title: text(fmt.Sprintf("task %03d", i))},
				"Status":   notionapi.SelectProperty{Select: notionapi.Option{Name: status}},
				"Priority": notionapi.NumberProperty{Number: float64(i % 10)},
			},
		})
		if err != nil {
			t.Fatalf("Page.Create %d: %v", i, err)
		}
	}

	// 200 READY tasks, highest priority first, fetched 100 at a time.
	var ready []*notionapi.Page
	request := &notionapi.DatabaseQueryRequest{
		Filter: notionapi.AndCompoundFilter{
			notionapi.PropertyFilter{Property: "Status", Select: &notionapi.SelectFilterCondition{Equals: "READY"}},
			notionapi.PropertyFilter{Property: "Claimed By", Select: &notionapi.SelectFilterCondition{IsEmpty: true}},
		},
		Sorts: []notionapi.SortObject{
			{Property: "Priority", Direction: notionapi.SortOrderDESC},
			{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderASC},
		},
	}
	for {
		res, err := client.Database.Query(ctx, dbID, request)
		if err != nil {
			t.Fatalf("Database.Query: %v", err)
		}
		for i := range res.Results {
			ready = append(ready, &res.Results[i])
		}
		if !res.HasMore {
			break
		}
		request.StartCursor = res.NextCursor
	}
	if len(ready) != 200 {
		t.Fatalf("%d READY tasks, want 200", len(ready))
	}
	first := ready[0]
	if p := first.Properties["Priority"].(*notionapi.NumberProperty).Number; p != 9 {
		t.Errorf("first task priority %v, want 9", p)
	}
	if id := first.Properties["ID"].(*notionapi.UniqueIDProperty).UniqueID; id.Prefix == nil || *id.Prefix != "TASK" || id.Number < 1 {
		t.Errorf("unique id %+v", id)
	}

	// Claim it the way seed 002 does, then re-read with a page GET.
	pageID := notionapi.PageID(first.ID)
	expires := notionapi.Date(h.clock.Now().Add(20 * time.Minute))
	_, err = client.Page.Update(ctx, pageID, &notionapi.PageUpdateRequest{Properties: notionapi.Properties{
		"Status":       notionapi.SelectProperty{Select: notionapi.Option{Name: "IN_PROGRESS"}},
		"Claimed By":   notionapi.SelectProperty{Select: notionapi.Option{Name: "AGENT"}},
		"Lock Token":   notionapi.RichTextProperty{RichText: text("9b2f6c1e")},
		"Lock Expires": notionapi.DateProperty{Date: &notionapi.DateObject{Start: &expires}},
	}})
	if err != nil {
		t.Fatalf("Page.Update: %v", err)
	}
	got, err := client.Page.Get(ctx, pageID)
	if err != nil {
		t.Fatalf("Page.Get: %v", err)
	}
	if tok := got.Properties["Lock Token"].(*notionapi.RichTextProperty).RichText[0].PlainText; tok != "9b2f6c1e" {
		t.Errorf("Lock Token %q", tok)
	}
	if start := time.Time(*got.Properties["Lock Expires"].(*notionapi.DateProperty).Date.Start); !start.Equal(time.Time(expires).Truncate(time.Second)) { // the library sends whole seconds
		t.Errorf("Lock Expires %v, want %v", start, time.Time(expires))
	}

	// The library's empty SelectProperty sends {"select":{"name":""}}, which
	// Notion refuses; clearing a select takes {"select": null}.
	_, err = client.Page.Update(ctx, pageID, &notionapi.PageUpdateRequest{Properties: notionapi.Properties{
		"Claimed By": notionapi.SelectProperty{},
	}})
	var apiErr *notionapi.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "validation_error" {
		t.Fatalf("SelectProperty{} update: %v, want validation_error", err)
	}
	cleared := h.call("PATCH", "/v1/pages/"+string(pageID), `{"properties":{"Claimed By":{"select":null}}}`).mustOK(t).Body
	if v := prop(cleared, "Claimed By"); v != nil {
		t.Errorf("Claimed By after {\"select\": null}: %v", v)
	}

	// The library reads back the cleared select and the page it claimed.
	got, err = client.Page.Get(ctx, pageID)
	if err != nil {
		t.Fatalf("Page.Get after clearing: %v", err)
	}
	if name := got.Properties["Claimed By"].(*notionapi.SelectProperty).Select.Name; name != "" {
		t.Errorf("Claimed By reads %q", name)
	}

	c, err := client.Comment.Create(ctx, &notionapi.CommentCreateRequest{
		Parent:   notionapi.Parent{PageID: pageID},
		RichText: text("claimed by sandman"),
	})
	if err != nil || c.RichText[0].PlainText != "claimed by sandman" {
		t.Fatalf("Comment.Create: %v %+v", err, c)
	}

	// An incremental poll sees only the page edited since the watermark.
	h.clock.Advance(2 * time.Minute)
	since := notionapi.Date(h.clock.Now().Add(-time.Minute))
	_, err = client.Page.Update(ctx, notionapi.PageID(ready[1].ID), &notionapi.PageUpdateRequest{Properties: notionapi.Properties{
		"Priority": notionapi.NumberProperty{Number: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Database.Query(ctx, dbID, &notionapi.DatabaseQueryRequest{
		Filter: notionapi.TimestampFilter{Timestamp: notionapi.TimestampLastEdited, LastEditedTime: &notionapi.DateFilterCondition{OnOrAfter: &since}},
	})
	if err != nil || len(res.Results) != 1 || res.Results[0].ID != ready[1].ID {
		t.Fatalf("incremental poll: %v %d results", err, len(res.Results))
	}
}

// A column of a type the library does not know breaks its decoding of the
// whole database and of every page; the emulator must serve such columns so
// that the claimdeck client can be tested against them.
func TestUnknownPropertyTypesAreServed(t *testing.T) {
	h := newHarness(t)
	schema := PresetNtask()
	schema.Properties = append(schema.Properties,
		Property{Name: "Run", Type: "unsupported", Value: []byte(`{}`)},
		Property{Name: "Formula", Type: "formula", Config: []byte(`{"expression":"1"}`), Value: []byte(`{"type":"number","number":1}`)})
	id, err := h.srv.CreateDatabase(schema, testToken)
	if err != nil {
		t.Fatal(err)
	}
	page := h.call("POST", "/v1/pages", `{"parent":{"database_id":"`+id+`"},"properties":{"Name":{"title":[]}}}`).mustOK(t).Body
	if v := prop(page, "Run"); fmt.Sprint(v) != "map[]" {
		t.Errorf("unsupported value %v", v)
	}
	h.call("PATCH", "/v1/pages/"+page["id"].(string), `{"properties":{"Run":{"unsupported":{}}}}`).wantError(t, 400, "validation_error")

	client := newLibraryClient(t, h)
	if _, err := client.Database.Get(context.Background(), notionapi.DatabaseID(id)); err == nil {
		t.Error("the library decoded a database with an unsupported column; the test no longer shows the pitfall")
	}
	if _, err := client.Page.Get(context.Background(), notionapi.PageID(page["id"].(string))); err == nil {
		t.Error("the library decoded a page with an unsupported value")
	}
}
