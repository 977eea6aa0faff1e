package mesh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// maxRegistrySize bounds what LoadRegistry reads: a registry is a few lines
// per node, and a runaway file must not exhaust memory.
const maxRegistrySize = 4 << 20

// NodeConfig is one entry of the node registry: seed 001's webhook, health,
// last_seen and status, plus the node's bearer token (inline or from an
// environment variable).
type NodeConfig struct {
	Name     string
	Webhook  string // POST /hooks/agent: where notifications go
	Health   string // POST /hooks/health: where pings go
	Token    Token
	TokenEnv string // the variable Token was read from, if any
	LastSeen time.Time
	Status   model.NodeStatus
}

// Registry is a parsed mesh-nodes.json, nodes sorted by name.
type Registry struct {
	Path  string
	Nodes []NodeConfig
}

// Node finds a node by name, case-insensitively: seed 001's codenames are
// upper case but hand-written configs are not always.
func (r *Registry) Node(name string) (NodeConfig, bool) {
	for _, n := range r.Nodes {
		if strings.EqualFold(n.Name, name) {
			return n, true
		}
	}
	return NodeConfig{}, false
}

// Warning is a problem that does not stop the registry from being used.
type Warning struct {
	Path string
	Node string
	Msg  string
}

func (w Warning) String() string {
	if w.Node == "" {
		return w.Path + ": " + w.Msg
	}
	return w.Path + ": node " + w.Node + ": " + w.Msg
}

// RegistryError is a malformed registry: where, which field, and what is
// wrong. It never quotes a value, so a token cannot leak through it.
type RegistryError struct {
	Path      string
	Line, Col int
	Field     string
	Msg       string
}

func (e *RegistryError) Error() string {
	s := fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Col)
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// LoadRegistry reads and parses a registry file, resolves token_env
// variables, and warns about a file that holds tokens but is readable by
// group or others, and about nodes left without a token.
func LoadRegistry(path string) (*Registry, []Warning, error) {
	// The registry may sit in a directory the mesh's nodes share: read it
	// as a shared file (no link, no FIFO, bounded), never quoting it.
	data, info, err := sources.ReadShared(path, sources.SharedRead{What: "mesh registry", Limit: maxRegistrySize})
	if err != nil {
		return nil, nil, err
	}
	reg, err := ParseRegistry(path, data)
	if err != nil {
		return nil, nil, err
	}
	var warns []Warning
	inline := false
	for i := range reg.Nodes {
		n := &reg.Nodes[i]
		if n.TokenEnv != "" && !n.Token.Set() {
			n.Token = Token(os.Getenv(n.TokenEnv))
			if !n.Token.Set() {
				warns = append(warns, Warning{path, n.Name, "token_env " + n.TokenEnv + " is unset or empty"})
			}
			continue
		}
		if n.Token.Set() {
			inline = true
		} else {
			warns = append(warns, Warning{path, n.Name, "no token or token_env: pings and notifications go without a bearer token"})
		}
	}
	if exposed := sources.Exposed(info.Mode()); inline && exposed != "" {
		warns = append(warns, Warning{Path: path, Msg: "holds tokens but " + exposed})
	}
	return reg, warns, nil
}

// ParseRegistry parses seed 001's registry format. Unknown fields are
// ignored, so files the seed's own scripts write stay readable; a malformed
// file gives a *RegistryError naming the line, column and field.
func ParseRegistry(path string, data []byte) (*Registry, error) {
	p := &regParser{path: path, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	// The streaming decoder reports syntax errors at offsets relative to the
	// value it was reading; a whole-document check gives the true offset,
	// and the walk below still knows which field it was in.
	var syn *json.SyntaxError
	if err := json.Unmarshal(data, new(json.RawMessage)); errors.As(err, &syn) {
		p.syntax = syn
	}
	reg, err := p.registry()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(reg.Nodes, func(a, b NodeConfig) int { return strings.Compare(a.Name, b.Name) })
	return reg, nil
}

// regParser walks the registry token by token so that every error, syntax
// or semantic, can point at the line it is on.
type regParser struct {
	path string
	data []byte
	dec  *json.Decoder
	// syntax is the document's first syntax error, if it has one.
	syntax *json.SyntaxError
}

func (p *regParser) registry() (*Registry, error) {
	reg := &Registry{Path: p.path}
	if err := p.open("", "the registry must be a JSON object"); err != nil {
		return nil, err
	}
	seen := false
	for p.dec.More() {
		key, at, err := p.key("")
		if err != nil {
			return nil, err
		}
		if key == "nodes" && seen {
			return nil, p.errAt(at, "nodes", "duplicate: a second \"nodes\" would silently replace the first")
		}
		if key != "nodes" {
			if err := p.skip(key); err != nil {
				return nil, err
			}
			continue
		}
		seen = true
		if reg.Nodes, err = p.nodes(); err != nil {
			return nil, err
		}
	}
	if err := p.close(""); err != nil {
		return nil, err
	}
	end := p.dec.InputOffset()
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, p.errAt(p.valueStart(end), "", "data after the registry object")
	}
	if !seen {
		return nil, p.errAt(0, "nodes", `missing: the registry needs a "nodes" object`)
	}
	return reg, nil
}

func (p *regParser) nodes() ([]NodeConfig, error) {
	if err := p.open("nodes", "must be an object of node name → node"); err != nil {
		return nil, err
	}
	var nodes []NodeConfig
	names := map[string]bool{}
	for p.dec.More() {
		name, at, err := p.key("nodes")
		if err != nil {
			return nil, err
		}
		field := "nodes." + name
		switch folded := strings.ToUpper(name); {
		case strings.TrimSpace(name) == "":
			return nil, p.errAt(at, field, "a node needs a non-empty name")
		case strings.ContainsFunc(name, unicode.IsControl):
			// Names go on screen; control characters could drive the terminal.
			return nil, p.errAt(at, "nodes", "a node name holds control characters")
		case names[folded]:
			return nil, p.errAt(at, field, "duplicate node")
		default:
			names[folded] = true
		}
		n, err := p.node(name, at)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, p.close("nodes")
}

func (p *regParser) node(name string, start int64) (NodeConfig, error) {
	n := NodeConfig{Name: name}
	base := "nodes." + name
	if err := p.open(base, "must be an object"); err != nil {
		return n, err
	}
	for p.dec.More() {
		key, at, err := p.key(base)
		if err != nil {
			return n, err
		}
		field := base + "." + key
		var s string
		switch key {
		case "webhook", "health", "last_seen", "status", "token", "token_env":
			if s, err = p.str(field, at); err != nil {
				return n, err
			}
		default:
			if err := p.skip(field); err != nil {
				return n, err
			}
			continue
		}
		switch key {
		case "webhook", "health":
			if s != "" {
				if msg := checkURL(s); msg != "" {
					return n, p.errAt(at, field, msg)
				}
			}
			if key == "webhook" {
				n.Webhook = s
			} else {
				n.Health = s
			}
		case "last_seen":
			if s != "" {
				if n.LastSeen, err = time.Parse(time.RFC3339, s); err != nil {
					return n, p.errAt(at, field, "not an RFC 3339 time")
				}
			}
		case "status":
			n.Status = parseNodeStatus(s)
		case "token":
			n.Token = Token(s)
		case "token_env":
			n.TokenEnv = s
		}
	}
	if err := p.close(base); err != nil {
		return n, err
	}
	if n.Health == "" {
		return n, p.errAt(start, base+".health", "missing: every node needs a health URL")
	}
	if n.Token.Set() && n.TokenEnv != "" {
		return n, p.errAt(start, base, "token and token_env are both set; keep one")
	}
	return n, nil
}

// checkURL says what is wrong with a webhook or health URL, or "".
func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "want an absolute http or https URL"
	}
	if u.User != nil {
		return "credentials in a URL are not allowed; use token or token_env"
	}
	return ""
}

// parseNodeStatus reads the status the seed's scripts write. Anything it does
// not know is "unknown" rather than an error: the poller will find out.
func parseNodeStatus(s string) model.NodeStatus {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "healthy", "up", "ok":
		return model.NodeHealthy
	case "degraded":
		return model.NodeDegraded
	case "down":
		return model.NodeDown
	}
	return model.NodeUnknown
}

func (p *regParser) open(field, msg string) error {
	at := p.valueStart(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		return p.wrap(err, field)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errAt(at, field, msg)
	}
	return nil
}

func (p *regParser) close(field string) error {
	if _, err := p.dec.Token(); err != nil {
		return p.wrap(err, field)
	}
	return nil
}

// key reads an object key and returns where it starts.
func (p *regParser) key(field string) (string, int64, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return "", 0, p.wrap(err, field)
	}
	key, _ := tok.(string) // inside an object the decoder only yields string keys
	// The decoder stops just past the closing quote; walk back to the
	// opening one, which is the first quote no backslash escapes.
	at := p.dec.InputOffset() - 1
	for at > 0 {
		at--
		if p.data[at] == '"' && !escaped(p.data, at) {
			break
		}
	}
	return key, at, nil
}

// escaped reports whether the byte at i follows an odd run of backslashes.
func escaped(data []byte, i int64) bool {
	n := 0
	for i > 0 && data[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// str reads a string value; null counts as empty. A value of another type
// is reported at its key: the decoder's own offset for it is relative to the
// value, not to the file.
func (p *regParser) str(field string, at int64) (string, error) {
	var s *string
	if err := p.dec.Decode(&s); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return "", p.errAt(at, field, "want a string, got "+typ.Value)
		}
		return "", p.wrap(err, field)
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

func (p *regParser) skip(field string) error {
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return p.wrap(err, field)
	}
	return nil
}

// syntaxProblem says what is wrong without the decoder's quote of the
// offending byte: the line and column point at it.
func syntaxProblem(err *json.SyntaxError) string {
	if strings.HasPrefix(err.Error(), "unexpected end") {
		return "invalid JSON: " + err.Error()
	}
	return "invalid JSON"
}

// wrap turns a decoder error into a RegistryError at the offset it names.
func (p *regParser) wrap(err error, field string) error {
	if p.syntax != nil {
		// The offset is just past the offending byte; point at the byte.
		return p.errAt(p.syntax.Offset-1, field, syntaxProblem(p.syntax))
	}
	// Never the decoder's own words: they can quote the file.
	return p.errAt(p.dec.InputOffset(), field, "invalid JSON")
}

// valueStart skips the blanks and the colon the decoder has not consumed
// yet, so that an error points at the value rather than before it.
func (p *regParser) valueStart(off int64) int64 {
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n:", p.data[off]) >= 0 {
		off++
	}
	return off
}

func (p *regParser) errAt(off int64, field, msg string) *RegistryError {
	line, col := position(p.data, off)
	return &RegistryError{Path: p.path, Line: line, Col: col, Field: field, Msg: msg}
}

// position turns a byte offset into a 1-based line and column (in bytes).
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
