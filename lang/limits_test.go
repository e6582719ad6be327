package lang

import (
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// TestLimitsMatchABI: lang is a leaf and restates the ABI's limits; this
// test (test code may import anything) keeps the two in step. The loop
// budget, insnBudget, mirrors verifier.DefaultBudget; that package is left
// out here so lang's tests do not depend on the verifier building.
func TestLimitsMatchABI(t *testing.T) {
	for _, c := range []struct {
		name       string
		have, want int64
	}{
		{"frames", maxFrames, bytecode.MaxFrames},
		{"regions", maxRegions, bytecode.MaxRegions},
		{"region size", maxRegionSize, bytecode.MaxRegionSize},
		{"stack", stackSize, bytecode.StackSize},
		{"reads", maxReads, bytecode.MaxAccessRanges},
		{"largest reserved code", bytecode.FailForward, bytecode.MaxErrorCode},
	} {
		if c.name == "largest reserved code" {
			if c.have > c.want {
				t.Errorf("reserved code %#x exceeds MaxErrorCode %#x", c.have, c.want)
			}
			continue
		}
		if c.have != c.want {
			t.Errorf("%s: lang has %d, the ABI %d", c.name, c.have, c.want)
		}
	}
}
