package notionemu

import (
	"fmt"
	"net/http"
	"time"
)

// container is a database as Notion models it since 2025-09-03: "a
// container for one or more data sources", each with its own schema and
// pages (https://developers.notion.com/docs/upgrade-guide-2025-09-03).
type container struct {
	id      string
	title   string
	created time.Time
	sources []*database     // oldest first
	shared  map[string]bool // tokens the database is shared with
}

// sole is the database's only data source. Under versions before
// 2025-09-03 "Database read, write, or query" fails once a database has
// several, with 400 validation_error "Databases with multiple data sources
// are not supported in this API version." and the child data source ids in
// additional_data (upgrade guide; the shape is the one @notionhq/client's
// tests decode: error_type, database_id, child_data_source_ids,
// minimum_api_version).
func (c *container) sole() (*database, error) {
	if len(c.sources) == 1 {
		return c.sources[0], nil
	}
	ids := make([]string, len(c.sources))
	for i, ds := range c.sources {
		ids[i] = ds.id
	}
	e := validationError("Databases with multiple data sources are not supported in this API version.")
	e.Additional = map[string]any{
		"error_type":            "multiple_data_sources_for_database",
		"database_id":           c.id,
		"child_data_source_ids": ids,
		"minimum_api_version":   DataSourceVersion,
	}
	return nil, e
}

// objectJSON renders the database as GET /v1/databases/{id} returns it
// under 2025-09-03 and later: "data_sources" lists each child's id and
// name (https://developers.notion.com/reference/database).
func (c *container) objectJSON(owner, version string) map[string]any {
	list := make([]any, len(c.sources))
	for i, ds := range c.sources {
		list[i] = map[string]any{"id": ds.id, "name": ds.title}
	}
	return trash(version, false, map[string]any{
		"object":           "database",
		"id":               c.id,
		"created_time":     notionTime(c.created),
		"last_edited_time": notionTime(c.created),
		"created_by":       userJSON(owner),
		"last_edited_by":   userJSON(owner),
		"title":            textArrayJSON(plainText(c.title)),
		"description":      []any{},
		"icon":             nil,
		"cover":            nil,
		"data_sources":     list,
		"parent":           map[string]any{"type": "workspace", "workspace": true},
		"url":              notionURL(c.id),
		"public_url":       nil,
		"is_inline":        false,
	})
}

// trash sets the trash flag of an object the way version names it: both
// "archived" and "in_trash" until 2026-03-11, which "renamed archived to
// in_trash" (https://developers.notion.com/page/changelog).
func trash(version string, trashed bool, obj map[string]any) map[string]any {
	obj["in_trash"] = trashed
	if version < TrashVersion {
		obj["archived"] = trashed
	}
	return obj
}

// retrieveDataSource answers GET /v1/data_sources/{id}, which exists from
// 2025-09-03 on (https://developers.notion.com/reference/retrieve-a-data-source).
func (s *Server) retrieveDataSource(r *http.Request, token string) (any, error) {
	v := r.Header.Get("Notion-Version")
	if !dataSources(v) {
		return nil, oldVersion(v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ds, err := s.lockedDataSource(r.PathValue("id"), token)
	if err != nil {
		return nil, err
	}
	return ds.objectJSON(s.bots[token], v), nil
}

// queryDataSource answers POST /v1/data_sources/{id}/query, the 2025-09-03
// successor of the database query
// (https://developers.notion.com/reference/query-a-data-source).
func (s *Server) queryDataSource(r *http.Request, token string) (any, error) {
	v := r.Header.Get("Notion-Version")
	if !dataSources(v) {
		return nil, oldVersion(v)
	}
	return s.query(r, token, func() (*database, error) { return s.lockedDataSource(r.PathValue("id"), token) })
}

func oldVersion(v string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: "invalid_request_url",
		Message: fmt.Sprintf("Invalid request URL: data sources need Notion-Version %s or later, not %s.", DataSourceVersion, v)}
}

// Capabilities are what an integration may do beyond reading and writing
// content. Notion's comment capabilities are off until the integration's
// owner turns them on; an endpoint the integration lacks the capability
// for answers 403 restricted_resource
// (https://developers.notion.com/reference/capabilities).
type Capabilities struct {
	ReadComments   bool
	InsertComments bool
}

// AllCapabilities is what AddToken grants.
var AllCapabilities = Capabilities{ReadComments: true, InsertComments: true}

// SetCapabilities replaces a token's capabilities.
func (s *Server) SetCapabilities(token string, c Capabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps[token] = c
}

// allowed checks the token's capability for an endpoint.
func (s *Server) allowed(token, endpoint string) *apiError {
	s.mu.Lock()
	c, set := s.caps[token]
	s.mu.Unlock()
	if !set {
		c = AllCapabilities
	}
	if (endpoint == EndpointCommentList && !c.ReadComments) || (endpoint == EndpointCommentCreate && !c.InsertComments) {
		return &apiError{Status: http.StatusForbidden, Code: "restricted_resource",
			Message: "Insufficient permissions for this endpoint."}
	}
	return nil
}
