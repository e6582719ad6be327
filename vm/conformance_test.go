package vm_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/conformance"
	"github.com/naam-project/naam/vm"
)

// conformanceSkips lists suite tests the VM does not run, each with its
// reason. spec/conformance.md must list the same entries; it is empty
// because every test passes.
var conformanceSkips = map[string]string{}

// TestConformance runs every bpf_conformance test in raw mode, checked and
// unchecked, and requires the suite's result.
func TestConformance(t *testing.T) {
	dir, tests := conformance.Tests(t)
	passed := 0
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			if reason, ok := conformanceSkips[tc.Name]; ok {
				t.Skip(reason)
			}
			insns, err := bytecode.Assemble(tc.Asm)
			if err != nil {
				t.Fatalf("assemble: %v", err)
			}
			if tc.Raw != nil {
				raw, err := bytecode.Encode(insns)
				if err != nil {
					t.Fatal(err)
				}
				if want := tc.Raw; !bytes.Equal(raw, want) {
					t.Fatalf("encoding = % x, -- raw says % x", raw, want)
				}
			}
			p, err := vm.Load(insns)
			if err != nil {
				if tc.Error != "" {
					return // an expected load-time rejection
				}
				t.Fatalf("load: %v", err)
			}
			for _, unchecked := range []bool{false, true} {
				m := vm.NewMachine(vm.Options{Helpers: vm.RawHelpers, Unchecked: unchecked})
				mem := bytes.Clone(tc.Mem)
				got, err := m.RunRaw(p, mem)
				switch {
				case tc.Error != "" && err == nil:
					t.Fatalf("unchecked=%v: r0 = %#x, want error %q", unchecked, got, tc.Error)
				case tc.Error != "":
					if !strings.Contains(err.Error(), tc.Error) {
						t.Logf("unchecked=%v: error %q (suite expects %q)", unchecked, err, tc.Error)
					}
					return // never run a faulting program unchecked
				case err != nil:
					t.Fatalf("unchecked=%v: %v", unchecked, err)
				case got != tc.Result:
					t.Fatalf("unchecked=%v: r0 = %#x, want %#x", unchecked, got, tc.Result)
				}
			}
			passed++
		})
	}
	t.Logf("conformance: %d of %d pass, %d skipped (suite at %s)", passed, len(tests), len(conformanceSkips), dir)
	if want := len(tests) - len(conformanceSkips); passed != want && !t.Failed() {
		t.Errorf("%d passed, want %d", passed, want)
	}
}
