// Package spectable reads the tables of the spec/ documents for the tests
// that check them against the code (defaults, statuses, names). Only
// _test.go files import it.
package spectable

import (
	"os"
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
