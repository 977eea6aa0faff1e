package notion

import (
	"context"
	"net/http"
	"net/url"

	"github.com/jomei/notionapi"
)

// propertyItem is what "Retrieve a page property item" answers for a
// number, a formula or a rollup: one item, or a list whose last page's
// "property_item" carries the rollup's value
// (https://developers.notion.com/reference/retrieve-a-page-property).
type propertyItem struct {
	Type         string          `json:"type"`
	Number       *float64        `json:"number"`
	Formula      *computedNumber `json:"formula"`
	Rollup       *computedNumber `json:"rollup"`
	PropertyItem *propertyItem   `json:"property_item"`
	HasMore      bool            `json:"has_more"`
	NextCursor   string          `json:"next_cursor"`
}

type computedNumber struct {
	Number *float64 `json:"number"`
}

// number is the item's numeric value, if it has one.
func (p *propertyItem) number() (float64, bool) {
	for _, n := range []*float64{p.Number, p.Formula.num(), p.Rollup.num(), p.PropertyItem.num()} {
		if n != nil {
			return *n, true
		}
	}
	return 0, false
}

func (c *computedNumber) num() *float64 {
	if c == nil {
		return nil
	}
	return c.Number
}

func (p *propertyItem) num() *float64 {
	if p == nil {
		return nil
	}
	if n, ok := p.number(); ok {
		return &n
	}
	return nil
}

// openSubtasks counts a task's open sub-tasks exactly: the Subtasks
// rollup, less SubtasksDone where the database counts all sub-tasks and
// the completed ones apart (today's skill).
func (s *Source) openSubtasks(ctx context.Context, pageID string, read int32) (int32, error) {
	all, ok, err := s.exactCount(ctx, pageID, s.m.Subtasks)
	if err != nil || !ok {
		return read, err
	}
	done, _, err := s.exactCount(ctx, pageID, s.m.SubtasksDone)
	if err != nil {
		return 0, err
	}
	return int32(max(0, clampInt(all)-clampInt(done))), nil
}

// exactCount reads a rollup or formula again from the page property
// endpoint, following its pages to the last, which holds the result: the
// page object's rollup is computed over at most 25 relations. ok is false
// for a property that is not computed.
func (s *Source) exactCount(ctx context.Context, pageID, name string) (float64, bool, error) {
	kind := s.m.kinds[name]
	if name == "" || (kind != notionapi.PropertyConfigTypeRollup && kind != notionapi.PropertyConfigTypeFormula) {
		return 0, false, nil
	}
	// Notion's property ids come URL-encoded and go back as they came.
	path := "/v1/pages/" + pageID + "/properties/" + s.m.ids[name]
	cursor := ""
	for {
		var item propertyItem
		p := path
		if cursor != "" {
			p += "?start_cursor=" + url.QueryEscape(cursor)
		}
		if err := s.api.do(ctx, http.MethodGet, p, nil, &item); err != nil {
			return 0, false, err
		}
		if item.HasMore && item.NextCursor != "" {
			cursor = item.NextCursor
			continue
		}
		n, _ := item.number()
		return n, true, nil
	}
}
