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

// onTasks is called before each read ("read") and each parse ("parse")
// of the whole tasks file; tests count them there.
var onTasks = func(op string) {}

// maxTasksFile bounds the tasks file: 100,000 tasks of a few hundred bytes
// each fit many times over, and a runaway file cannot exhaust memory.
const maxTasksFile = 64 << 20

// tasksFile is the parsed tasks file, re-read when its signature changes
// or, while it had changed too recently to vouch for it (settled false),
// at every look.
type tasksFile struct {
	path string
	// index is the tasks index's path ("": none); locked says whether this
	// process holds the directory's write lock, under which a look that
	// finds the index stale writes it again.
	index   string
	locked  func() bool
	mode    os.FileMode // the most an index's permission bits may be
	sig     tasksSig
	indexed tasksSig // the signature the index was last seen to vouch for
	settled bool
	missing bool
	gen     uint64 // counts the parses that may have changed byID
	data    []byte
	entries []taskEntry
	byID    map[string]*taskEntry
}

// current reports whether the parse held is the file as it is (sig).
func (f *tasksFile) current(sig tasksSig) bool {
	return f.byID != nil && f.settled && sig == f.sig
}

// gone records a missing file: an empty queue.
func (f *tasksFile) gone() {
	if !f.missing || f.byID == nil {
		f.gen++
	}
	f.sig, f.settled, f.missing, f.data, f.entries, f.byID = tasksSig{}, true, true, nil, nil, map[string]*taskEntry{}
}

// stat is the file's signature; ok false means it does not exist.
func (f *tasksFile) stat() (tasksSig, bool, error) {
	fi, err := os.Lstat(f.path)
	if os.IsNotExist(err) {
		return tasksSig{}, false, nil
	}
	if err != nil {
		return tasksSig{}, false, model.Wrap(model.CodeMisconfigured, "tasks file", "", err)
	}
	return tasksSigOf(fi), true, nil
}

// load re-reads the file if it changed. A missing file is an empty queue;
// a file that is not a list of tasks is a configuration error.
func (f *tasksFile) load() error {
	sig, ok, err := f.stat()
	if err != nil || !ok {
		if err == nil {
			f.gone()
		}
		return err
	}
	if f.current(sig) {
		return nil
	}
	return f.parse(false)
}

// check is load for a caller that needs no entry yet (Open): a file the
// index vouches for as it is now parsed when it was indexed, so it is not
// parsed again.
func (f *tasksFile) check() error {
	sig, ok, err := f.stat()
	if err != nil || !ok {
		return err
	}
	if f.current(sig) {
		return nil
	}
	if f.index != "" && sig.mode.IsRegular() {
		if _, ok := indexLookup(f.index, f.path, sig, ""); ok {
			f.indexed = sig
			return nil
		}
	}
	return f.parse(false)
}

// lookup is the entry of id (nil: none), reading no more of the tasks file
// than it must: the parse this process holds while the file has not
// changed, else the tasks index while it vouches for the file as it is
// now, else a parse of the whole file.
func (f *tasksFile) lookup(id string) (*taskEntry, error) {
	sig, ok, err := f.stat()
	if err != nil || !ok {
		if err == nil {
			f.gone()
		}
		return nil, err
	}
	if f.current(sig) {
		if f.wantsIndex(sig) {
			if err := f.parse(true); err != nil {
				return nil, err
			}
		}
		return f.byID[id], nil
	}
	if f.index != "" && sig.mode.IsRegular() {
		if e, ok := indexLookup(f.index, f.path, sig, id); ok {
			f.indexed = sig
			return e, nil
		}
	}
	if err := f.parse(f.wantsIndex(sig)); err != nil {
		return nil, err
	}
	return f.byID[id], nil
}

// wantsIndex reports whether this process should write the tasks index
// for the file as it is (sig): it holds the directory's write lock, and
// the index does not vouch for sig.
func (f *tasksFile) wantsIndex(sig tasksSig) bool {
	if f.index == "" || f.locked == nil || !f.locked() || f.indexed == sig || !sig.mode.IsRegular() || !sig.settledBefore(time.Now()) {
		return false // not settled even now: no index could be made
	}
	if _, ok := indexLookup(f.index, f.path, sig, ""); ok {
		f.indexed = sig
		return false
	}
	return true
}

// parse reads the whole file and parses it unless it holds the bytes
// parsed last. With index, it also writes the tasks index when the file
// had settled before the read began, on this host's clock and on the file
// system's (the ctime of the index's temp file, made before the read).
func (f *tasksFile) parse(index bool) error {
	var tmp *indexTemp
	if index {
		tmp = startIndex(filepath.Dir(f.index))
	}
	abort := func() {
		if tmp != nil {
			tmp.abort()
		}
	}
	start := time.Now()
	onTasks("read")
	data, fi, err := sources.ReadShared(f.path, sources.SharedRead{What: "tasks file", Limit: maxTasksFile})
	if errors.Is(err, fs.ErrNotExist) {
		abort()
		f.gone()
		return nil
	}
	if err != nil {
		abort()
		return model.Wrap(model.CodeMisconfigured, "tasks file", "", err)
	}
	// fstat before the read: a write during it moves ctime past sig.
	sig := tasksSigOf(fi)
	if f.byID != nil && !f.missing && bytes.Equal(data, f.data) {
		// The bytes held, under a new signature or one too recent to
		// vouch for them: no need to parse them again.
		f.sig, f.settled = sig, sig.settledBefore(start)
	} else {
		onTasks("parse")
		entries, err := parseTasks(data)
		if err != nil {
			abort()
			return model.Errorf(model.CodeMisconfigured, "tasks file", "", "%s: %v", f.path, err)
		}
		f.set(sig, data, entries, sig.settledBefore(start))
	}
	if tmp != nil {
		if f.settled && sig.settledBefore(tmp.ref) {
			tmp.commit(f.index, encodeIndex(f.path, sig, f.byID), fi.Mode().Perm()&f.mode)
			f.indexed = sig
		} else {
			tmp.abort()
		}
	}
	return nil
}

// set holds a parse of the file.
func (f *tasksFile) set(sig tasksSig, data []byte, entries []taskEntry, settled bool) {
	f.sig, f.settled, f.missing, f.data, f.entries = sig, settled, false, data, entries
	f.gen++
	f.byID = make(map[string]*taskEntry, len(entries))
	for i := range f.entries {
		e := &f.entries[i]
		if _, dup := f.byID[e.ID]; dup {
			continue // the first entry wins; parseTasks flagged the duplicate
		}
		f.byID[e.ID] = e
	}
}

// appended records an entry this process just appended, without parsing
// the whole file again: Create stays O(size of the file), not O(n log n) of
// a YAML parse per task. The file has just changed, so its signature does
// not vouch for the parse yet: the next look reads the file again (and
// finds the same bytes) until it does.
func (f *tasksFile) appended(data []byte, w wireEntry) error {
	fi, err := os.Lstat(f.path)
	if err != nil {
		return err
	}
	e := entryOf(len(f.entries), map[string]any{
		"id": w.ID, "title": w.Title, "description": w.Description, "priority": w.Priority, "class": w.Class, "created_at": w.CreatedAt,
	})
	f.set(tasksSigOf(fi), data, append(f.entries, e), false)
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
