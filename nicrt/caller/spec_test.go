package caller

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/spectable"
)

// TestSpecDefaults checks ClientConfig's defaults against spec/nic.md's table.
func TestSpecDefaults(t *testing.T) {
	rows := spectable.Read(t, "../../spec/nic.md").Last
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
}
