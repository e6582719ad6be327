package lang

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Error is one scan, parse or type error.
type Error struct {
	Pos Pos
	Msg string
}

// Error formats e as file:line:col: msg.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is a list of errors; the front end collects them and reports
// them together, sorted by position.
type ErrorList []*Error

// Add appends an error at pos.
func (l *ErrorList) Add(pos Pos, msg string) { *l = append(*l, &Error{Pos: pos, Msg: msg}) }

func (l ErrorList) Len() int           { return len(l) }
func (l ErrorList) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool { return l[i].Pos.Before(l[j].Pos) }

// Sort sorts the list by position; errors at one position keep their order.
func (l ErrorList) Sort() { sort.Stable(l) }

// RemoveMultiples sorts the list and drops all but the first error on each line.
func (l *ErrorList) RemoveMultiples() {
	l.Sort()
	out := (*l)[:0]
	var last Pos
	for i, e := range *l {
		if i == 0 || e.Pos.File != last.File || e.Pos.Line != last.Line {
			out = append(out, e)
			last = e.Pos
		}
	}
	*l = out
}

// Error returns the first error and a count of the others.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns nil for an empty list, else the list itself as an error.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Print writes every error of err (an ErrorList, an *Error or any other
// error) for a person at a terminal: file:line:col: msg, then the source
// line and a caret under the column when fset has the file.
//
//	kv.naam:7:5: cannot assign to i: it is declared with let
//	    i = 2
//	    ^
func Print(w io.Writer, fset *FileSet, err error) {
	var list ErrorList
	switch e := err.(type) {
	case ErrorList:
		list = e
	case *Error:
		list = ErrorList{e}
	default:
		fmt.Fprintln(w, err)
		return
	}
	for _, e := range list {
		fmt.Fprintln(w, e.Error())
		line, ok := fset.Line(e.Pos.File, e.Pos.Line)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "    %s\n    %s^\n", line, caretIndent(line, e.Pos.Col))
	}
}

// caretIndent returns white space as wide as line[:col-1], keeping tabs
// so the caret lines up however the terminal expands them.
func caretIndent(line string, col int) string {
	var b strings.Builder
	for i := 0; i < col-1 && i < len(line); i++ {
		if line[i] == '\t' {
			b.WriteByte('\t')
		} else if line[i] < 0x80 || line[i] >= 0xc0 { // one space per rune
			b.WriteByte(' ')
		}
	}
	return b.String()
}
