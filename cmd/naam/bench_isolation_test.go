package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBenchIsolation(t *testing.T) {
	var r isolationResult
	benchDoc(t, &r, "isolation", "--ops", "200", "--victim-rate", "2000", "--aggressor-calls", "8", "--warmup", "50ms")
	if len(r.Modes) != 3 || r.Modes[0].Mode != "partition" || r.Modes[1].Mode != "fair" || r.Modes[2].Mode != "fifo" ||
		!r.Modes[0].Fair || !r.Modes[0].Partition || !r.Modes[1].Fair || r.Modes[1].Partition || r.Modes[2].Fair || r.Modes[2].Partition {
		t.Fatalf("%+v", r)
	}
	if r.VictimBound != 15 || r.AggressorBound < 1900 || r.AggressorBound > 2000 || r.NICCores != 2 {
		t.Errorf("bounds %d %d, %d NIC cores", r.VictimBound, r.AggressorBound, r.NICCores)
	}
	for _, m := range r.Modes {
		if m.VictimOps != 200 || m.OpsPerSec <= 0 || m.P50us <= 0 || m.P99us < m.P50us || m.SoloP99us < m.SoloP50us || m.SoloP50us <= 0 {
			t.Errorf("victim %+v", m)
		}
		if m.VictimP99Ratio != m.P99us/m.SoloP99us {
			t.Errorf("victim_p99_ratio %.3f, want %.3f", m.VictimP99Ratio, m.P99us/m.SoloP99us)
		}
		if m.AggressorOpsPerSec <= 0 || m.NICBusy <= 0 || m.NICBusy > 1.2 || m.VictimDropped != 0 {
			t.Errorf("aggressor %+v", m)
		}
	}
	if r.Rounds != 3 || r.Mode != "partition" || r.NICBusy != r.Modes[0].NICBusy {
		t.Errorf("rounds %d, mode %q, nic_busy %.3f; want the default 3 and the first mode's", r.Rounds, r.Mode, r.NICBusy)
	}
	for _, m := range r.Modes {
		if len(m.SoloP99Rounds) != 3 || len(m.P99Rounds) != 3 || slices.Max(m.P99Rounds) < m.P99us {
			t.Errorf("%s: per-round p99s %v %v (pooled %.1f)", m.Mode, m.SoloP99Rounds, m.P99Rounds, m.P99us)
		}
	}
	if r.VictimP99Ratio != r.Modes[0].VictimP99Ratio || r.AggressorOpsPerSec != r.Modes[0].AggressorOpsPerSec {
		t.Errorf("top level %.3f %.0f, want the first mode's", r.VictimP99Ratio, r.AggressorOpsPerSec)
	}
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"bench", "isolation", "--modes", "fair", "--ops", "50", "--duration", "0", "--victim-rate", "5000",
		"--aggressor-calls", "4", "--warmup", "10ms", "--rounds", "1", "--progress", "off"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"isolation: victim probe (bound 15)", "2 paced NIC cores, placement nic, 1 rounds", "mode  solo p99 µs", "\nfair "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestNICFlagErrors: a bad NIC flag of naam node or naam bench is a usage
// error naming the flag (or the config file's field).
func TestNICFlagErrors(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "node.json")
	if err := os.WriteFile(conf, []byte(`{"tenant_quota": ["2:weight=9x"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"node", "--host-load", "1.5"}, "--host-load 1.5: want 0 … 1"},
		{[]string{"node", "--host-load", "x"}, `invalid argument "x" for "--host-load"`},
		{[]string{"node", "--placement", "gpu"}, `--placement: placement "gpu": want auto, nic, host or steer`},
		{[]string{"node", "--tenant-quota", "x"}, `--tenant-quota "x": want TENANT:weight=W,max-queued=N`},
		{[]string{"node", "--tenant-quota", "2:weight=0"}, `--tenant-quota "2:weight=0": weight "0": want 1 … 65536`},
		{[]string{"node", "--tenant-quota", "2:max-queued=-1"}, `max-queued "-1": want 1 … 1048576`},
		{[]string{"node", "--tenant-quota", "2:burst=3"}, `"burst=3": want weight=W or max-queued=N`},
		{[]string{"node", "--tenant-quota", "2:weight=2", "--tenant-quota", "2:weight=3"}, "tenant 2 given twice"},
		{[]string{"node", "--config", conf}, `node.json: tenant_quota: invalid argument "2:weight=9x" for "--tenant-quota" flag: --tenant-quota "2:weight=9x": weight "9x": want 1 … 65536`},
		{[]string{"bench", "kv", "--host-load", "-1"}, "--host-load -1: want 0 … 1"},
		{[]string{"bench", "isolation", "--aggressor-calls", "0"}, "--aggressor-calls must be 1…4096"},
		{[]string{"bench", "isolation", "--rounds", "0"}, "--rounds must be 1…100"},
		{[]string{"bench", "isolation", "--modes", "wfq"}, `--modes: "wfq" is not partition, fair or fifo`},
	} {
		var stdout, stderr bytes.Buffer
		code := doMain(tc.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("naam %v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
