package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchKVPlacement: --placement all runs client, node and auto (a GET
// that met a busy bucket runs again: placements ≥ GETs); every GET of the
// check ran alike at the client and at the node, at 2 round trips each at
// the client.
func TestBenchKVPlacement(t *testing.T) {
	var r placementResult
	benchDoc(t, &r, "kv", "--records", "2000", "--ops", "1500", "--mix", "a", "--dist", "zipfian", "--placement", "all")
	if len(r.Modes) != 3 || r.Modes[0].Mode != "client" || r.Modes[1].Mode != "node" || r.Modes[2].Mode != "auto" {
		t.Fatalf("%+v", r)
	}
	client, node, auto := r.Modes[0], r.Modes[1], r.Modes[2]
	if client.AtNode != 0 || client.AtClient < client.Gets || client.Gets == 0 || client.RoundTripsPerGet < 2 {
		t.Errorf("client: %+v", client)
	}
	if node.AtClient != 0 || node.AtNode < node.Gets || node.RoundTripsPerGet != 1 {
		t.Errorf("node: %+v", node)
	}
	if auto.AtClient+auto.AtNode < auto.Gets || auto.Probes == 0 {
		t.Errorf("auto: %+v", auto)
	}
	if r.Mismatches != 0 || r.CheckOps != placementCheckOps || r.CheckGets < placementCheckOps/3 || r.CheckRoundTripsPerGet < 2 {
		t.Errorf("check: %+v", r)
	}
}

func TestBenchKVPlacementUsage(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"kv --placement host", "forcing the node's NIC or host cores is not available"},
		{"kv --placement nic", "forcing the node's NIC or host cores is not available"},
		{"kv --placement far", `--placement "far": want client, node, auto or all`},
		{"mica --placement client", "--placement is kv's"},
		{"kv --placement client --modes am", "--placement is kv's"},
	} {
		var stdout, stderr bytes.Buffer
		if code := doMain(append([]string{"bench", "--ops", "1"}, strings.Fields(tc.args)...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("naam bench %s: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
