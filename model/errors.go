package model

import (
	"errors"
	"fmt"
)

// Code is an error code of the ntask contract (seed 002).
type Code string

// The error codes. Every error a source returns carries one of them.
const (
	CodeConflict           Code = "CONFLICT"
	CodeMisconfigured      Code = "MISCONFIGURED"
	CodeLostLock           Code = "LOST_LOCK"
	CodeAPIError           Code = "API_ERROR"
	CodeIncompleteSubtasks Code = "INCOMPLETE_SUBTASKS"
	// CodeNoTasks is ntask 0.4's answer to next on an empty queue
	// (workflow.md: "No tasks (exit 10 = NO_TASKS)"); seed 002's next
	// answers task null instead, so no source returns it.
	CodeNoTasks Code = "NO_TASKS"
)

// ExitStatusV1 is the exit status ntask 0.4 assigns to a code
// (Errors.swift's ExitCodes at 75590fd): 10 NO_TASKS, 20 CONFLICT,
// 21 LOST_LOCK, 30 API_ERROR, 40 MISCONFIGURED, 41 INCOMPLETE_SUBTASKS.
func (c Code) ExitStatusV1() int {
	switch c {
	case "":
		return 0
	case CodeNoTasks:
		return 10
	case CodeConflict:
		return 20
	case CodeLostLock:
		return 21
	case CodeMisconfigured:
		return 40
	case CodeIncompleteSubtasks:
		return 41
	}
	return 30
}

// ExitStatus is the process exit status seed 002 assigns to a code.
func (c Code) ExitStatus() int {
	switch c {
	case "":
		return 0
	case CodeConflict:
		return 2
	case CodeMisconfigured, CodeIncompleteSubtasks:
		return 3
	case CodeLostLock:
		return 4
	}
	return 5
}

// Error is a protocol error: a code, what was being done, and why.
type Error struct {
	Code Code
	Op   string // the operation: claim, heartbeat, force-release, …
	Task string // the task's native id, if any
	Msg  string
	// Current is the task as the backend holds it now, when a CONFLICT or
	// LOST_LOCK could read it, so a caller can say what changed.
	Current *Task
	// Err is a lower-level cause printed after the message (Wrap).
	Err error
	// causes are the errors a %w in Errorf's format wrapped: already part of
	// Msg, kept for errors.Is and errors.As.
	causes []error
}

// Error is redacted: whatever a driver or a URL put in the message, no
// secret Redact recognises leaves through an error.
func (e *Error) Error() string {
	s := string(e.Code)
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Task != "" {
		s += " " + e.Task
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return Redact(s)
}

// Unwrap gives errors.Is and errors.As the cause and whatever %w wrapped.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return e.causes
	}
	return append([]error{e.Err}, e.causes...)
}

// Is matches any *Error with the same code, so errors.Is(err, ErrLostLock)
// works whatever the operation.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Op == "" && t.Msg == "" && t.Err == nil
}

// ErrNoSuchTask is the cause carried by every error about a task id the
// backend does not have: an answer, not a fault, so it is never retried.
var ErrNoSuchTask = errors.New("no such task")

// Sentinels for errors.Is.
var (
	ErrConflict           = &Error{Code: CodeConflict}
	ErrMisconfigured      = &Error{Code: CodeMisconfigured}
	ErrLostLock           = &Error{Code: CodeLostLock}
	ErrAPI                = &Error{Code: CodeAPIError}
	ErrIncompleteSubtasks = &Error{Code: CodeIncompleteSubtasks}
)

// Errorf builds an *Error with a formatted message. A %w verb wraps its
// argument as fmt.Errorf does: the text joins the message and the error
// stays reachable through errors.Is and errors.As.
func Errorf(code Code, op, task, format string, args ...any) *Error {
	w := fmt.Errorf(format, args...)
	e := &Error{Code: code, Op: op, Task: task, Msg: w.Error()}
	switch u := w.(type) {
	case interface{ Unwrap() error }:
		if c := u.Unwrap(); c != nil {
			e.causes = []error{c}
		}
	case interface{ Unwrap() []error }:
		e.causes = u.Unwrap()
	}
	return e
}

// Wrap attaches a code to a lower-level error (a driver error, an I/O
// error). Wrapping an *Error keeps its code.
func Wrap(code Code, op, task string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: code, Op: op, Task: task, Err: err}
}

// CodeOf is the code an error carries; errors without one are API_ERROR.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeAPIError
}

// CurrentOf is the task an error says the backend holds now, or nil.
func CurrentOf(err error) *Task {
	var e *Error
	if errors.As(err, &e) {
		return e.Current
	}
	return nil
}
