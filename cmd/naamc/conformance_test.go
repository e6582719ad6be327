package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/conformance"
)

// TestVMConformance runs every conformance test through `naamc vm` exactly
// as an outside check would: the program as a .s file, the memory as
// --mem-hex, r0 read from the last line of stdout.
func TestVMConformance(t *testing.T) {
	_, tests := conformance.Tests(t)
	tmp := t.TempDir()
	passed := 0
	for _, tc := range tests {
		prog := filepath.Join(tmp, tc.Name+".s")
		if err := os.WriteFile(prog, []byte(tc.Asm), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"vm"}
		if len(tc.Mem) > 0 {
			args = append(args, "--mem-hex", hex.EncodeToString(tc.Mem))
		}
		var stdout, stderr bytes.Buffer
		code := doMain(append(args, prog), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		got := lines[len(lines)-1]
		if want := fmt.Sprintf("%#x", tc.Result); code != 0 || got != want {
			t.Errorf("%s: exit %d, last line %q, want %q (stderr: %s)", tc.Name, code, got, want, stderr.String())
			continue
		}
		passed++
	}
	t.Logf("naamc vm: %d of %d conformance tests pass", passed, len(tests))
}
