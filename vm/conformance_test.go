package vm_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/conformance"
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
			if err := runConformance(tc); err != nil {
				t.Fatal(err)
			}
			passed++
		})
	}
	t.Logf("conformance: %d of %d pass, %d skipped (suite at %s)", passed, len(tests), len(conformanceSkips), dir)
	if want := len(tests) - len(conformanceSkips); passed != want && !t.Failed() {
		t.Errorf("%d passed, want %d", passed, want)
	}
}

// runConformance runs one suite test and returns why it failed, or nil. A
// test with an -- error section passes when loading or running fails with
// an error that contains that text.
func runConformance(tc conformance.Test) error {
	insns, err := bytecode.Assemble(tc.Asm)
	if err != nil {
		return fmt.Errorf("assemble: %v", err)
	}
	if tc.Raw != nil {
		raw, err := bytecode.Encode(insns)
		if err != nil {
			return err
		}
		if want := tc.Raw; !bytes.Equal(raw, want) {
			return fmt.Errorf("encoding = % x, -- raw says % x", raw, want)
		}
	}
	p, err := vm.Load(insns)
	switch {
	case err != nil && tc.Error == "":
		return fmt.Errorf("load: %v", err)
	case err != nil && !strings.Contains(err.Error(), tc.Error):
		return fmt.Errorf("load error %q, suite expects %q", err, tc.Error)
	case err != nil:
		return nil // the expected load-time rejection
	}
	for _, unchecked := range []bool{false, true} {
		m := vm.NewMachine(vm.Options{Helpers: vm.RawHelpers(), Unchecked: unchecked})
		got, err := m.RunRaw(p, bytes.Clone(tc.Mem))
		switch {
		case tc.Error != "" && err == nil:
			return fmt.Errorf("unchecked=%v: r0 = %#x, want error %q", unchecked, got, tc.Error)
		case tc.Error != "" && !strings.Contains(err.Error(), tc.Error):
			return fmt.Errorf("unchecked=%v: error %q, suite expects %q", unchecked, err, tc.Error)
		case tc.Error != "":
			return nil // the expected fault; never run a faulting program unchecked
		case err != nil:
			return fmt.Errorf("unchecked=%v: %v", unchecked, err)
		case got != tc.Result:
			return fmt.Errorf("unchecked=%v: r0 = %#x, want %#x", unchecked, got, tc.Result)
		}
	}
	return nil
}

// TestRunConformance pins how runConformance judges a test, the -- error
// cases in particular (the suite at hand may have none).
func TestRunConformance(t *testing.T) {
	tests := []struct {
		name string
		have conformance.Test
		want string // "" when the test must pass
	}{
		{"result", conformance.Test{Asm: "mov %r0, 7\nexit", Result: 7, HasResult: true}, ""},
		{"wrong result", conformance.Test{Asm: "mov %r0, 7\nexit", Result: 8, HasResult: true}, "r0 = 0x7, want 0x8"},
		{"expected fault", conformance.Test{Asm: "ldxb %r0, [%r1+4]\nexit", Mem: []byte{1}, Error: "out of bounds"}, ""},
		{"fault with other text", conformance.Test{Asm: "ldxb %r0, [%r1+4]\nexit", Mem: []byte{1}, Error: "division by zero"}, `suite expects "division by zero"`},
		{"expected fault missing", conformance.Test{Asm: "mov %r0, 0\nexit", Error: "out of bounds"}, `want error "out of bounds"`},
		{"expected load error", conformance.Test{Asm: "lddw %r0, region[300]+0\nexit", Error: "region index 300 out of range"}, ""},
		{"load error with other text", conformance.Test{Asm: "lddw %r0, region[300]+0\nexit", Error: "bad jump"}, `load error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runConformance(tt.have)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("failed: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
