package bytecode

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// maxErrors is how many errors Assemble reports before it gives up, as
// go/parser does: past that point the rest is usually noise.
const maxErrors = 10

// SyntaxError is a problem in assembly source at a 1-based line and column
// (columns count bytes). Msg says what was expected and what was found.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// ErrorList is every SyntaxError of one Assemble call, sorted by position.
//
// Error returns the first error and a count of the others; format with %+v
// to get all of them, one per line.
type ErrorList []*SyntaxError

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	case 2:
		return fmt.Sprintf("%s (and 1 more error)", l[0])
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Format prints the one-line Error for %v and %s, and every error on its own
// line for %+v.
func (l ErrorList) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		lines := make([]string, len(l))
		for i, e := range l {
			lines[i] = e.Error()
		}
		io.WriteString(f, strings.Join(lines, "\n"))
		return
	}
	io.WriteString(f, l.Error())
}

// Unwrap lets errors.As find the individual *SyntaxError values.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Sort orders the list by line, then column; errors at the same position
// keep the order in which they were found.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Col < l[j].Col
	})
}

// Err returns nil for an empty list and the list itself otherwise, so that a
// function can end with `return list.Err()`.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
