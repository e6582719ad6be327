package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/conformance"
	"github.com/naam-project/naam/vm/jit"
)

// TestVMConformance runs every conformance test through `naamc vm` exactly
// as an outside check would: the program as a .s file, the memory as
// --mem-hex, r0 read from the last line of stdout; with --tier interp and
// with --tier jit (where the build has cgo).
func TestVMConformance(t *testing.T) {
	for _, tier := range []string{"interp", "jit"} {
		t.Run(tier, func(t *testing.T) {
			if tier == "jit" {
				if err := jit.Available(); err != nil {
					t.Skip(err)
				}
			}
			vmConformance(t, tier)
		})
	}
}

func vmConformance(t *testing.T, tier string) {
	_, tests := conformance.Tests(t)
	tmp := t.TempDir()
	passed := 0
	for _, tc := range tests {
		prog := filepath.Join(tmp, tc.Name+".s")
		if err := os.WriteFile(prog, []byte(tc.Asm), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"vm", "--tier", tier}
		if len(tc.Mem) > 0 {
			args = append(args, "--mem-hex", hex.EncodeToString(tc.Mem))
		}
		var stdout, stderr bytes.Buffer
		code := doMain(append(args, prog), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		got := lines[len(lines)-1]
		if want := fmt.Sprintf("%#x", tc.Result); code != 0 || got != want {
			t.Errorf("%s: exit %d, last line %q, want %q (stderr: %s)", tc.Name, code, got, want, stderr.String())
			continue
		}
		passed++
	}
	t.Logf("naamc vm --tier %s: %d of %d conformance tests pass", tier, passed, len(tests))
}

// TestVMTierFaults: a fault exits 1 with the same reason on stderr in both
// tiers, and --bench prints ns/run last.
func TestVMTierFaults(t *testing.T) {
	if err := jit.Available(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	tests := []struct {
		name, src string
		args      []string
		want      string
	}{
		{"out of bounds", "ldxdw %r0, [%r1+4]\nexit", []string{"--mem-hex", "0001020304050607"}, "insn 0: memory access out of bounds: 8-byte load at 0x300000004 (request+4 (length 8))"},
		{"budget", "mov %r0, 0\nja -1\nexit", []string{"--budget", "100"}, "insn 1: instruction budget exhausted"},
		{"bench", "mov %r0, 5\nexit", []string{"--bench", "10"}, "ns/run: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := filepath.Join(tmp, "p.s")
			if err := os.WriteFile(prog, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			var outs [2]string
			for i, tier := range []string{"interp", "jit"} {
				var stdout, stderr bytes.Buffer
				code := doMain(append(append([]string{"vm", "--tier", tier}, tt.args...), prog), &stdout, &stderr)
				lines := strings.Split(strings.TrimSpace(stdout.String()+stderr.String()), "\n")
				last := lines[len(lines)-1]
				if !strings.Contains(last, tt.want) {
					t.Fatalf("%s: exit %d, last line %q, want %q in it", tier, code, last, tt.want)
				}
				if tt.name != "bench" && code != 1 {
					t.Errorf("%s: exit %d, want 1", tier, code)
				}
				outs[i] = stderr.String()
			}
			if outs[0] != outs[1] {
				t.Errorf("stderr differs: interp %q, jit %q", outs[0], outs[1])
			}
		})
	}
}
