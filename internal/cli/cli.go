// Package cli holds what NAAM's commands (cmd/naamc, cmd/naam) share: the
// exit-status table, the error that carries a status, the one place that
// turns a command's error into that status and its message on stderr, and
// the version line of --version.
//
// It imports nothing of NAAM's.
package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Exit statuses, one table for both commands (spec/cli.md).
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailed: the work was tried and failed: the compiler or the
	// verifier rejected the program, a handler failed or faulted, a node
	// refused the request (a verb's checks, an install, a control op).
	ExitFailed = 1
	// ExitUsage: the command was called wrongly or its input is bad: an
	// unknown flag, a missing argument, a value that does not parse or
	// fit, a file that cannot be read or written. Nothing was sent.
	ExitUsage = 2
	// ExitUnreachable: no answer from the node within the timeout: nothing
	// listens there, the tenant or key is wrong (the node drops packets it
	// cannot authenticate), or the network lost them. A request may or may
	// not have run.
	ExitUnreachable = 3
)

// ExitTool is the status of an error that is not an *ExitError: a bad
// flag, an unreadable file (ExitUsage).
const ExitTool = ExitUsage

// Code is one row of the exit-status table.
type Code struct {
	Status  int
	Name    string // what scripts call it
	Meaning string
}

// Codes is the exit-status table of naamc and naam, in order.
var Codes = []Code{
	{ExitOK, "ok", "success"},
	{ExitFailed, "failed", "the work failed: a compile error or verifier rejection, a handler that failed or faulted, a node that refused the request"},
	{ExitUsage, "usage", "usage or input error: a bad flag or argument, a value that does not parse or fit, an unreadable file; nothing was sent"},
	{ExitUnreachable, "unreachable", "no answer within the timeout (naam): nothing listening, a wrong tenant or key, or the network lost it"},
}

// ExitHelp is the exit-status table as --help prints it.
func ExitHelp() string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, c := range Codes {
		fmt.Fprintf(&b, "  %d  %-11s  %s\n", c.Status, c.Name, c.Meaning)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

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

// Version is what --version prints after the command's name: the main
// module's version ("(devel)" for a build from a checkout), the VCS
// revision and time the binary was built from, "+modified" when the tree
// had changes, and the Go version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build info)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		v += " rev unknown"
	default:
		v += " rev " + rev[:min(len(rev), 12)]
		if modified {
			v += "+modified"
		}
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
}
