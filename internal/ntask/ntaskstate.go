package ntask

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
)

// lockState is the lock as today's ntask keeps it between commands
// (State/LockState.swift at 75590fd): claim writes it, heartbeat, block,
// escalate, review and cancel read it, and the lock token in it stays the
// fence every backend checks.
type LockState struct {
	TaskID      string `json:"task_id"`
	RunID       string `json:"run_id"`
	LockToken   string `json:"lock_token"`
	LockExpires string `json:"lock_expires"`
	PageID      string `json:"page_id"`
}

// maxStateSize bounds what is read of the state file: the binary writes
// about 300 bytes.
const MaxStateSize = 64 << 10

// statePath is ~/.openclaw/state/current-task.json.
func StatePath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", model.Errorf(model.CodeMisconfigured, "", "", "no home directory for the lock state: %v", err)
	}
	return filepath.Join(home, ".openclaw", "state", "current-task.json"), nil
}

// stateWritable says, before anything is claimed, whether the lock state
// can be saved: its directory made, a temp file created in it and removed.
// doctor asks it too.
func stateWritable() error {
	f, _, err := stateTemp()
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// stateTemp makes the lock state's directory and a temp file in it.
func stateTemp() (*os.File, string, error) {
	path, err := StatePath()
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, path, unsaved(path, err)
	}
	f, err := os.CreateTemp(dir, ".current-task-*.json")
	if err != nil {
		return nil, path, unsaved(path, err)
	}
	return f, path, nil
}

// unsaved is the error for a lock state that cannot be written, naming it.
func unsaved(path string, err error) error {
	return model.Errorf(model.CodeMisconfigured, "", "", "the lock state %s cannot be saved (%v): make %s writable, or set HOME to a home that is", path, err, filepath.Dir(path))
}

// saveState writes the lock state atomically: a private temp file in the
// same directory, synced, renamed over the old one, mode 0600.
func SaveState(s LockState) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	f, path, err := stateTemp()
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr, os.Chmod(tmp, 0o600)); err != nil {
		_ = os.Remove(tmp)
		return unsaved(path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return unsaved(path, err)
	}
	return nil
}

// errNoState is the binary's answer when no claim was made on this machine.
var ErrNoState = model.Errorf(model.CodeMisconfigured, "", "", "No active task claim. Run 'ntask claim' first.")

// loadState reads the lock state without following a link at its name and
// no more than maxStateSize of it.
func LoadState() (LockState, error) {
	path, err := StatePath()
	if err != nil {
		return LockState{}, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return LockState{}, ErrNoState
	}
	if err != nil {
		return LockState{}, model.Errorf(model.CodeMisconfigured, "", "", "the lock state %s: %v (a link is not followed)", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return LockState{}, model.Errorf(model.CodeMisconfigured, "", "", "the lock state %s is not a regular file: remove it and claim again", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxStateSize+1))
	if err != nil {
		return LockState{}, model.Errorf(model.CodeMisconfigured, "", "", "the lock state %s: %v", path, err)
	}
	s, err := ParseState(data)
	if err != nil {
		return LockState{}, model.Errorf(model.CodeMisconfigured, "", "", "the lock state %s: %v: remove it and claim again", path, err)
	}
	return s, nil
}

// parseState reads a lock state file: one JSON object with a task id and a
// lock token that is a UUID; other fields may be empty, unknown ones are
// ignored as the binary's decoder ignores them.
func ParseState(data []byte) (LockState, error) {
	var s LockState
	if len(data) > MaxStateSize {
		return s, fmt.Errorf("larger than %d bytes", MaxStateSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return LockState{}, fmt.Errorf("not a JSON object of task_id, run_id, lock_token, lock_expires, page_id: %v", err)
	}
	if dec.More() {
		return LockState{}, errors.New("more than one JSON value")
	}
	if err := errors.Join(model.CheckText("task_id", s.TaskID), model.CheckText("run_id", s.RunID),
		model.CheckText("lock_token", s.LockToken), model.CheckText("lock_expires", s.LockExpires),
		model.CheckText("page_id", s.PageID)); err != nil {
		return LockState{}, err
	}
	if s.TaskID == "" {
		return LockState{}, errors.New("task_id is empty")
	}
	if _, err := uuid.Parse(s.LockToken); err != nil {
		return LockState{}, errors.New("lock_token is not a UUID")
	}
	return s, nil
}

// clearState removes the lock state, as the binary does once the lock is
// given up; a missing file is already clear.
func ClearState() error {
	path, err := StatePath()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return model.Errorf(model.CodeMisconfigured, "", "", "the lock state: %v", err)
	}
	return nil
}
