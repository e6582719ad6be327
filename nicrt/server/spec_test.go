package server

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/spectable"
)

// TestSpecDefaults checks ServerConfig's defaults against spec/nic.md's table.
func TestSpecDefaults(t *testing.T) {
	rows := spectable.Read(t, "../../spec/nic.md").Last
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
}
