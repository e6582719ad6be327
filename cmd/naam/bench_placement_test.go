package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchKVPlacement: --placement all runs host, nic, client and auto
// (a GET that met a busy bucket runs again: placements ≥ GETs); every GET
// of the check ran alike at the client and at the node, at 2 round trips
// each at the client.
func TestBenchKVPlacement(t *testing.T) {
	var r placementResult
	benchDoc(t, &r, "kv", "--records", "2000", "--ops", "6000", "--mix", "a", "--dist", "zipfian", "--placement", "all", "--host-load", "0.5")
	if len(r.Modes) != 4 || r.Modes[0].Mode != "host" || r.Modes[1].Mode != "nic" || r.Modes[2].Mode != "client" || r.Modes[3].Mode != "auto" {
		t.Fatalf("%+v", r)
	}
	if !r.Paced || r.Rounds != 3 {
		t.Errorf("paced %v, rounds %d: want the cores paced by default and the default 3 rounds", r.Paced, r.Rounds)
	}
	client, auto := r.Modes[2], r.Modes[3]
	if client.AtNode != 0 || client.AtClient < client.Gets || client.Gets == 0 || client.RoundTripsPerGet < 2 {
		t.Errorf("client: %+v", client)
	}
	for _, node := range r.Modes[:2] {
		if node.AtClient != 0 || node.AtNode < node.Gets || node.Gets == 0 || node.RoundTripsPerGet != 1 {
			t.Errorf("%s: %+v", node.Mode, node)
		}
	}
	if auto.AtClient+auto.AtNode < auto.Gets || auto.Probes == 0 {
		t.Errorf("auto: %+v", auto)
	}
	if r.Mismatches != 0 || r.CheckOps != placementCheckOps || r.CheckGets < placementCheckOps/3 || r.CheckRoundTripsPerGet < 2 {
		t.Errorf("check: %+v", r)
	}
}

// TestBenchKVPlacementMAC: the placements' peers dial with the nodes'
// SipHash keys (a peer of the default keys gets no answer).
func TestBenchKVPlacementMAC(t *testing.T) {
	var r placementResult
	benchDoc(t, &r, "kv", "--records", "500", "--ops", "300", "--placement", "host", "--mac", "siphash-2-4-128")
	if len(r.Modes) != 1 || r.Modes[0].Gets == 0 || !strings.Contains(r.Workload, ", keys siphash-2-4-128, 3 rounds") {
		t.Errorf("%+v", r)
	}
}

func TestBenchKVPlacementUsage(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"kv --placement far", `placement "far": want auto, nic, host or steer (the node's policy), or for kv client, node or all`},
		{"mica --placement client", "--placement client is kv's"},
		{"kv --placement all --modes am", "--placement all is kv's"},
		{"chase --placement node", "--placement node is kv's"},
		{"kv --placement all --rounds 0", "--rounds must be 1…100"},
		{"kv --placement host --ops 0 --duration 2ns --rounds 3", "--duration 2ns is too short for 3 rounds"},
	} {
		var stdout, stderr bytes.Buffer
		if code := doMain(append([]string{"bench", "--ops", "1"}, strings.Fields(tc.args)...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("naam bench %s: exit %d, %q; want exit 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
