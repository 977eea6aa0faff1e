package notionspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Properties holds page writes' properties to the data source's own
// schema, which Notion's published description leaves open (a page's
// properties are any object there): the property exists and can be
// written, its value has the shape Notion's reference gives its type, a
// status names one of its options (a select's new option Notion creates,
// as long as the name can be one), a date is an ISO 8601 date or
// date-time. It learns each data source's schema, and which data
// source each page belongs to, from the answers it sees. It is safe for
// concurrent use.
type Properties struct {
	mu      sync.Mutex
	sources map[string]map[string]propertyDef // data source id → property name → its definition
	pages   map[string]string                 // page id → its data source
	checked int
}

type propertyDef struct {
	Name, ID, Type string
	Options        []string // a select's, multi-select's or status's option names
}

// NewProperties knows no data source yet.
func NewProperties() *Properties {
	return &Properties{sources: map[string]map[string]propertyDef{}, pages: map[string]string{}}
}

// Checked is how many page properties have been held to a schema.
func (p *Properties) Checked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checked
}

// readOnly are the property types Notion computes: a page write cannot
// set them.
var readOnly = []string{"formula", "rollup", "created_time", "created_by", "last_edited_time", "last_edited_by", "unique_id", "verification", "button"}

// Learn reads one answer's body: a data source's schema, a page's parent,
// or a list of pages. Anything else is ignored.
func (p *Properties) Learn(body []byte) {
	var obj struct {
		Object     string                     `json:"object"`
		ID         string                     `json:"id"`
		Properties map[string]json.RawMessage `json:"properties"`
		Parent     struct {
			DataSourceID string `json:"data_source_id"`
		} `json:"parent"`
		Results []json.RawMessage `json:"results"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return
	}
	switch obj.Object {
	case "data_source":
		defs := map[string]propertyDef{}
		for name, raw := range obj.Properties {
			var d struct {
				ID, Type string
			}
			if json.Unmarshal(raw, &d) != nil {
				continue
			}
			def := propertyDef{Name: name, ID: d.ID, Type: d.Type}
			var byType map[string]json.RawMessage
			var opts struct {
				Options []struct{ Name string } `json:"options"`
			}
			if json.Unmarshal(raw, &byType) == nil && json.Unmarshal(byType[d.Type], &opts) == nil {
				for _, o := range opts.Options {
					def.Options = append(def.Options, o.Name)
				}
			}
			defs[name] = def
		}
		p.mu.Lock()
		p.sources[obj.ID] = defs
		p.mu.Unlock()
	case "page":
		if obj.Parent.DataSourceID != "" {
			p.mu.Lock()
			p.pages[obj.ID] = obj.Parent.DataSourceID
			p.mu.Unlock()
		}
	case "list":
		for _, r := range obj.Results {
			p.Learn(r)
		}
	}
}

// Check judges one request: a page create's or update's properties
// against its data source's schema. Other requests, and pages whose data
// source it has not learned (with more than one known), pass.
func (p *Properties) Check(method, path string, body []byte) error {
	var source string
	switch {
	case method == http.MethodPost && path == "/v1/pages":
	case method == http.MethodPatch && strings.HasPrefix(path, "/v1/pages/") && strings.Count(path, "/") == 3:
	default:
		return nil
	}
	var req struct {
		Parent struct {
			DataSourceID string `json:"data_source_id"`
		} `json:"parent"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("%s %s: the body is not a JSON object (%v)", method, path, err)
	}
	if len(req.Properties) == 0 {
		return nil
	}
	p.mu.Lock()
	source = req.Parent.DataSourceID
	if source == "" {
		source = p.pages[strings.TrimPrefix(path, "/v1/pages/")]
	}
	if source == "" && len(p.sources) == 1 {
		for id := range p.sources {
			source = id
		}
	}
	defs, known := p.sources[source]
	p.mu.Unlock()
	if !known {
		return nil
	}
	names := make([]string, 0, len(req.Properties))
	for name := range req.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []string
	for _, name := range names {
		def, ok := defs[name]
		if !ok {
			for _, d := range defs {
				if d.ID != "" && d.ID == name {
					def, ok = d, true
				}
			}
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("property %q is not in data source %s's schema", name, source))
			continue
		}
		if err := checkValue(def, req.Properties[name]); err != nil {
			errs = append(errs, fmt.Sprintf("property %q (%s): %v", def.Name, def.Type, err))
		}
	}
	p.mu.Lock()
	p.checked += len(names)
	p.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("%s %s does not fit the data source's schema: %s", method, path, strings.Join(errs, "; "))
	}
	return nil
}

// checkValue holds one property value to its type's shape.
func checkValue(def propertyDef, raw json.RawMessage) error {
	if slices.Contains(readOnly, def.Type) {
		return fmt.Errorf("Notion computes a %s: a page write cannot set it", def.Type)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return fmt.Errorf("the value must be an object keyed by the property's type, {%q: …}", def.Type)
	}
	if t, ok := v["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || s != def.Type {
			return fmt.Errorf("its type says %s, the schema %s", t, def.Type)
		}
	}
	for k := range v {
		if k != "type" && k != "id" && k != def.Type {
			return fmt.Errorf("a %s value has no %q: write {%q: …}", def.Type, k, def.Type)
		}
	}
	val, ok := v[def.Type]
	if !ok {
		return fmt.Errorf("the value has no %q", def.Type)
	}
	switch def.Type {
	case "title", "rich_text":
		return checkRichText(val)
	case "number":
		var n *float64
		return shape(val, &n, "a number or null")
	case "checkbox":
		var b bool
		return shape(val, &b, "true or false")
	case "url", "email", "phone_number":
		var s *string
		return shape(val, &s, "a string or null")
	case "select", "status":
		var o *struct {
			Name *string `json:"name"`
			ID   *string `json:"id"`
		}
		if err := shape(val, &o, `{"name": an option} or null`); err != nil || o == nil {
			return err
		}
		if o.Name == nil && o.ID == nil {
			return fmt.Errorf(`an option is named by "name" or "id"`)
		}
		if o.Name != nil {
			return checkOption(def, *o.Name)
		}
	case "multi_select":
		var os []struct {
			Name *string `json:"name"`
		}
		if err := shape(val, &os, `a list of {"name": an option}`); err != nil {
			return err
		}
		for _, o := range os {
			if o.Name == nil {
				continue
			}
			if err := checkOption(def, *o.Name); err != nil {
				return err
			}
		}
	case "date":
		return checkDate(val)
	case "people", "relation", "files":
		var l []json.RawMessage
		return shape(val, &l, "a list")
	}
	return nil
}

// checkOption: a status names one of its options; a select or
// multi-select may name a new one, which Notion adds to the schema, if
// the name can be an option (not empty, no comma, at most 100
// characters).
func checkOption(def propertyDef, name string) error {
	switch {
	case slices.Contains(def.Options, name):
		return nil
	case def.Type == "status":
		return fmt.Errorf("%q is not one of its options (%s): a status option must exist", name, strings.Join(def.Options, ", "))
	case strings.TrimSpace(name) == "" || strings.Contains(name, ",") || len([]rune(name)) > 100:
		return fmt.Errorf("%q cannot be an option: a new one is not empty, has no comma and at most 100 characters", name)
	}
	return nil
}

func shape(raw json.RawMessage, into any, want string) error {
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("the value must be %s, not %s", want, clip(raw))
	}
	return nil
}

func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "…"
	}
	return string(raw)
}

// richTextLimit is Notion's limit on one rich text object's content.
const richTextLimit = 2000

func checkRichText(raw json.RawMessage) error {
	var parts []struct {
		Text *struct {
			Content *string `json:"content"`
		} `json:"text"`
	}
	if err := shape(raw, &parts, `a list of rich text objects ({"text": {"content": …}})`); err != nil {
		return err
	}
	for i, part := range parts {
		if part.Text == nil {
			continue // a mention or an equation
		}
		if part.Text.Content == nil {
			return fmt.Errorf("rich text %d has no text.content", i)
		}
		if n := len([]rune(*part.Text.Content)); n > richTextLimit {
			return fmt.Errorf("rich text %d is %d characters, over Notion's %d", i, n, richTextLimit)
		}
	}
	return nil
}

// isoDate is an ISO 8601 date, or date-time with an optional offset, as
// Notion's reference gives a date property's start and end.
var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$`)

func checkDate(raw json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	var d map[string]json.RawMessage
	if err := shape(raw, &d, `{"start": …, "end": …} or null`); err != nil {
		return err
	}
	for k := range d {
		if k != "start" && k != "end" && k != "time_zone" {
			return fmt.Errorf("a date has start, end and time_zone, not %q", k)
		}
	}
	if _, ok := d["start"]; !ok {
		return fmt.Errorf("a date needs a start")
	}
	for _, k := range []string{"start", "end"} {
		v, ok := d[k]
		if !ok || k == "end" && bytes.Equal(v, []byte("null")) {
			continue
		}
		var s string
		if err := shape(v, &s, "an ISO 8601 date string"); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if !isoDate.MatchString(s) || !validDate(s) {
			return fmt.Errorf("%s %q is not an ISO 8601 date or date-time (2026-03-11 or 2026-03-11T09:30:00Z)", k, s)
		}
	}
	return nil
}

// validDate checks the calendar and the clock: 2026-02-30 or T25:00 has
// the shape and no instant.
func validDate(s string) bool {
	if len(s) >= 16 {
		_, err := time.Parse("2006-01-02T15:04", s[:16])
		return err == nil
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// Handler holds each request to the schema before next gets it (one that
// does not fit is answered 400 validation_error, as Notion answers, and
// reported to fail) and learns from every answer.
func (p *Properties) Handler(next http.Handler, fail func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := drain(&r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := p.Check(r.Method, r.URL.Path, body); err != nil {
			fail(err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": 400, "code": "validation_error", "message": err.Error()})
			return
		}
		tee := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(tee, r)
		p.Learn(tee.body.Bytes())
	})
}

// drain reads a body whole and puts an unread copy in its place.
func drain(body *io.ReadCloser) ([]byte, error) {
	if *body == nil || *body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(*body)
	(*body).Close()
	*body = readCloser{bytes.NewReader(b)}
	return b, err
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}
