package main

import (
	"testing"

	"github.com/naam-project/naam/internal/netns"
	"github.com/naam-project/naam/xdp"
)

// skipWithoutXDPLink skips where naam bench --xdp cannot make its link.
func skipWithoutXDPLink(t *testing.T) {
	t.Helper()
	if err := xdp.Probe(); err != nil {
		t.Skipf("the XDP tier cannot run here: %v", err)
	}
	p, err := netns.New()
	if err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	p.Close()
}

// TestBenchXDP runs naam bench null and kv --xdp with a fixed count of
// operations: every mode's operations all succeed through the pipelined
// client, and every am-xdp operation ran in the tier.
func TestBenchXDP(t *testing.T) {
	skipWithoutXDPLink(t)
	tests := []struct {
		name      string
		args      []string
		wantModes []string
		ops       uint64
	}{
		{"null", []string{"null", "--xdp", "--outstanding", "16", "--ops", "3000"}, []string{"udp", "am", "am-xdp"}, 3000},
		{"kv", []string{"kv", "--xdp", "--records", "2000", "--outstanding", "16", "--ops", "2000"}, []string{"am", "am-xdp"}, 2000},
		{"one in flight", []string{"null", "--xdp", "--clients", "1", "--outstanding", "1", "--ops", "300"}, []string{"udp", "am", "am-xdp"}, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r xdpResult
			benchDoc(t, &r, tt.args...)
			m := modes(r.Result)
			if len(r.Modes) != len(tt.wantModes) {
				t.Fatalf("modes %+v, want %v", r.Modes, tt.wantModes)
			}
			for _, name := range tt.wantModes {
				x, ok := m[name]
				if !ok || x.OpsPerSec <= 0 || x.P50us <= 0 || x.P99us < x.P50us || x.RoundTripsPerOp < 1 {
					t.Errorf("mode %s: %+v", name, x)
				}
			}
			if r.XDP["xdp.runs"] < tt.ops {
				t.Errorf("xdp.runs = %d, want at least the %d operations of am-xdp (%v)", r.XDP["xdp.runs"], tt.ops, r.XDP)
			}
			if _, ok := r.Ratios["xdp_ops_over_am_ops"]; !ok {
				t.Errorf("ratios %v", r.Ratios)
			}
		})
	}
}
