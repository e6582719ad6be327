package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/conformance"
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

// TestVMMemorySize: naamc vm refuses memory of more than 2^32-1 bytes (an
// offset of 2^32 would be the next segment's), naming the size, before
// reading it, in both tiers; the files are sparse, so nothing is
// allocated.
func TestVMMemorySize(t *testing.T) {
	tmp := t.TempDir()
	prog := filepath.Join(tmp, "p.s")
	if err := os.WriteFile(prog, []byte("mov %r0, %r2\nexit"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		size int64
		code int
		want string // last line of stdout, or stderr
	}{
		{8, 0, "0x8"},
		{1 << 20, 0, "0x100000"},
		{1 << 32, 2, "4294967296 bytes of memory, more than one segment holds (4294967295)"},
		{1<<32 + 1, 2, "4294967297 bytes of memory, more than one segment holds (4294967295)"},
		{1 << 40, 2, "1099511627776 bytes of memory, more than one segment holds (4294967295)"},
	}
	for _, tier := range []string{"interp", "jit"} {
		if tier == "jit" && jit.Available() != nil {
			continue
		}
		for _, tt := range tests {
			mem := filepath.Join(tmp, fmt.Sprintf("mem-%d", tt.size))
			f, err := os.Create(mem)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(tt.size); err != nil {
				f.Close()
				t.Skipf("sparse file of %d bytes: %v", tt.size, err)
			}
			f.Close()
			var stdout, stderr bytes.Buffer
			code := doMain([]string{"vm", "--tier", tier, "--mem", mem, prog}, &stdout, &stderr)
			have := strings.TrimSpace(stdout.String())
			if code != 0 {
				have = strings.TrimSpace(stderr.String())
			}
			if code != tt.code || !strings.Contains(have, tt.want) {
				t.Errorf("%s, %d bytes: exit %d, %q; want exit %d, %q", tier, tt.size, code, have, tt.code, tt.want)
			}
			os.Remove(mem)
		}
	}
}
