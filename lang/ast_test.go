package lang

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ast")

// TestASTGolden compares the printed syntax tree of a few programs with
// testdata/ast/NAME.golden; go test -run TestASTGolden -update rewrites them.
func TestASTGolden(t *testing.T) {
	for _, name := range []string{"kv_get", "list_walk", "arith", "reads"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata/ok", name+".naam"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFile(nil, name+".naam", src)
			if err != nil {
				t.Fatal(err)
			}
			var have bytes.Buffer
			if err := Fprint(&have, f); err != nil {
				t.Fatal(err)
			}
			have.WriteByte('\n')
			golden := filepath.Join("testdata/ast", name+".golden")
			if *update {
				if err := os.WriteFile(golden, have.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(have.Bytes(), want) {
				t.Errorf("AST of %s differs from %s; run with -update if the change is intended\n%s", name, golden, firstDiff(have.String(), string(want)))
			}
		})
	}
}

func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) && i < len(w); i++ {
		if h[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n have: " + h[i] + "\n want: " + w[i]
		}
	}
	return "lengths differ"
}

// TestPositions checks that every node's Pos is not after its End and
// that children lie inside their parents, over all test programs.
func TestPositions(t *testing.T) {
	files, _ := filepath.Glob("testdata/ok/*.naam")
	for _, name := range files {
		src, _ := os.ReadFile(name)
		f, err := ParseFile(nil, name, src)
		if err != nil {
			t.Fatal(err)
		}
		walkNodes(f, func(parent, n Node) {
			if n.End().Before(n.Pos()) {
				t.Errorf("%s: %T ends at %s, before it starts", n.Pos(), n, n.End())
			}
			if parent != nil {
				if n.Pos().Before(parent.Pos()) || parent.End().Before(n.End()) {
					t.Errorf("%s: %T [%s, %s) is outside its parent %T [%s, %s)", n.Pos(), n, n.Pos(), n.End(), parent, parent.Pos(), parent.End())
				}
			}
		})
	}
}
