package verifier

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/verifygen"
	"github.com/naam-project/naam/vm"
)

// fuzzLimits are the limits of the fuzz targets: the defaults, without
// the clock, so that a verdict does not depend on the machine's load.
var fuzzLimits = Limits{Time: -1}

// FuzzVerify feeds arbitrary slot streams to the verifier in raw mode: it
// must never panic, never use more than its limits, and whatever it
// accepts must run in the checked VM without a fault and within its
// proven bound, on the fuzzed memory. The seeds are the test cases and
// the resource shapes: deep call trees and long branch chains.
func FuzzVerify(f *testing.F) {
	files, _ := filepath.Glob("testdata/cases/*.s")
	for _, file := range files {
		vc, err := parseCase(file)
		if err != nil || vc.raw != nil || vc.memSize != 64 {
			continue
		}
		insns, err := bytecode.Assemble(vc.src)
		if err != nil {
			continue
		}
		raw, err := bytecode.Encode(insns)
		if err != nil {
			continue
		}
		f.Add(raw, make([]byte, 64))
	}
	for _, s := range []shapeSize{
		{verifygen.ShapeCallFanOut, 0, 2}, {verifygen.ShapeCallFanOut, 0, 3},
		{verifygen.ShapeCallSwitch, 0, 4}, {verifygen.ShapeSharedTail, 200, 20},
		{verifygen.ShapeBranchChain, 2000, 0}, {verifygen.ShapeDiamonds, 2000, 0},
		{verifygen.ShapeStackDiamonds, 500, 0}, {verifygen.ShapeLoopBody, 200, 0},
	} {
		raw, err := bytecode.Encode(verifygen.Build(s.shape, s.n, s.fan).Insns)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, make([]byte, 64))
	}
	f.Fuzz(func(t *testing.T, raw, mem []byte) {
		insns, err := bytecode.Decode(raw)
		if err != nil {
			return
		}
		mem = append(mem, make([]byte, 64)...)[:64]
		rep, m, err := verify(insns, Config{Raw: true, MemSize: 64, Budget: 100_000, Limits: fuzzLimits})
		within(t, m, fuzzLimits)
		if err != nil {
			var verr *Error
			if !errors.As(err, &verr) {
				t.Fatalf("rejection is not a *verifier.Error: %v", err)
			}
			return
		}
		p, err := vm.Load(insns)
		if err != nil {
			t.Fatalf("verified but the VM refuses it: %v", err)
		}
		vmach := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
		if _, err := vmach.RunRaw(p, mem); err != nil {
			text, _ := bytecode.Disassemble(insns)
			t.Fatalf("verified (max-insns=%d) but faults: %v\n%s", rep.MaxInsns, err, text)
		}
		if vmach.Executed() > rep.MaxInsns {
			t.Fatalf("executed %d, proven bound %d", vmach.Executed(), rep.MaxInsns)
		}
	})
}

// FuzzVerifyShapes verifies the resource shapes at fuzzed sizes under
// fuzzed limits: every verification stays within its limits, and is
// either refused for one of them or accepted with the shape's exact
// bound, which a run in the checked VM does not exceed.
func FuzzVerifyShapes(f *testing.F) {
	for _, s := range verifygen.Shapes() {
		f.Add(uint8(s), uint16(300), uint8(3), uint16(0), uint32(0), uint8(0))
		f.Add(uint8(s), uint16(3000), uint8(8), uint16(500), uint32(20_000), uint8(1))
	}
	f.Fuzz(func(t *testing.T, shape uint8, n uint16, fan uint8, states uint16, steps uint32, calls uint8) {
		s := verifygen.Shapes()[int(shape)%len(verifygen.Shapes())]
		p := verifygen.Build(s, int(n)%5000, int(fan)%9)
		lim := Limits{Time: -1, CallStrings: int(calls%4) - 1}
		if states != 0 {
			lim.States = 16 + int(states)
		}
		if steps != 0 {
			lim.Steps = 1000 + int64(steps%4_000_000)
		}
		rep, m, err := verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: lim})
		within(t, m, lim)
		if err != nil {
			var verr *Error
			if !errors.As(err, &verr) || verr.Code != CodeVerifierBudget {
				t.Fatalf("%s n=%d fan=%d: %v", s, n, fan, err)
			}
			return
		}
		if rep.MaxInsns != p.MaxInsns {
			t.Fatalf("%s n=%d fan=%d: bound %d, want %d", s, n, fan, rep.MaxInsns, p.MaxInsns)
		}
		if rep.MaxInsns > 1_000_000 {
			return // a run would take too long for a fuzz input
		}
		prog, err := vm.Load(p.Insns)
		if err != nil {
			t.Fatal(err)
		}
		vmach := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
		if _, err := vmach.RunRaw(prog, make([]byte, p.MemSize)); err != nil {
			t.Fatalf("%s n=%d fan=%d: verified but faults: %v", s, n, fan, err)
		}
	})
}
