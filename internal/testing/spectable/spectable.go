// Package spectable reads the tables of the spec/ documents for the tests
// that check them against the code (defaults, statuses, names). Only
// _test.go files import it.
package spectable

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Tables holds every row of a document's Markdown tables, by first cell.
type Tables struct {
	Last map[string][]string   // first cell → cells of the last such row
	All  map[string][][]string // first cell → every such row
}

// Read reads the tables of the document at path, failing t if it cannot.
func Read(t testing.TB, path string) Tables {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb := Tables{Last: map[string][]string{}, All: map[string][][]string{}}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		tb.Last[cells[0]] = cells
		tb.All[cells[0]] = append(tb.All[cells[0]], cells)
	}
	return tb
}

// CheckDefaults checks that the row of each field of the struct cfg but
// those in skip (a row whose first cell is the field's name, in
// backquotes) begins with the field's value, in backquotes: a table of
// defaults against the code's. label begins the errors.
func (tb Tables) CheckDefaults(t testing.TB, label string, cfg any, skip ...string) {
	t.Helper()
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if slices.Contains(skip, f.Name) {
			continue
		}
		row, ok := tb.Last["`"+f.Name+"`"]
		want := "`" + fmt.Sprint(v.Field(i).Interface()) + "`"
		switch {
		case !ok || len(row) < 2:
			t.Errorf("%s: no row for %s", label, f.Name)
		case !strings.HasPrefix(row[1], want):
			t.Errorf("%s: %s is %s in the spec, %s in the code", label, f.Name, row[1], want)
		}
	}
}
