package notion

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
)

// CheckWrite checks, without writing, the capabilities Notion lets an
// integration's reads reveal: that the data source can be read (Read
// content) and that a page's comments can be listed (Read comments, off
// by default; without it history is left out). Update content, Insert
// content and Insert comments show only when a write is tried
// (https://developers.notion.com/reference/capabilities): the README
// lists them.
func (s *Source) CheckWrite(ctx context.Context) error {
	const op = "doctor"
	ctx, done := s.begin(ctx)
	defer done()
	var first string
	err := s.api.queryPages(ctx, s.ds, pageQuery{Only: []string{s.m.ids[s.m.Title]}}, func(p *page) bool {
		first = string(p.ID)
		return false // one page is enough to ask for its comments
	})
	if err != nil {
		return s.fail(op, "", err)
	}
	if first == "" || s.m.History != "" {
		return nil
	}
	_, err = s.api.comments(ctx, first, "")
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
		return model.Errorf(model.CodeMisconfigured, op, "", "the integration lacks the Read comments capability (403 %s, request_id %s): turn on Read and Insert comments in the integration's settings, or task history and audit notes are left out", ae.Code, orDash(ae.RequestID))
	}
	return s.failOrNil(op, "", err)
}

// postNote posts a comment once. When the answer is lost the comments are
// re-read, after every attempt: a note with our text from this minute on
// means it landed; otherwise it is posted again, at most claimAttempts
// times in all.
func (s *Source) postNote(ctx context.Context, id, text string) error {
	since := time.Now().Add(-time.Minute)
	for attempt := 1; ; attempt++ {
		err := s.api.comment(ctx, id, chunks(text))
		if err == nil || !ambiguous(ctx, err) {
			return err
		}
		if werr := s.waitAfter(ctx, attempt, err); werr != nil {
			return werr
		}
		// The last attempt is read back too: a note that landed is not
		// reported as failed.
		found, rerr := s.hasNote(ctx, id, text, since)
		if rerr != nil || found {
			return rerr
		}
		if attempt >= claimAttempts {
			return err
		}
	}
}

func (s *Source) hasNote(ctx context.Context, id, text string, since time.Time) (bool, error) {
	cursor := ""
	for {
		res, err := s.api.comments(ctx, id, cursor)
		if err != nil {
			return false, err
		}
		for _, c := range res.Results {
			got := values{"c": &notionapi.RichTextProperty{RichText: c.RichText}}.text("c")
			if c.CreatedTime.After(since) && got == text {
				return true, nil
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return false, nil
		}
		cursor = res.NextCursor
	}
}
