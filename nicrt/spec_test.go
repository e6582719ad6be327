package nicrt

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/spectable"
)

// TestSpecTables checks spec/nic.md against the code: every Config field's
// default in the Defaults table, every status and its value, every
// placement name, every verb's id. ClientConfig's and ServerConfig's
// defaults are checked beside them (nicrt/caller, nicrt/server).
func TestSpecTables(t *testing.T) {
	tb := spectable.Read(t, "../spec/nic.md")
	rows, all := tb.Last, tb.All

	tb.CheckDefaults(t, "Defaults", DefaultConfig(), "Outbox", "Failed", "Memory", "Trace", "Seed")

	valueOf := regexp.MustCompile("^[0-9]+$")
	for s := range Status(NumStatus) {
		row, ok := rows["`"+s.String()+"`"]
		if !ok || len(row) < 2 || !valueOf.MatchString(row[1]) {
			t.Errorf("status %d %q: no row", s, s)
			continue
		}
		if v, _ := strconv.Atoi(row[1]); v != int(s) {
			t.Errorf("status %q is %d in the spec, %d in the code", s, v, s)
		}
	}
	for p := range numPlacements {
		if _, ok := rows["`"+p.String()+"`"]; !ok {
			t.Errorf("placement %q: no row", p)
		}
	}
	for name, v := range map[string]uint32{"READ": HandlerRead, "WRITE": HandlerWrite, "CAS": HandlerCAS, "FETCH-ADD": HandlerFetchAdd, "FirstHandlerID": FirstHandlerID} {
		found := false
		for _, row := range append(all[strconv.Itoa(int(v))], all[strconv.Itoa(int(v))+" …"]...) {
			found = found || len(row) > 1 && (strings.Contains(row[1], "`"+name+"`") || strings.HasPrefix(row[1], name+" "))
		}
		if !found {
			t.Errorf("handler id %s = %d not in the spec", name, v)
		}
	}
}
