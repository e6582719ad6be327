package tests

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite spec/packages.md from go list")

const packagesDoc = "../spec/packages.md"

// packagesHead is spec/packages.md before its table.
const packagesHead = `# Packages

Every package of the module, with the first sentence of its package
documentation (its doc.go): what it owns. The DAG of their imports is
DESIGN.md's and is checked by tests/dag_test.go; this table is made from
` + "`go list`" + ` and checked against it by tests/packages_test.go
(` + "`go test ./tests -run PackageTable -update`" + ` rewrites it).

| package | job |
|---|---|
`

// packageTable is spec/packages.md as go list says it should be.
func packageTable(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Doc}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	var b strings.Builder
	b.WriteString(packagesHead)
	for _, line := range lines {
		pkg, doc, _ := strings.Cut(line, "\t")
		pkg = strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if doc == "" {
			t.Errorf("package %s has no package documentation", pkg)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", pkg, strings.ReplaceAll(doc, "|", `\|`))
	}
	return b.String()
}

// TestPackageTable: spec/packages.md lists every package with the first
// sentence of its documentation, and no package that is not there.
func TestPackageTable(t *testing.T) {
	want := packageTable(t)
	if *update {
		if err := os.WriteFile(packagesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(packagesDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != want {
		haveRows, wantRows := strings.Split(string(have), "\n"), strings.Split(want, "\n")
		for _, r := range wantRows {
			if !slices.Contains(haveRows, r) {
				t.Errorf("spec/packages.md lacks %q", r)
			}
		}
		for _, r := range haveRows {
			if !slices.Contains(wantRows, r) {
				t.Errorf("spec/packages.md has a stale line %q", r)
			}
		}
		t.Log("go test ./tests -run PackageTable -update rewrites it")
	}
}
