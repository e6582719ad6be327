package tests

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/naam-project/naam"

// allowedImports is DESIGN.md's package table: which NAAM packages each
// package may import. Nothing imports upward; internal/ helpers are leaves.
var allowedImports = map[string][]string{
	"bytecode":                 {"internal/msgpackshape"},
	"internal/msgpackshape":    {},
	"vm":                       {"bytecode"},
	"vm/jit":                   {"vm", "bytecode"},
	"lang":                     {},
	"compiler":                 {"lang", "bytecode"},
	"verifier":                 {"bytecode", "verifier/internal/scalar"},
	"verifier/internal/scalar": {},
	"cmd/naamc":                {"bytecode", "vm", "vm/jit", "lang", "compiler", "verifier", "internal/cli"},
	"cmd/naam":                 {"host", "nicrt", "bytecode", "vm", "verifier", "compiler", "lang", "internal/testprog", "internal/kernel", "examples/call", "examples/kv", "examples/chase", "examples/rpc", "examples/mica", "examples/btree", "internal/workload", "internal/memcache", "internal/cli"},
	"internal/cli":             {},
	"internal/conformance":     {},
	"internal/testprog":        {"bytecode"},
	"internal/kernel":          {"bytecode"},
	"tests":                    {},
	"internal/verifygen":       {"bytecode"},
	"internal/naameval":        {"lang"},
	"internal/naamgen":         {},
	"nicrt":                    {"bytecode", "verifier", "vm", "vm/jit", "nicrt/wire", "nicrt/transport"},
	"nicrt/transport":          {},
	"nicrt/wire":               {"internal/msgpackshape"},
	"host":                     {"nicrt", "nicrt/wire", "nicrt/transport", "bytecode", "lang"},
	"examples/call":            {"nicrt", "host"},
	"examples/internal/source": {"bytecode", "compiler", "lang"},
	"examples/kv":              {"bytecode", "nicrt", "host", "examples/call", "examples/internal/source"},
	"examples/kv/cmd/kvserver": {"examples/kv", "internal/workload", "nicrt", "nicrt/transport", "nicrt/wire"},
	"examples/kv/cmd/kvclient": {"examples/call", "examples/kv", "internal/memcache", "internal/workload", "nicrt", "nicrt/transport", "nicrt/wire"},
	"examples/chase":           {"bytecode", "nicrt", "host", "examples/call", "examples/internal/source"},
	"examples/rpc":             {"bytecode", "nicrt", "host", "examples/call", "examples/internal/source"},
	"internal/workload":        {},
	"internal/memcache":        {"internal/workload"},
	"internal/netnstest":       {},
	"xdp":                      {"bytecode", "nicrt/wire", "verifier"},

	// The anchors' workloads and their shared helpers.
	"examples/mica":               {"bytecode", "host", "examples/call", "examples/internal/source", "examples/internal/retry", "examples/kv"},
	"examples/btree":              {"bytecode", "host", "examples/call", "examples/internal/source", "examples/internal/retry"},
	"examples/internal/retry":     {"examples/call"},
	"examples/internal/servetest": {"bytecode", "host"},

	// Client-side execution.
	"clientrun":               {"bytecode", "verifier", "vm"},
	"clientrun/clientruntest": {"bytecode", "clientrun", "vm"},
}

// TestPackageDAG checks every package's NAAM imports (non-test code)
// against allowedImports, so that a layering mistake fails CI.
func TestPackageDAG(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %q is not in the DAG table; add it with its allowed imports", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if !contains(allowed, rel) {
				t.Errorf("%s imports %s, which DESIGN.md's DAG does not allow", pkg, rel)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
