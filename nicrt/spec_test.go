package nicrt

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSpecTables checks spec/nic.md against the code: every Config field's
// default in the Defaults table, ClientConfig's and ServerConfig's, every
// status and its value, every placement name.
func TestSpecTables(t *testing.T) {
	raw, err := os.ReadFile("../spec/nic.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(raw)
	rows := map[string][]string{}  // first cell → cells (the last such row)
	all := map[string][][]string{} // first cell → every such row
	for _, line := range strings.Split(spec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[cells[0]] = cells
		all[cells[0]] = append(all[cells[0]], cells)
	}

	def := reflect.ValueOf(DefaultConfig())
	for i := range def.NumField() {
		f := def.Type().Field(i)
		switch f.Name {
		case "Outbox", "Failed", "Trace", "Seed":
			continue
		}
		row, ok := rows["`"+f.Name+"`"]
		if !ok {
			t.Errorf("Defaults: no row for %s", f.Name)
			continue
		}
		want := "`" + fmt.Sprint(def.Field(i).Interface()) + "`"
		if !strings.HasPrefix(row[1], want) {
			t.Errorf("Defaults: %s is %s in the spec, %s in the code", f.Name, row[1], want)
		}
	}

	// The network side's ClientConfig defaults (Network side).
	cdef := reflect.ValueOf(ClientConfig{}.withDefaults())
	for i := range cdef.NumField() {
		f := cdef.Type().Field(i)
		switch f.Name {
		case "Node", "Server", "Keys", "MaxPayload", "FirstID":
			continue
		}
		row, ok := rows["`"+f.Name+"`"]
		want := "`" + fmt.Sprint(cdef.Field(i).Interface()) + "`"
		if !ok || !strings.HasPrefix(row[1], want) {
			t.Errorf("ClientConfig defaults: %s is %v in the spec, %s in the code", f.Name, row, want)
		}
	}

	// ServerConfig's (Network side, ServerConfig defaults).
	sdef := reflect.ValueOf(ServerConfig{}.withDefaults())
	for i := range sdef.NumField() {
		f := sdef.Type().Field(i)
		switch f.Name {
		case "Node", "Keys", "MaxPayload", "Peers":
			continue
		}
		row, ok := rows["`"+f.Name+"`"]
		want := "`" + fmt.Sprint(sdef.Field(i).Interface()) + "`"
		if !ok || !strings.HasPrefix(row[1], want) {
			t.Errorf("ServerConfig defaults: %s is %v in the spec, %s in the code", f.Name, row, want)
		}
	}

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
