package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"demo", "--time", "2ms"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"alu-loop", "fnv1a", "binary-search", "pointer-chase", "Every engine returned the expected r0"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
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
