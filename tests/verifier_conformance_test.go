package tests

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/conformance"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

// TestVerifierOnConformance verifies every conformance program in raw mode
// with its memory size. Whatever the verifier accepts must run in the
// checked VM without a fault and within the proven bound.
func TestVerifierOnConformance(t *testing.T) {
	_, tests := conformance.Tests(t)
	accepted := 0
	codes := map[verifier.Code]int{}
	for _, tc := range tests {
		insns, err := bytecode.Assemble(tc.Asm)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		rep, err := verifier.Verify(insns, verifier.Config{Raw: true, MemSize: uint64(len(tc.Mem))})
		if err != nil {
			var verr *verifier.Error
			if !errors.As(err, &verr) {
				t.Fatalf("%s: %v", tc.Name, err)
			}
			codes[verr.Code]++
			continue
		}
		accepted++
		p, err := vm.Load(insns)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		m := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
		r0, err := m.RunRaw(p, bytes.Clone(tc.Mem))
		if err != nil {
			t.Errorf("%s: verified (max-insns=%d) but faults: %v", tc.Name, rep.MaxInsns, err)
			continue
		}
		if m.Executed() > rep.MaxInsns {
			t.Errorf("%s: executed %d instructions, proven bound %d", tc.Name, m.Executed(), rep.MaxInsns)
		}
		if tc.HasResult && r0 != tc.Result {
			t.Errorf("%s: r0 = %#x, want %#x", tc.Name, r0, tc.Result)
		}
	}
	var hist []string
	for c, n := range codes {
		hist = append(hist, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(hist)
	t.Logf("%d of %d conformance programs verified in raw mode; rejected: %v", accepted, len(tests), hist)
}
