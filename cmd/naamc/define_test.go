package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefineExitCodes pins the exit status of naamc build and check with
// -D: a usage mistake (undeclared name, not NAME=VALUE, not a literal,
// given twice) is 2, a value the program rejects (kind, range) is 1.
func TestDefineExitCodes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "c.naam")
	os.WriteFile(src, []byte("const N = 4\nconst S: u8 = 1\nregion r: [u64; N] rw\n\nhandler h(i: u64) -> u64 {\n    return r[i % N] >> S\n}\n"), 0o644)
	out := filepath.Join(dir, "c.nobj")
	for _, tc := range []struct {
		args  []string
		code  int
		inErr string
	}{
		{[]string{"build", src, "-D", "N=8", "-o", out}, exitOK, ""},
		{[]string{"check", "-D", "N=8", src}, exitOK, ""},
		{[]string{"build", src, "-D", "M=8", "-o", out}, exitTool, "-D M: no constant M is declared in " + src},
		{[]string{"check", "-D", "M=8", src}, exitTool, "-D M: no constant M is declared in " + src},
		{[]string{"build", src, "-D", "r=8", "-o", out}, exitTool, "-D r: r is a region, not a constant"},
		{[]string{"build", src, "-D", "N", "-o", out}, exitTool, `-D "N": want NAME=VALUE`},
		{[]string{"build", src, "-D", "=8", "-o", out}, exitTool, `-D "=8": want NAME=VALUE`},
		{[]string{"build", src, "-D", "N=x", "-o", out}, exitTool, `-D N: "x" is not an integer literal`},
		{[]string{"build", src, "-D", "N=1", "-D", "N=2", "-o", out}, exitTool, "-D N: given twice"},
		{[]string{"build", src, "-D", "S=256", "-o", out}, exitRejected, "c.naam:2:7: constant S: the override 256 does not fit u8"},
		{[]string{"check", "-D", "S=-1", src}, exitRejected, "c.naam:2:7: constant S: the override -1 does not fit u8"},
		{[]string{"build", src, "-D", "N=false", "-o", out}, exitRejected, "c.naam:1:7: constant N is an integer"},
	} {
		code, _, stderr := naamc(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.inErr) {
			t.Errorf("naamc %s: exit %d, stderr %q; want exit %d with %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.inErr)
		}
	}
}
