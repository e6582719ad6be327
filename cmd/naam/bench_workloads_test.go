package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchDoc runs naam bench with args and --json and decodes the result
// into doc, refusing fields doc does not have.
func benchDoc(t *testing.T, doc any, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := doMain(append([]string{"bench", "--json", "--duration", "0", "--clients", "2", "--outstanding", "2", "--progress", "off"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("naam bench %v: exit %d: %s", args, code, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		t.Fatalf("the output is not the result JSON: %v\n%s", err, stdout.String())
	}
}

func TestBenchMICA(t *testing.T) {
	var r micaResult
	benchDoc(t, &r, "mica", "--records", "3000", "--ops", "2000", "--mix", "a", "--dist", "uniform")
	m := modes(r.Result)
	am, rdma := m["am"], m["rdma"]
	if len(r.Modes) != 2 || !strings.Contains(r.Workload, "mica ycsb-a uniform, 3000 records") {
		t.Fatalf("%+v", r)
	}
	// A GET is 1 round trip by message, 2 by READs; a PUT 1 and 7.
	if am.RoundTripsPerOp != 1 || rdma.RoundTripsPerOp < 3.5 || rdma.RoundTripsPerOp > 5.5 {
		t.Errorf("round trips: am %.2f, rdma %.2f", am.RoundTripsPerOp, rdma.RoundTripsPerOp)
	}
	for _, x := range r.Modes {
		if x.OpsPerSec <= 0 || x.P50us <= 0 || x.P99us < x.P50us {
			t.Errorf("%+v", x)
		}
	}
	if len(r.Misses) != 2 || r.Misses["am"] != 0 || r.Misses["rdma"] != 0 {
		t.Errorf("misses %v: a store sized for its records lost some", r.Misses)
	}
}

// TestBenchMICAMAC runs the store with SipHash keys on both nodes and
// writes a CPU profile of the run.
func TestBenchMICAMAC(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	var r micaResult
	benchDoc(t, &r, "mica", "--records", "2000", "--ops", "1000", "--modes", "am", "--mac", "siphash-2-4-128", "--cpuprofile", prof)
	if len(r.Modes) != 1 || r.Modes[0].OpsPerSec <= 0 || !strings.HasSuffix(r.Workload, ", keys siphash-2-4-128, 3 rounds") {
		t.Errorf("%+v", r)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}
}

func TestBenchMICAMemcached(t *testing.T) {
	if _, err := exec.LookPath("memcached"); err != nil {
		t.Skip("memcached is not installed (apt-get install memcached; .ci/run installs it)")
	}
	var r micaResult
	benchDoc(t, &r, "mica", "--records", "2000", "--ops", "2000", "--modes", "am", "--against", "memcached")
	m := modes(r.Result)
	if len(r.Modes) != 2 || m["memcached"].OpsPerSec <= 0 || m["memcached"].RoundTripsPerOp != 1 || m["am"].RoundTripsPerOp != 1 {
		t.Errorf("%+v", r)
	}
}

func TestBenchBTree(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "btree.png")
	var r btreeResult
	benchDoc(t, &r, "btree", "--records", "20000", "--fanout", "16", "--ops", "1000", "--mix", "c", "--plot", plot)
	m := modes(r.Result)
	H := float64(r.Height)
	if len(r.Modes) != 5 || r.Fanout != 16 || r.Height != 4 || r.CacheLevels != 2 {
		t.Fatalf("%+v", r)
	}
	// Lookups: 1 round trip by message, a READ per level (the Go descent,
	// and the lookup handler run at the client), two fewer with the top
	// two levels cached (less the cache's first fills), by the Go descent
	// and by the handler at the client.
	if m["am"].RoundTripsPerOp != 1 || m["rdma"].RoundTripsPerOp != H || m["client"].RoundTripsPerOp != H {
		t.Errorf("round trips: %+v", m)
	}
	for _, cached := range []string{"rdma-cached", "client-cached"} {
		if rt := m[cached].RoundTripsPerOp; rt < H-2 || rt > H-1.5 {
			t.Errorf("%s: %.2f round trips, want %.0f…%.1f", cached, rt, H-2, H-1.5)
		}
	}
	wantPNG(t, plot)
	var u btreeResult
	benchDoc(t, &u, "btree", "--records", "5000", "--ops", "1000", "--mix", "a", "--modes", "am,rdma")
	if m := modes(u.Result); len(u.Modes) != 2 || m["am"].RoundTripsPerOp != 1 || m["rdma"].RoundTripsPerOp <= float64(u.Height) {
		t.Errorf("ycsb-a: %+v", u)
	}
}

func TestBenchOffloads(t *testing.T) {
	var r offloadsResult
	benchDoc(t, &r, "offloads", "--programs", "30", "--tenants", "7", "--ops", "1000", "--background", "2", "--rounds", "2")
	if len(r.Modes) != 2 || r.Modes[0].Programs != 1 || r.Modes[1].Programs != 30 || r.Programs != 30 || r.Tenants != 7 || r.Background != 2 || r.Rounds != 2 {
		t.Fatalf("%+v", r)
	}
	for _, m := range r.Modes {
		if m.Mode != "am" || m.OpsPerSec <= 0 || m.P50us <= 0 || m.P99us < m.P50us || m.RoundTripsPerOp != 1 || m.BackgroundCalls == 0 {
			t.Errorf("%+v", m)
		}
	}
	if r.P99Ratio != r.Modes[1].P99us/r.Modes[0].P99us {
		t.Errorf("p99_ratio %.3f, want %.3f", r.P99Ratio, r.Modes[1].P99us/r.Modes[0].P99us)
	}
	for _, d := range []durationStats{r.InstallMs, r.UninstallMs} {
		if d.Count != 2*29+1 || d.P50 <= 0 || d.P99 < d.P50 || d.Max < d.P99 || d.Total < d.Max {
			t.Errorf("durations %+v", d)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"bench", "offloads", "--programs", "3", "--tenants", "3", "--ops", "200", "--duration", "0", "--progress", "off"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"programs  probes", "p99 ratio (3 programs / 1)", "install:   p50"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout.String())
		}
	}
}
