package notionemu

import (
	"net/http"
	"slices"
	"time"
)

type comment struct {
	id         string
	page       *page
	discussion string
	created    time.Time
	author     string
	text       []richText
}

func (c *comment) cursor() string { return c.id }

func (c *comment) objectJSON(string) map[string]any {
	return map[string]any{
		"object":           "comment",
		"id":               c.id,
		"parent":           map[string]any{"type": "page_id", "page_id": c.page.id},
		"discussion_id":    c.discussion,
		"created_time":     notionTime(c.created),
		"last_edited_time": notionTime(c.created),
		"created_by":       userJSON(c.author),
		"rich_text":        textArrayJSON(c.text),
	}
}

// createComment adds a comment to a page, {"parent":{"page_id":"…"},
// "rich_text":[…]}, or to an existing discussion, {"discussion_id":"…",
// "rich_text":[…]}.
func (s *Server) createComment(r *http.Request, token string) (any, error) {
	body, err := readObject(r, "parent", "discussion_id", "rich_text")
	if err != nil {
		return nil, err
	}
	text, err := parseTextArray(body["rich_text"], "body.rich_text")
	if err != nil {
		return nil, err
	}
	_, hasParent := body["parent"]
	_, hasDiscussion := body["discussion_id"]
	if hasParent == hasDiscussion {
		return nil, validationError("body failed validation: body should have either `parent` or `discussion_id`.")
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	c := &comment{id: newID(), created: s.stamp(), author: s.bots[token], text: text}
	if hasParent {
		parent, err := asObject(body["parent"], "body.parent")
		if err != nil {
			return nil, err
		}
		pageID, err := asString(parent["page_id"], "body.parent.page_id")
		if err != nil {
			return nil, err
		}
		if c.page, err = s.lockedPage(pageID, token, "body failed validation: body.parent.page_id"); err != nil {
			return nil, err
		}
		c.discussion = newID()
	} else {
		if c.discussion, err = asString(body["discussion_id"], "body.discussion_id"); err != nil {
			return nil, err
		}
		if c.page, err = s.lockedDiscussion(c.discussion, token); err != nil {
			return nil, err
		}
	}
	s.comments[c.page.id] = append(s.comments[c.page.id], c)
	return c.objectJSON(""), nil
}

// lockedDiscussion finds the page a discussion belongs to; the caller holds
// s.mu.
func (s *Server) lockedDiscussion(discussion, token string) (*page, error) {
	for _, thread := range s.comments {
		for _, c := range thread {
			if c.discussion == discussion && c.page.db.shared[token] {
				return c.page, nil
			}
		}
	}
	return nil, notFound("discussion", discussion)
}

// listComments answers GET /v1/comments?block_id=…, oldest first.
func (s *Server) listComments(r *http.Request, token string) (any, error) {
	size, err := pageSizeFromQuery(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lockedPage(r.URL.Query().Get("block_id"), token, "query failed validation: query.block_id")
	if err != nil {
		return nil, err
	}
	thread := s.comments[p.id]
	if cursor := r.URL.Query().Get("start_cursor"); cursor != "" {
		from := slices.IndexFunc(thread, func(c *comment) bool { return c.id == cursor })
		if from < 0 {
			return nil, validationError("start_cursor provided is invalid: %s", cursor)
		}
		thread = thread[from:]
	}
	return listJSON(thread, size, "comment", ""), nil
}
