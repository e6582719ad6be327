package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func simRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = doMain(append([]string{"sim"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestSimJSON: one seed gives byte-identical JSON, another seed other
// JSON; the object names the run.
func TestSimJSON(t *testing.T) {
	args := []string{"--nodes", "20", "--messages", "500", "--workload", "chase", "--loss", "0.02", "--json"}
	c1, a, e1 := simRun(t, append(args, "--seed", "3")...)
	c2, b, _ := simRun(t, append(args, "--seed", "3")...)
	c3, c, _ := simRun(t, append(args, "--seed", "4")...)
	if c1 != 0 || c2 != 0 || c3 != 0 {
		t.Fatalf("exit %d %d %d: %s", c1, c2, c3, e1)
	}
	if a != b {
		t.Errorf("seed 3 twice:\n%s\n%s", a, b)
	}
	if a == c {
		t.Error("seeds 3 and 4 gave the same output")
	}
	var r struct {
		Seed     uint64 `json:"seed"`
		Nodes    int    `json:"nodes"`
		Workload string `json:"workload"`
		Answered int    `json:"answered"`
	}
	if err := json.Unmarshal([]byte(a), &r); err != nil || r.Seed != 3 || r.Nodes != 20 || r.Workload != "chase" || r.Answered != 500 {
		t.Errorf("%+v %v", r, err)
	}
}

// TestSimText: the table, and the plots.
func TestSimText(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "p")
	code, out, errs := simRun(t, "--nodes", "8", "--messages", "2000", "--workload", "shift", "--shift-nodes", "0-3",
		"--shift-at", "1ms", "--shift-until", "3ms", "--plot", prefix)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"naam sim shift: 8 nodes", "latency      p50", "placements   nic", "steering", "shift        4 nodes at host load 0.95 from 1.000 ms: host share", "hot spots"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, f := range []string{prefix + "-latency.png", prefix + "-placements.png"} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSimScenario: a scenario file runs, flags given override it, and a
// bad field is named by its path.
func TestSimScenario(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "s.json")
	os.WriteFile(good, []byte(`{"nodes": 30, "messages": 300, "workload": {"kind": "ledger"}, "events": [{"at": "100us", "kind": "fail", "nodes": ["3-4"]}]}`), 0o644)
	code, out, errs := simRun(t, "--scenario", good, "--nodes", "12", "--json")
	if code != 0 || !strings.Contains(out, `"nodes":12`) || !strings.Contains(out, `"workload":"ledger"`) || !strings.Contains(out, `"failures":2`) {
		t.Errorf("exit %d, %s %s", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"network": {"links": [{"loss": 3}]}}`), 0o644)
	if code, _, errs := simRun(t, "--scenario", bad); code != 2 || !strings.Contains(errs, "--scenario "+bad+": network.links[0].loss: 3 is not a probability") {
		t.Errorf("exit %d, %s", code, errs)
	}
}

// TestSimBadFlags: usage errors (exit 2) naming the flag.
func TestSimBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "-5"}, "--nodes: -5 is not in 1"},
		{[]string{"--workload", "graph"}, `--workload: "graph" is not kv`},
		{[]string{"--mix", "Z"}, `--mix: "Z" is not A, B or C`},
		{[]string{"--loss", "2"}, "--loss: 2 is not a probability"},
		{[]string{"--placement", "gpu"}, `--placement: "gpu" is not auto`},
		{[]string{"--hops", "99", "--workload", "chase"}, "--hops: 99 is not in 1 … 64"},
		{[]string{"--reply", "echo"}, `--reply: "echo" is not relayed`},
		{[]string{"--caller", "edge"}, `--caller: "edge" is not node or client`},
		{[]string{"--latency", "fast"}, `--latency "fast": want DIST:BASE:JITTER`},
		{[]string{"--latency", "pareto:1us:1us"}, `--latency: dist: "pareto" is not constant`},
		{[]string{"--fail", "3"}, `--fail "3": want NODES@TIME`},
		{[]string{"--fail", "x@1ms"}, `--fail "x@1ms": want nodes`},
		{[]string{"--restart", "2@soon"}, `--restart "2@soon": "soon" is not a time`},
		{[]string{"--fail", "99@1ms"}, `--fail "99@1ms": 99-99 is not a range of nodes 0 … 15`},
		{[]string{"--partition", "0-3|a@1ms"}, `--partition "0-3|a@1ms": want nodes`},
		{[]string{"--shift-nodes", "0-3", "--shift-load", "0"}, "--shift-load 0: want a host load in (0, 1]"},
		{[]string{"--shift-nodes", "0-3", "--shift-at", "2ms", "--shift-until", "1ms"}, "--shift-until 1ms: must be after --shift-at 2ms"},
		{[]string{"--progress", "maybe"}, `--progress "maybe": want auto, on or off`},
		{[]string{"--scenario", "/nonexistent.json"}, "--scenario: open /nonexistent.json"},
		{[]string{"extra"}, "unknown command"},
		{[]string{"--nodes", "1000000", "--records", "60000000"}, "sim: nodes: 1000000 nodes with 26624 bytes of regions each need more than 8 GiB"},
	} {
		code, _, errs := simRun(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestSimProgress: --progress on draws the bar on stderr; --json alone
// does not.
func TestSimProgress(t *testing.T) {
	_, _, errs := simRun(t, "--nodes", "4", "--messages", "3000", "--progress", "on")
	if !strings.Contains(errs, "sim kv") {
		t.Errorf("no progress bar: %q", errs)
	}
	_, out, errs := simRun(t, "--nodes", "4", "--messages", "3000", "--json")
	if errs != "" || !strings.HasPrefix(out, "{") {
		t.Errorf("--json: stderr %q", errs)
	}
}
