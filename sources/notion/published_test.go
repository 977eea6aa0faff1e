package notion

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
	"github.com/claimdeck/claimdeck/sources/notion/notionspec"
)

// The transport every test of this package sends through refuses what
// Notion's published description does not hold — here the pre-2025 query
// jomei/notionapi sends (POST /v1/databases/{id}/query, Notion-Version
// 2022-06-28) — and the request never reaches the emulator.
func TestARequestOutsideNotionsDescriptionIsRefused(t *testing.T) {
	spec, err := notionspec.Load()
	if err != nil {
		t.Fatal(err)
	}
	e := newEmulator(t)
	db := e.database(t, notionemu.PresetNtask())
	var refused []error
	rt := spec.Transport(e.rt, func(err error) { refused = append(refused, err) })
	u, _ := url.Parse(e.url)
	e.srv.ResetStats()
	client := notionapi.NewClient(notionapi.Token(e.token), notionapi.WithRetry(1),
		notionapi.WithHTTPClient(&http.Client{Transport: redirect{base: u, next: rt}}))
	_, err = client.Database.Query(context.Background(), notionapi.DatabaseID(db), &notionapi.DatabaseQueryRequest{PageSize: 1})
	if err == nil || len(refused) != 1 {
		t.Fatalf("the old query went through: err %v, refusals %v", err, refused)
	}
	if !strings.Contains(err.Error(), "outside Notion's published API description") {
		t.Errorf("the caller's error does not say why: %v", err)
	}
	if n := e.srv.Stats().Requests; n != 0 {
		t.Errorf("the emulator received %d requests, want none", n)
	}
}
