// Package notionspec holds every HTTP request a test sends to Notion (or
// to the emulator) against Notion's published OpenAPI description of API
// 2025-09-03, testdata/notion-openapi.json from npm
// @notionhq/notion-mcp-server 2.5.2 (testdata/SOURCE), amended only where
// testdata/corrections.json cites Notion's reference against it.
//
// It is for tests: nothing in the claimdeck binary imports it. It knows
// the description and HTTP, nothing of claimdeck's sources or schemas.
package notionspec

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

//go:embed testdata/notion-openapi.json
var description []byte

//go:embed testdata/corrections.json
var corrections []byte

// Spec is the description, corrected, ready to judge requests. It is safe
// for concurrent use.
type Spec struct {
	// Version is the Notion-Version the description speaks (its
	// notionVersion parameter's default). Versions are those a request may
	// send: the parameter's enum where a correction gives one (citing the
	// upgrade guide that shows the requests unchanged), else Version alone.
	Version  string
	Versions []string
	// Corrections are the amendments applied, each citing its reference.
	Corrections []Correction

	v validator.Validator
}

// Correction replaces one part of the description where Notion's
// reference contradicts it.
type Correction struct {
	Pointer         string          `json:"pointer"` // RFC 6901, into the description
	Op              string          `json:"op"`      // "replace" (the default) or "add"
	DescriptionSays string          `json:"description_says"`
	ReferenceSays   string          `json:"reference_says"`
	References      []string        `json:"references"`
	Value           json.RawMessage `json:"value"`
}

var (
	loadOnce sync.Once
	loaded   *Spec
	loadErr  error
)

// Load returns the corrected description, built once per process.
func Load() (*Spec, error) {
	loadOnce.Do(func() {
		cs, err := ParseCorrections(corrections)
		if err != nil {
			loadErr = fmt.Errorf("testdata/corrections.json: %w", err)
			return
		}
		loaded, loadErr = New(description, cs)
	})
	return loaded, loadErr
}

// ParseCorrections reads a corrections file: {"corrections": [...]}, each
// with a pointer, what the description and the reference say, at least
// one https reference and a replacement value. Unknown fields are refused.
func ParseCorrections(b []byte) ([]Correction, error) {
	var file struct {
		Corrections []Correction `json:"corrections"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("not a corrections file (want {\"corrections\": [{\"pointer\", \"description_says\", \"reference_says\", \"references\", \"value\"}]}): %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("text after the corrections object")
	}
	for i, c := range file.Corrections {
		var missing []string
		if !strings.HasPrefix(c.Pointer, "/") {
			missing = append(missing, "pointer (a JSON pointer starting with /)")
		}
		if c.Op != "" && c.Op != "replace" && c.Op != "add" {
			missing = append(missing, "a known op (replace or add)")
		}
		if strings.TrimSpace(c.DescriptionSays) == "" {
			missing = append(missing, "description_says")
		}
		if strings.TrimSpace(c.ReferenceSays) == "" {
			missing = append(missing, "reference_says")
		}
		cited := len(c.References) > 0
		for _, r := range c.References {
			cited = cited && strings.HasPrefix(r, "https://")
		}
		if !cited {
			missing = append(missing, "references (https addresses of Notion's reference pages)")
		}
		if len(c.Value) == 0 || string(c.Value) == "null" {
			missing = append(missing, "value")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("correction %d (%q) lacks %s", i+1, c.Pointer, strings.Join(missing, ", "))
		}
	}
	return file.Corrections, nil
}

// New builds a Spec from an OpenAPI description and the corrections to
// apply to it. Every correction's pointer must name a part the
// description has, so that a new description makes stale corrections
// visible.
func New(desc []byte, cs []Correction) (*Spec, error) {
	var doc map[string]any
	if err := json.Unmarshal(desc, &doc); err != nil {
		return nil, fmt.Errorf("the OpenAPI description is not JSON: %v", err)
	}
	for _, c := range cs {
		var val any
		if err := json.Unmarshal(c.Value, &val); err != nil {
			return nil, fmt.Errorf("correction %s: value: %v", c.Pointer, err)
		}
		if err := set(doc, c.Pointer, c.Op == "add", val); err != nil {
			return nil, fmt.Errorf("correction %s: %v", c.Pointer, err)
		}
	}
	version, _ := lookup(doc, "/components/parameters/notionVersion/schema/default").(string)
	if version == "" {
		return nil, fmt.Errorf("the OpenAPI description names no Notion-Version (components.parameters.notionVersion.schema.default)")
	}
	versions := []string{version}
	if enum, ok := lookup(doc, "/components/parameters/notionVersion/schema/enum").([]any); ok {
		versions = versions[:0]
		for _, v := range enum {
			if s, ok := v.(string); ok {
				versions = append(versions, s)
			}
		}
	}
	amended, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	d, err := libopenapi.NewDocument(amended)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI description: %v", err)
	}
	v, errs := validator.NewValidator(d, config.WithStrictMode(), config.WithStrictIgnorePaths(freeForm...))
	if len(errs) > 0 {
		return nil, fmt.Errorf("building a validator from the OpenAPI description: %v", errs[0])
	}
	return &Spec{Version: version, Versions: versions, Corrections: cs, v: v}, nil
}

// freeForm are the request parts the description declares as objects
// without fields — page property values keyed by the user's own property
// names, a query's filter — so that strict mode, which refuses any field
// the description does not name, judges everything else.
var freeForm = []string{"$.body.properties.*", "$.body.properties.**", "$.body.filter.*", "$.body.filter.**"}

// unescape decodes one RFC 6901 reference token.
func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

func lookup(doc any, pointer string) any {
	cur := doc
	for _, tok := range strings.Split(pointer, "/")[1:] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[unescape(tok)]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// set replaces the object member pointer names, which must exist, or
// adds it, which must not: either way a correction that no longer fits
// the description is noticed.
func set(doc map[string]any, pointer string, add bool, val any) error {
	i := strings.LastIndex(pointer, "/")
	parent, ok := lookup(doc, pointer[:i]).(map[string]any)
	if pointer[:i] == "" {
		parent, ok = doc, true
	}
	key := unescape(pointer[i+1:])
	if !ok {
		return fmt.Errorf("the description has no object at %q", pointer[:i])
	}
	if _, ok := parent[key]; !ok && !add {
		return fmt.Errorf("the description has nothing at %q to correct (was the description updated? re-check the correction against it)", pointer)
	} else if ok && add {
		return fmt.Errorf("the description already has %q (was the description updated? re-check the correction against it)", pointer)
	}
	parent[key] = val
	return nil
}

// Check reports whether req lies inside the description: a documented
// method and path, the description's Notion-Version, and parameters and a
// JSON body that fit the operation's schemas, with no undeclared fields.
// The body is read and put back. The error names the request and each
// thing to fix; it never carries header values.
func (s *Spec) Check(req *http.Request) error {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: reading the body: %v", req.Method, req.URL.Path, err)
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	var problems []string
	if got := req.Header.Get("Notion-Version"); !slices.Contains(s.Versions, got) {
		problems = append(problems, fmt.Sprintf("header Notion-Version is %q; the description is of %s", got, strings.Join(s.Versions, " and ")))
	}
	probe := req.Clone(req.Context())
	probe.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := s.v.ValidateHttpRequestSync(probe); !ok {
		problems = append(problems, describe(errs)...)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s is outside Notion's published API description (notionspec/testdata/notion-openapi.json): %s",
		req.Method, req.URL.Path, strings.Join(problems, "; "))
}

// describe turns the validator's errors into one line each: what is wrong
// and where, without echoing the request's values.
func describe(errs []*verrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		line := strings.TrimSpace(e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			line += ": " + strings.TrimSpace(e.Reason)
		}
		var fields []string
		for _, f := range e.SchemaValidationErrors {
			where := f.FieldPath
			if where == "" {
				where = "$"
			}
			fields = append(fields, where+" "+f.Reason)
		}
		sort.Strings(fields)
		if len(fields) > 0 {
			line += " [" + strings.Join(fields, "; ") + "]"
		}
		out = append(out, line)
	}
	return out
}

// Transport checks every request before next sends it. A request outside
// the description is not sent: fail hears why, and the caller gets the
// same error.
func (s *Spec) Transport(next http.RoundTripper, fail func(error)) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if err := s.Check(req); err != nil {
			fail(err)
			return nil, err
		}
		return next.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Handler checks every request before next serves it. A request outside
// the description is answered as Notion answers a malformed one, 400
// validation_error with the reason, and fail hears why.
func (s *Spec) Handler(next http.Handler, fail func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.Check(r); err != nil {
			fail(err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": 400, "code": "validation_error", "message": err.Error()})
			return
		}
		next.ServeHTTP(w, r)
	})
}
