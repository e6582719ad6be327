// Package cli holds what NAAM's commands (cmd/naamc, cmd/naam) share: the
// error that carries a process exit status, and the one place that turns
// a command's error into that status and its message on stderr.
//
// It imports nothing of NAAM's.
package cli

import (
	"errors"
	"fmt"
	"io"
)

// ExitError is a command's failure with the exit status it gives the
// process. Exit prints Err as "PROG: Err"; a nil Err means the command has
// printed its messages already (a list of compile errors, say).
type ExitError struct {
	Code int
	Err  error
}

// Errorf is an *ExitError with status code and the message
// fmt.Errorf(format, args...) (%w wraps).
func Errorf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitTool is the status of an error that is not an *ExitError: the
// tool itself failed (bad flags, an unreadable file).
const ExitTool = 2

// Exit is the process exit status for err, the result of a command: 0 for
// nil, an *ExitError's Code, ExitTool for any other error. It prints the
// message, if any, to stderr as "prog: message".
func Exit(stderr io.Writer, prog string, err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitTool
	}
	if ee.Err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	}
	return ee.Code
}
