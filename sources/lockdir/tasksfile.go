package lockdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// taskEntry is one task of the tasks file: the queue of work nobody has
// claimed yet.
type taskEntry struct {
	ID          string
	Title       string
	Description string
	Priority    int
	Class       model.Class
	CreatedAt   time.Time
	Problem     string
	version     string
}

// wireEntry is how claimdeck writes an entry; readers accept more (a
// priority name, a missing class).
type wireEntry struct {
	ID          string `json:"id" yaml:"id"`
	Title       string `json:"title,omitempty" yaml:"title,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	Priority    int    `json:"priority,omitempty" yaml:"priority,omitempty"`
	Class       string `json:"class,omitempty" yaml:"class,omitempty"`
	CreatedAt   string `json:"created_at,omitempty" yaml:"created_at,omitempty"`
}

// maxTasksFile bounds the tasks file: 100,000 tasks of a few hundred bytes
// each fit many times over, and a runaway file cannot exhaust memory.
const maxTasksFile = 64 << 20

// tasksFile is the parsed tasks file, re-read only when its size, mtime or
// inode changes.
type tasksFile struct {
	path    string
	sig     fileSig
	data    []byte
	entries []taskEntry
	byID    map[string]*taskEntry
}

// load re-reads the file if it changed. A missing file is an empty queue;
// a file that is not a list of tasks is a configuration error.
func (f *tasksFile) load() error {
	fi, err := os.Lstat(f.path)
	if os.IsNotExist(err) {
		f.sig, f.data, f.entries, f.byID = fileSig{}, nil, nil, map[string]*taskEntry{}
		return nil
	}
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "tasks file", "", err)
	}
	if sigOf(fi) == f.sig && f.byID != nil {
		return nil
	}
	data, fi, err := sources.ReadShared(f.path, sources.SharedRead{What: "tasks file", Limit: maxTasksFile})
	if errors.Is(err, fs.ErrNotExist) {
		f.sig, f.data, f.entries, f.byID = fileSig{}, nil, nil, map[string]*taskEntry{}
		return nil
	}
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "tasks file", "", err)
	}
	sig := sigOf(fi)
	entries, err := parseTasks(data)
	if err != nil {
		return model.Errorf(model.CodeMisconfigured, "tasks file", "", "%s: %v", f.path, err)
	}
	f.sig, f.data, f.entries = sig, data, entries
	f.byID = make(map[string]*taskEntry, len(entries))
	for i := range f.entries {
		e := &f.entries[i]
		if _, dup := f.byID[e.ID]; dup {
			continue // the first entry wins; parseTasks flagged the duplicate
		}
		f.byID[e.ID] = e
	}
	return nil
}

// appended records an entry this process just appended, without parsing
// the whole file again: Create stays O(size of the file), not O(n log n) of
// a YAML parse per task.
func (f *tasksFile) appended(data []byte, w wireEntry) error {
	fi, err := os.Lstat(f.path)
	if err != nil {
		return err
	}
	e := entryOf(len(f.entries), map[string]any{
		"id": w.ID, "title": w.Title, "description": w.Description, "priority": w.Priority, "class": w.Class, "created_at": w.CreatedAt,
	})
	f.sig, f.data = sigOf(fi), data
	f.entries = append(f.entries, e)
	f.byID = make(map[string]*taskEntry, len(f.entries))
	for i := range f.entries {
		if _, dup := f.byID[f.entries[i].ID]; !dup {
			f.byID[f.entries[i].ID] = &f.entries[i]
		}
	}
	return nil
}

// parseTasks reads a JSON or YAML list of tasks (JSON is YAML). A bad entry
// becomes an entry with a Problem, so one typo does not hide the queue.
func parseTasks(data []byte) ([]taskEntry, error) {
	var raw []map[string]any
	if err := unmarshalList(data, &raw); err != nil {
		return nil, fmt.Errorf("want a list of tasks (id, title, description, priority, class): %s", sources.ContentProblem(err, data))
	}
	seen := make(map[string]bool, len(raw))
	out := make([]taskEntry, 0, len(raw))
	for i, m := range raw {
		e := entryOf(i, m)
		if seen[e.ID] {
			e.Problem = strings.TrimPrefix(e.Problem+"; duplicate id in the tasks file", "; ")
			e.setVersion()
		}
		seen[e.ID] = true
		out = append(out, e)
	}
	return out, nil
}

// unmarshalList decodes JSON with encoding/json (several times faster on
// a long queue) and anything else as YAML.
func unmarshalList(data []byte, v *[]map[string]any) error {
	if t := bytes.TrimSpace(data); len(t) == 0 {
		return nil
	} else if t[0] == '[' {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(v); err == nil {
			return nil
		}
	}
	return yaml.Unmarshal(data, v)
}

// entryOf reads the i-th entry of the list.
func entryOf(i int, m map[string]any) taskEntry {
	e := taskEntry{Class: model.ClassStandard}
	var problems []string
	switch id := m["id"].(type) {
	case string:
		e.ID = id
	case int, json.Number:
		e.ID = fmt.Sprint(id)
	default:
		e.ID = fmt.Sprintf("#%d", i+1)
		problems = append(problems, "entry has no id")
	}
	if err := checkID(e.ID); err != nil && len(problems) == 0 {
		problems = append(problems, err.Error())
	}
	e.Title, _ = m["title"].(string)
	e.Description, _ = m["description"].(string)
	if e.Title == "" {
		e.Title = e.Description
	}
	switch p := m["priority"].(type) {
	case nil:
	case int:
		e.Priority = p
	case json.Number:
		n, err := strconv.Atoi(p.String())
		if err != nil {
			problems = append(problems, fmt.Sprintf("priority %v is not a whole number", p))
		}
		e.Priority = n
	case string:
		n, err := model.ParsePriority(p)
		if err != nil {
			problems = append(problems, err.Error())
		}
		e.Priority = n
	default:
		problems = append(problems, fmt.Sprintf("priority %v is not a number or a name", p))
	}
	if c, ok := m["class"].(string); ok {
		cl, err := model.ParseClass(c)
		if err != nil {
			problems = append(problems, err.Error())
		}
		e.Class = cl
	}
	switch c := m["created_at"].(type) {
	case string:
		e.CreatedAt, _ = parseTime(c)
	case time.Time:
		e.CreatedAt = c.UTC()
	}
	e.Problem = strings.Join(problems, "; ")
	e.setVersion()
	return e
}

func (e *taskEntry) setVersion() {
	e.version = "t:" + contentHash(fmt.Appendf(nil, "%q %q %q %d %d %s", e.ID, e.Title, e.Description, e.Priority, e.Class, e.Problem))
}

// appendEntry adds one task to the file's bytes without disturbing what is
// there: a JSON array gets the entry spliced in before its closing bracket,
// a YAML list gets an item appended, comments and all.
func appendEntry(data []byte, path string, hasEntries bool, w wireEntry) ([]byte, error) {
	trimmed := bytes.TrimSpace(data)
	asJSON := bytes.HasPrefix(trimmed, []byte("[")) || (len(trimmed) == 0 && !isYAMLPath(path))
	if !asJSON {
		item, err := yaml.Marshal([]wireEntry{w})
		if err != nil {
			return nil, err
		}
		out := append([]byte(nil), data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return append(out, item...), nil
	}
	item, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	if len(trimmed) == 0 {
		return append(append([]byte("[\n  "), item...), "\n]\n"...), nil
	}
	end := bytes.LastIndexByte(data, ']')
	if end < 0 {
		return nil, fmt.Errorf("the JSON list has no closing bracket")
	}
	head := bytes.TrimRight(data[:end], " \t\r\n")
	out := append([]byte(nil), head...)
	if hasEntries {
		out = append(out, ',')
	}
	out = append(out, "\n  "...)
	out = append(out, item...)
	out = append(out, '\n')
	return append(out, data[end:]...), nil
}

func isYAMLPath(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}
