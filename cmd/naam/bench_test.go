package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/bench/workload"
)

// benchJSON runs naam bench with args and --json and decodes the result.
func benchJSON(t *testing.T, args ...string) workload.Result {
	t.Helper()
	var r workload.Result
	benchDoc(t, &r, args...)
	return r
}

func modes(r workload.Result) map[string]workload.ModeResult {
	m := map[string]workload.ModeResult{}
	for _, x := range r.Modes {
		m[x.Mode] = x
	}
	return m
}

func TestBenchKV(t *testing.T) {
	r := benchJSON(t, "kv", "--records", "2000", "--ops", "2000", "--mix", "a", "--dist", "uniform")
	m := modes(r)
	am, rdma := m["am"], m["rdma"]
	if len(r.Modes) != 2 || !strings.Contains(r.Workload, "ycsb-a uniform, 2000 records") {
		t.Fatalf("%+v", r)
	}
	if am.RoundTripsPerOp != 1 || rdma.RoundTripsPerOp < 2 {
		t.Errorf("round trips: am %.2f, rdma %.2f", am.RoundTripsPerOp, rdma.RoundTripsPerOp)
	}
	for _, x := range r.Modes {
		if x.OpsPerSec <= 0 || x.P50us <= 0 || x.P99us < x.P50us {
			t.Errorf("%+v", x)
		}
	}
}

func TestBenchChaseAndPlot(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "chase.png")
	r := benchJSON(t, "chase", "--ops", "40", "--hops", "64", "--plot", plot)
	m := modes(r)
	if m["am"].RoundTripsPerOp != 1 || m["rdma"].RoundTripsPerOp != 64 {
		t.Errorf("round trips: %+v", m)
	}
	wantPNG(t, plot)
}

func TestBenchRPC(t *testing.T) {
	r := benchJSON(t, "rpc", "--ops", "2000", "--accounts", "64", "--mix", "a")
	if len(r.Modes) != 1 || r.Modes[0].Mode != "am" || r.Modes[0].RoundTripsPerOp != 1 {
		t.Errorf("%+v", r)
	}
}

func TestBenchMemcached(t *testing.T) {
	if _, err := exec.LookPath("memcached"); err != nil {
		t.Skip("memcached is not installed (apt-get install memcached; .ci/run installs it)")
	}
	r := benchJSON(t, "kv", "--records", "2000", "--ops", "2000", "--modes", "am", "--against", "memcached")
	m := modes(r)
	if len(r.Modes) != 2 || m["memcached"].OpsPerSec <= 0 || m["memcached"].RoundTripsPerOp != 1 {
		t.Errorf("%+v", r)
	}
}

func TestBenchTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"bench", "kv", "--records", "500", "--ops", "500", "--duration", "0", "--progress", "on"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The default 3 rounds split the 500 ops exactly: 167, 167, 166.
	for _, want := range []string{", 3 rounds; ", "mode  ops  ", "am    500", "rdma  500"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestBenchErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "nope"}, `"nope" is not a workload`},
		{[]string{"bench", "kv", "--mix", "z"}, "z"},
		{[]string{"bench", "kv", "--dist", "pareto"}, "pareto"},
		{[]string{"bench", "kv", "--modes", "am,nic"}, `"nic" is not am or rdma`},
		{[]string{"bench", "kv", "--against", "redis"}, "the baseline is memcached"},
		{[]string{"bench", "chase", "--against", "memcached"}, "only the kv and mica workloads"},
		{[]string{"bench", "rpc", "--modes", "rdma"}, "rpc has no rdma mode"},
		{[]string{"bench", "kv", "--duration", "0"}, "--duration or --ops must be set"},
		{[]string{"bench", "chase", "--hops", "65"}, "--hops must be 1…64"},
		{[]string{"bench", "mica", "--value-size", "2000"}, "--value-size must be 8…1024 for mica"},
		{[]string{"bench", "kv", "--modes", "rdma-cached"}, `"rdma-cached" is not am or rdma`},
		{[]string{"bench", "btree", "--against", "memcached"}, "only the kv and mica workloads"},
		{[]string{"bench", "btree", "--fanout", "24"}, "fanout 24 is not a power of two"},
		{[]string{"bench", "btree", "--cache-levels", "-1"}, "--cache-levels -1: the levels from the root to cache, 0 or more"},
		{[]string{"bench", "offloads", "--programs", "0"}, "--programs must be 1…10000"},
		{[]string{"bench", "offloads", "--programs", "5", "--tenants", "6"}, "--tenants must be 1…1000 and at most --programs"},
		{[]string{"bench", "offloads", "--background", "-1"}, "--background must be 0 or more"},
		{[]string{"bench", "offloads", "--rounds", "0"}, "--rounds must be 1…100"},
		{[]string{"bench", "kv", "--rounds", "0"}, "--rounds must be 1…100"},
		{[]string{"bench", "mica", "--ops", "2", "--duration", "0"}, "--ops 2 is fewer than --rounds 3"},
		{[]string{"bench", "kv", "--mac", "md5"}, `--mac: wire: MAC algorithm "md5" is not one of`},
		{[]string{"bench", "offloads", "--mac", "siphash-2-4-128"}, "--mac: only kv, chase, rpc, mica and btree take it"},
		{[]string{"bench", "shift", "--mac", "md5"}, `--mac: wire: MAC algorithm "md5"`},
		{[]string{"bench", "shift", "--mac", "siphash-2-4-128"}, "--mac: only kv, chase, rpc, mica and btree take it, not shift"},
		{[]string{"bench", "kv", "--xdp", "--mac", "siphash-2-4-128"}, "--mac: --xdp runs its own keys"},
		{[]string{"bench", "kv", "--cpuprofile", "/nonexistent/dir/cpu.prof"}, "--cpuprofile: open /nonexistent/dir/cpu.prof"},
	} {
		var stdout, stderr bytes.Buffer
		if code := doMain(tc.args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// wantPNG fails t unless path holds a PNG image.
func wantPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("plot: %v", err)
	}
}

// turnTarget records, in a log shared by every mode, which mode ran each
// operation.
type turnTarget struct {
	mode string
	mu   *sync.Mutex
	log  *[]string
}

func (t turnTarget) Get(context.Context, uint64) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := *t.log; len(l) == 0 || l[len(l)-1] != t.mode {
		*t.log = append(*t.log, t.mode)
	}
	return 1, nil
}

func (t turnTarget) Put(ctx context.Context, key uint64, _ []byte) (int, error) {
	return t.Get(ctx, key)
}

// TestRunModesTakeTurns: the modes run in turn, one slice of each per
// round, the ops spread exactly; each mode's targets are made once and
// stopped at the end.
func TestRunModesTakeTurns(t *testing.T) {
	var mu sync.Mutex
	var log []string
	made, stopped := map[string]int{}, map[string]int{}
	targets := func(mode string) ([]workload.Target, func(), error) {
		made[mode]++
		return []workload.Target{turnTarget{mode, &mu, &log}}, func() { stopped[mode]++ }, nil
	}
	f := benchFlags{rounds: 3, progress: "off"}
	cfg := workload.Config{Ops: 100, Clients: 1, Outstanding: 1}
	runs, err := runModes(context.Background(), io.Discard, []string{"am", "rdma", "memcached"}, cfg, f, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"am", "rdma", "memcached", "am", "rdma", "memcached", "am", "rdma", "memcached"}
	if !slices.Equal(log, want) {
		t.Errorf("turns %v, want %v", log, want)
	}
	for _, r := range runs {
		if r.Stats.Ops != 100 {
			t.Errorf("%s ran %d ops over the rounds, want 100", r.Mode, r.Stats.Ops)
		}
		if made[r.Mode] != 1 || stopped[r.Mode] != 1 {
			t.Errorf("%s: targets made %d times, stopped %d, want once each", r.Mode, made[r.Mode], stopped[r.Mode])
		}
	}
}

func TestSliceOf(t *testing.T) {
	cfg := workload.Config{Ops: 10, Duration: 3 * time.Second, Seed: 0}
	var ops uint64
	seeds := map[uint64]bool{}
	for r := range 3 {
		s := sliceOf(cfg, 3, r)
		ops += s.Ops
		if s.Duration != time.Second {
			t.Errorf("round %d: %v, want 1s", r, s.Duration)
		}
		seeds[s.Seed] = true
	}
	// Seed 0 means 1 (workload.Config): round 1 must not be seed 1.
	if ops != 10 || len(seeds) != 3 || seeds[1] {
		t.Errorf("ops %d, seeds %v", ops, seeds)
	}
}
