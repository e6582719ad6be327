package tests

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/naam-project/naam"

// allowedImports is DESIGN.md's package table: which NAAM packages each
// package may import. Nothing imports upward; internal/ helpers are leaves.
var allowedImports = map[string][]string{
	"bytecode":                 {"internal/msgpackshape"},
	"lang":                     {},
	"compiler":                 {"lang", "bytecode"},
	"verifier":                 {"bytecode", "verifier/internal/scalar"},
	"verifier/internal/scalar": {},
	"vm":                       {"bytecode"},
	"vm/jit":                   {"vm", "bytecode"},

	// The NIC model knows nothing of sockets: no transport, no server.
	"nicrt":                         {"bytecode", "verifier", "vm", "vm/jit", "nicrt/wire", "internal/defaults", "steer"},
	"nicrt/wire":                    {"internal/msgpackshape"},
	"nicrt/transport":               {},
	"nicrt/transport/transporttest": {"nicrt/transport"},
	"nicrt/server":                  {"nicrt", "nicrt/wire", "nicrt/transport", "bytecode", "internal/defaults"},
	// A pure caller links nothing of the model, the verifier or the VM.
	"nicrt/caller": {"nicrt/wire", "nicrt/transport", "bytecode", "internal/defaults"},
	"xdp":          {"bytecode", "nicrt/wire", "verifier"},

	"host/peer": {"nicrt/caller", "nicrt/wire", "nicrt/transport", "bytecode", "clientrun", "steer", "vm"},
	"host":      {"host/peer", "nicrt", "nicrt/server", "nicrt/caller", "nicrt/wire", "nicrt/transport", "bytecode", "vm", "xdp"},

	"cmd/naamc": {"bytecode", "vm", "vm/jit", "lang", "compiler", "verifier", "internal/cli"},
	"cmd/naam": {"host", "nicrt", "bytecode", "vm", "verifier", "compiler", "lang", "examples/call", "examples/kv", "examples/kv/kvnode",
		"examples/chase", "examples/rpc", "examples/mica", "examples/btree", "internal/bench/benchprog", "internal/bench/kernel", "internal/bench/workload",
		"internal/bench/memcache", "internal/cli", "host/peer", "nicrt/wire", "internal/netns", "xdp",
		"nicrt/caller", "nicrt/transport", // bench --xdp's pipelined client
		"sim"},

	"examples/call":            {"host/peer", "nicrt/caller", "nicrt/wire"},
	"examples/call/calltest":   {"nicrt", "nicrt/caller", "nicrt/wire"},
	"examples/internal/source": {"bytecode", "compiler", "lang"},
	"examples/kv":              {"bytecode", "host/peer", "nicrt/wire", "examples/call"},
	"examples/kv/kvnode":       {"bytecode", "nicrt", "examples/kv", "examples/internal/source"},
	"examples/kv/cmd/kvserver": {"examples/kv", "examples/kv/kvnode", "internal/bench/workload", "nicrt", "nicrt/server", "nicrt/transport", "nicrt/wire"},
	"examples/kv/cmd/kvclient": {"examples/call", "examples/kv", "internal/bench/memcache", "internal/bench/workload", "nicrt/caller", "nicrt/transport", "nicrt/wire"},
	"examples/chase":           {"bytecode", "nicrt", "host", "examples/call", "examples/internal/source"},
	"examples/rpc":             {"bytecode", "nicrt", "host", "examples/call", "examples/internal/source"},
	"examples/mica":            {"bytecode", "host", "examples/call", "examples/kv", "examples/internal/retry", "examples/internal/source"},
	"examples/btree":           {"bytecode", "host", "examples/call", "examples/internal/retry", "examples/internal/source"},
	"examples/internal/retry":  {"examples/call"},
	// The examples' test server: only their tests import it.
	"examples/internal/servetest": {"bytecode", "host"},

	"internal/cli":          {},
	"internal/netns":        {},
	"internal/defaults":     {},
	"internal/detmath":      {},
	"internal/msgpackshape": {},
	// The benchmark harness: what naam bench and naam demo drive.
	"internal/bench/benchprog": {"bytecode"},
	"internal/bench/kernel":    {},
	"internal/bench/workload":  {"internal/detmath"},
	"internal/bench/memcache":  {"internal/bench/workload"},
	// Test-only generators, oracles and readers (TestTestOnly).
	"internal/testing/conformance": {},
	"internal/testing/naameval":    {"lang", "bytecode"},
	"internal/testing/naamgen":     {},
	"internal/testing/netns":       {"internal/netns"},
	"internal/testing/spectable":   {},
	"internal/testing/syncbuf":     {},
	"internal/testing/cputime":     {},
	"internal/testing/testprog":    {"bytecode", "internal/bench/benchprog", "compiler", "lang"},
	"internal/testing/verifygen":   {"bytecode"},

	// The simulator: the NIC model's cost model and policy, the VM, the
	// caller's runs at the client, and the compiler for its own chase
	// program.
	"sim": {"bytecode", "clientrun", "compiler", "lang", "nicrt", "nicrt/wire", "steer", "verifier", "vm", "internal/bench/workload", "internal/detmath"},

	// Where a message runs: the decision alone, shared by the node, the caller and the simulator.
	"steer": {},

	// Client-side execution.
	"clientrun":               {"bytecode", "vm"},
	"clientrun/clientruntest": {"bytecode", "clientrun", "verifier", "vm"},

	"tests": {},
}

// imports lists every package of the module with the NAAM packages its
// non-test files import, relative to the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		m[pkg] = []string{}
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				m[pkg] = append(m[pkg], rel)
			}
		}
	}
	return m
}

// TestPackageDAG checks every package's NAAM imports (non-test code)
// against allowedImports, so that a layering mistake fails CI.
func TestPackageDAG(t *testing.T) {
	all := imports(t)
	for pkg, imps := range all {
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %q is not in the DAG table; add it with its allowed imports", pkg)
			continue
		}
		for _, imp := range imps {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which DESIGN.md's DAG does not allow", pkg, imp)
			}
		}
	}
	for pkg := range allowedImports {
		if _, ok := all[pkg]; !ok {
			t.Errorf("the DAG table names %q, which is no package", pkg)
		}
	}
}

// testOnly reports whether pkg is for tests alone: under internal/testing,
// or a test double whose name ends in "test" (transporttest, calltest).
func testOnly(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/testing/") || strings.HasSuffix(pkg[strings.LastIndex(pkg, "/")+1:], "test")
}

// TestTestOnly: no package but a test-only one imports a test-only
// package from its non-test files; _test.go files may (go list's
// TestImports and XTestImports are not looked at). So naam demo and the
// libraries never run on a generator, an oracle or a test double.
func TestTestOnly(t *testing.T) {
	for pkg, imps := range imports(t) {
		for _, imp := range imps {
			if testOnly(imp) && !testOnly(pkg) {
				t.Errorf("%s imports %s, which only tests may import", pkg, imp)
			}
		}
	}
}

// deps is `go list -deps pkg`.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	return strings.Fields(string(out))
}

// TestPureCaller: a client program (kvclient) links no wasmtime-go, and
// none of the compiler, the language, the verifier, the JIT or the NIC
// model: what a caller needs is nicrt/caller, host/peer, the wire, and
// the interpreter and clientrun to run handlers at the client.
func TestPureCaller(t *testing.T) {
	for _, d := range deps(t, "examples/kv/cmd/kvclient") {
		switch {
		case strings.Contains(d, "wasmtime-go"),
			slices.Contains([]string{"compiler", "lang", "verifier", "vm/jit", "nicrt", "nicrt/server"}, strings.TrimPrefix(d, module+"/")):
			t.Errorf("kvclient links %s", d)
		}
	}
}

// TestModelHasNoTransport: the NIC model links no transport: completion
// goes through the sink each message brings.
func TestModelHasNoTransport(t *testing.T) {
	for _, d := range deps(t, "nicrt") {
		if strings.Contains(d, "transport") {
			t.Errorf("nicrt links %s", d)
		}
	}
}
