package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
)

// TestBenchShift runs a short shift: every call answered once (lost and
// duplicated counted, both 0), the host's share lower while congested
// than before, the JSON's figures consistent, the plot a PNG.
func TestBenchShift(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "shift.png")
	var r shiftResult
	benchDoc(t, &r, "shift", "--shift-warmup", "20ms", "--shift-steady", "100ms", "--shift-congested", "100ms", "--shift-after", "60ms",
		"--shift-calls", "4", "--plot", plot)
	if len(r.Modes) != 1 || r.Modes[0].Mode != "steer" || r.Modes[0].RoundTripsPerOp != 1 || !strings.Contains(r.Workload, "placement steer") {
		t.Fatalf("%+v", r.Modes)
	}
	if r.Calls == 0 || r.Lost != 0 || r.Duplicated != 0 || r.Runs != r.Calls || r.Counter != r.Calls {
		t.Errorf("calls %d, runs %d, counter %d: lost %d, duplicated %d", r.Calls, r.Runs, r.Counter, r.Lost, r.Duplicated)
	}
	if r.HostShareCongested >= r.HostShareBefore || r.HostShareBefore > 1 || r.HostShareCongested < 0 {
		t.Errorf("host share %.2f before, %.2f congested", r.HostShareBefore, r.HostShareCongested)
	}
	if r.CongestAtMs < 120 || r.ReleaseAtMs < r.CongestAtMs+100 || r.EndMs < r.ReleaseAtMs+60 || r.CongestLoad != 0.95 || r.BinMs != 5 {
		t.Errorf("phases %.1f, %.1f, %.1f ms", r.CongestAtMs, r.ReleaseAtMs, r.EndMs)
	}
	if r.ShiftMs != nil && (*r.ShiftMs <= 0 || *r.ShiftMs > r.ReleaseAtMs-r.CongestAtMs) {
		t.Errorf("shift_ms %.1f outside the congested phase", *r.ShiftMs)
	}
	if len(r.Bins) < 10 || r.SteadyOpsPerSec <= 0 || r.MinThroughputShare < 0 || r.MinThroughputShare > r.SteadyMinThroughputShare+1e-9 {
		t.Errorf("%d bins, steady %.0f/s, lowest %.2f (steady phase %.2f)", len(r.Bins), r.SteadyOpsPerSec, r.MinThroughputShare, r.SteadyMinThroughputShare)
	}
	for _, b := range r.Bins {
		if b.HostShare < 0 || b.HostShare > 1 || b.OpsPerSec < 0 {
			t.Errorf("bin %+v", b)
		}
	}
	wantPNG(t, plot)
}

func TestBenchShiftFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shift-load", "1"}, "--shift-load 1: want above 0 and below 1"},
		{[]string{"--shift-steady", "1ms"}, "--shift-steady 1ms: want 10ms … 10s"},
		{[]string{"--shift-calls", "0"}, "--shift-calls 0: want 1 … 4096"},
		{[]string{"--shift-bin", "1h"}, "--shift-bin 1h0m0s: want 1ms … 1s"},
	} {
		var stdout, stderr bytes.Buffer
		if code := doMain(append([]string{"bench", "shift"}, tc.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestShiftProgram: the bench's program is the steering tests' one.
func TestShiftProgram(t *testing.T) {
	var code [2]string
	for i, src := range [][]byte{shiftSource, []byte(testprog.SteerAddSource)} {
		obj, err := compiler.Compile(lang.NewFileSet(), "shift.naam", src)
		if err != nil {
			t.Fatal(err)
		}
		insns, err := obj.Insns()
		if err != nil {
			t.Fatal(err)
		}
		code[i] = fmt.Sprint(insns)
	}
	if code[0] != code[1] {
		t.Error("cmd/naam/shift.naam and testprog.SteerAddSource compile to different code")
	}
}
