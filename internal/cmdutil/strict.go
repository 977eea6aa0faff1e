package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

var durationType = reflect.TypeFor[time.Duration]()

// unknownKeys reads a YAML (or JSON) configuration file and names every key
// the Config type does not have, with its line and the nearest known key:
// viper would ignore them, and a typo would silently mean a default.
func UnknownKeys(file string, data []byte) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil // viper reports a file it cannot parse
	}
	var out []string
	walkKeys(doc.Content[0], reflect.TypeFor[Config](), "", func(n *yaml.Node, where string, known []string) {
		msg := fmt.Sprintf("%s:%d: unknown key %q", file, n.Line, n.Value)
		if where != "" {
			msg += " in " + where
		}
		if near := Nearest(n.Value, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		out = append(out, msg)
	})
	return out
}

// walkKeys matches a mapping node against a struct type's mapstructure
// tags, recursing into nested structs and lists of structs. Maps (keys,
// holders, properties) hold the user's own names and are not checked.
func walkKeys(n *yaml.Node, t reflect.Type, where string, unknown func(n *yaml.Node, where string, known []string)) {
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return
	}
	fields := map[string]reflect.Type{}
	var known []string
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ","); tag != "" && f.IsExported() {
			fields[tag] = f.Type
			known = append(known, tag)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		ft, ok := fields[key.Value]
		if !ok {
			unknown(key, where, known)
			continue
		}
		path := key.Value
		if where != "" {
			path = where + "." + key.Value
		}
		switch {
		case ft.Kind() == reflect.Struct:
			walkKeys(val, ft, path, unknown)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && val.Kind == yaml.SequenceNode:
			for j, item := range val.Content {
				walkKeys(item, ft.Elem(), fmt.Sprintf("%s[%d]", path, j), unknown)
			}
		}
	}
}

// nearest is the known key closest to key by edit distance, if any is
// close enough to be a plausible typo.
func Nearest(key string, known []string) string {
	sort.Strings(known)
	return model.Nearest(strings.ToLower(key), known, len(key)/2+2)
}

// checkEnv parses every CLAIMDECK_* variable that sets a typed scalar key,
// so a bad value is reported naming the variable rather than as a fault of
// some configuration file.
func checkEnv() error {
	var problems []string
	envLeaves(reflect.TypeFor[Config](), "", func(key string, t reflect.Type) {
		name := "CLAIMDECK_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return
		}
		var err error
		want := ""
		switch {
		case t == durationType:
			_, err = time.ParseDuration(v)
			want = "a duration such as 10m or 1h30m"
		case t.Kind() == reflect.Bool:
			_, err = strconv.ParseBool(v)
			want = "true or false"
		case t.Kind() == reflect.Int:
			_, err = strconv.Atoi(v)
			want = "a whole number"
		case t.Kind() == reflect.Float64:
			_, err = strconv.ParseFloat(v, 64)
			want = "a number"
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("$%s=%q: want %s", name, v, want))
		}
	})
	if len(problems) > 0 {
		return model.Errorf(model.CodeMisconfigured, "config", "", "%s", strings.Join(problems, "; "))
	}
	return nil
}

// envLeaves calls fn for every scalar key outside lists and maps: the keys
// an environment variable can set.
func envLeaves(t reflect.Type, prefix string, fn func(key string, t reflect.Type)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if tag == "" || !f.IsExported() {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		switch {
		case f.Type.Kind() == reflect.Struct:
			envLeaves(f.Type, key, fn)
		case f.Type.Kind() != reflect.Slice && f.Type.Kind() != reflect.Map:
			fn(key, f.Type)
		}
	}
}

// strictFile refuses a configuration file with unknown keys, and one that
// is not a regular file of sane size (a FIFO would hang the read that
// follows). It returns the file's mode, for inlineSecretsWarning.
func strictFile(file string) (os.FileMode, error) {
	// The user's own path: a link (a dotfiles manager's) is followed.
	data, fi, err := sources.ReadShared(file, sources.SharedRead{What: "configuration file", Limit: maxConfig, FollowLinks: true})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // the read that follows reports it
	}
	if err != nil {
		return 0, model.Errorf(model.CodeMisconfigured, "config", "", "%v", err)
	}
	switch strings.ToLower(filepath.Ext(file)) {
	case "", ".yaml", ".yml", ".json":
	default:
		return fi.Mode(), nil
	}
	if unknown := UnknownKeys(file, data); len(unknown) > 0 {
		return 0, model.Errorf(model.CodeMisconfigured, "config", "", "%s", strings.Join(unknown, "; "))
	}
	return fi.Mode(), nil
}

// maxConfig bounds the configuration file.
const maxConfig = 4 << 20

// inlineSecretsWarning warns, as the mesh registry does, when the
// configuration holds a secret inline but group or others can read it.
func (c *Config) inlineSecretsWarning() string {
	exposed := sources.Exposed(c.fileMode)
	if c.File == "" || exposed == "" {
		return ""
	}
	var where []string
	for i, s := range c.Sources {
		if s.Token != "" {
			where = append(where, fmt.Sprintf("sources[%d].token", i))
		}
		if dsnHasPassword(s.DSN) {
			where = append(where, fmt.Sprintf("sources[%d].dsn", i))
		}
	}
	for i, cl := range c.MCP.Clients {
		if cl.Token.Set() {
			where = append(where, fmt.Sprintf("mcp.clients[%d].token", i))
		}
	}
	// A chat bridge's webhook URL is its credential: whoever reads it
	// can post as claimdeck.
	if c.Mesh.Webhook != "" {
		where = append(where, "mesh.webhook")
	}
	if len(where) == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds secrets inline (%s) but %s, or use token_env / dsn_env", c.File, strings.Join(where, ", "), exposed)
}

// pgKeywordPassword finds a password in a keyword/value DSN.
var pgKeywordPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(^|\s)password\s*=`) })

// dsnHasPassword says whether a DSN carries a password itself: a URL's
// user info or a password= keyword.
func dsnHasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	return pgKeywordPassword().MatchString(dsn)
}

// showable is v with every duration written as Go writes it (10m0s) rather
// than in nanoseconds, keyed by the json tags, for `config show`.
func Showable(v reflect.Value) any {
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return Showable(v.Elem())
	case v.Kind() == reflect.Struct:
		out := map[string]any{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			if strings.Contains(opts, "omitempty") && v.Field(i).IsZero() {
				continue
			}
			out[name] = Showable(v.Field(i))
		}
		return out
	case v.Kind() == reflect.Slice:
		if v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = Showable(v.Index(i))
		}
		return out
	}
	return v.Interface()
}
