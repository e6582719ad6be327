package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"demo", "--time", "2ms", "--records", "2000", "--ops", "2000"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"member chase", "member client", "member kv",
		"answered by chase directly: 120 (asked of chase itself: 120)",
		"Run anywhere", "200 at the client", "200 on NIC cores, 0 on host cores", "0 on NIC cores, 200 on host cores",
		"XDP tier", "Placement shares:", "host congested", "0 lost, 0 run twice", "alu-loop", "fnv1a", "binary-search", "pointer-chase", "Every engine returned the expected r0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestDemoRoundTrips: the table's round trips are the ones it claims:
// 1 against 2 for a GET, 1 against 64 for the chase.
func TestDemoRoundTrips(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"demo", "--time", "1ms", "--records", "1000", "--ops", "1000"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, re := range []string{
		`KV GET\s+active message: hash, probe, copy on the node\s+1000\s+1\.00\s`,
		`KV GET\s+RDMA-style: READ the bucket, READ the value\s+1000\s+2\.\d\d\s`,
		`64-hop chase\s+active message: the walk runs on the node\s+100\s+1\.00\s`,
		`64-hop chase\s+RDMA-style: one READ per hop\s+10\s+64\.00\s`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout.String()) {
			t.Errorf("no line matches %s:\n%s", re, stdout.String())
		}
	}
}

func TestDemoBadFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"demo", "--time", "-1s"}, &stdout, &stderr); code == 0 {
		t.Fatal("negative --time accepted")
	}
	if !strings.Contains(stderr.String(), "--time must be positive") {
		t.Fatalf("stderr = %q", stderr.String())
	}
}
