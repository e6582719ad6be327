package wire

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSpecTables checks that spec/wire.md's tables agree with the code.
func TestSpecTables(t *testing.T) {
	spec, err := os.ReadFile("../../spec/wire.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{
		fmt.Sprintf("| %d | 2 | `magic` |", offMagic),
		fmt.Sprintf("| %d | 1 | `version` |", offVersion),
		fmt.Sprintf("| %d | 1 | `type` |", offType),
		fmt.Sprintf("| %d | 2 | `flags` |", offFlags),
		fmt.Sprintf("| %d | 2 | `credits` |", offCredits),
		fmt.Sprintf("| %d | 4 | `tenant` |", offTenant),
		fmt.Sprintf("| %d | 4 | `handler` |", offHandler),
		fmt.Sprintf("| %d | 8 | `request_id` |", offRequestID),
		fmt.Sprintf("| %d | 4 | `src` |", offSrc),
		fmt.Sprintf("| %d | 4 | `dst` |", offDst),
		fmt.Sprintf("| %d | 4 | `length` |", offLength),
		fmt.Sprintf("| %d | 4 | `status` |", offStatus),
		fmt.Sprintf("| %d | %d | `tag` |", offTag, TagSize),
		fmt.Sprintf("| `HeaderSize` | %d |", HeaderSize),
		fmt.Sprintf("| `MaxPayload` | %d |", MaxPayload),
		fmt.Sprintf("| `MaxJumboPayload` | %d |", MaxJumboPayload),
		fmt.Sprintf("| `MaxDatagramPayload` | %d |", MaxDatagramPayload),
		fmt.Sprintf("| `WindowSize` | %d |", WindowSize),
		fmt.Sprintf("| `MaxInstallSize` | %d |", MaxInstallSize),
	}
	for ty := Type(1); ty <= maxType; ty++ {
		rows = append(rows, fmt.Sprintf("| %d | `%v` |", ty, ty))
	}
	for i, name := range flagNames {
		rows = append(rows, fmt.Sprintf("| %d | `%s` |", i, name))
	}
	for op := OpInstall; op <= maxOp; op++ {
		rows = append(rows, fmt.Sprintf("| %d | `%v` |", op, op))
	}
	for _, row := range rows {
		if !strings.Contains(string(spec), row) {
			t.Errorf("spec/wire.md has no row starting %s", row)
		}
	}
}
