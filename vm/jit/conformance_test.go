//go:build cgo

package jit_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/conformance"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestConformance runs every bpf_conformance test through the JIT tier,
// checked, and again unchecked for the programs the verifier accepts in
// raw mode, and requires the suite's result and the interpreter's: the
// same r0, or the same fault text (kind, slot, address), the same memory
// and the same instruction count.
func TestConformance(t *testing.T) {
	dir, tests := conformance.Tests(t)
	passed, unchecked := 0, 0
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			u, err := runConformance(tc)
			if err != nil {
				t.Fatal(err)
			}
			passed++
			if u {
				unchecked++
			}
		})
	}
	t.Logf("conformance through the JIT: %d of %d pass checked, %d also unchecked after the verifier accepted them (suite at %s)", passed, len(tests), unchecked, dir)
	if passed != len(tests) && !t.Failed() {
		t.Errorf("%d passed, want %d", passed, len(tests))
	}
}

func runConformance(tc conformance.Test) (unchecked bool, err error) {
	insns, err := bytecode.Assemble(tc.Asm)
	if err != nil {
		return false, fmt.Errorf("assemble: %v", err)
	}
	code, err := jit.Compile(insns, jit.Options{})
	switch {
	case err != nil && tc.Error != "" && strings.Contains(err.Error(), tc.Error):
		return false, nil // the expected load-time rejection
	case err != nil:
		return false, fmt.Errorf("compile: %v", err)
	}
	got, gotErr, _, _ := runJIT(code, vm.Options{Helpers: vm.RawHelpers()}, tc.Mem)
	switch {
	case tc.Error != "" && gotErr == nil:
		return false, fmt.Errorf("r0 = %#x, want error %q", got, tc.Error)
	case tc.Error != "" && !strings.Contains(gotErr.Error(), tc.Error):
		return false, fmt.Errorf("error %q, suite expects %q", gotErr, tc.Error)
	case tc.Error == "" && gotErr != nil:
		return false, gotErr
	case tc.Error == "" && got != tc.Result:
		return false, fmt.Errorf("r0 = %#x, want %#x", got, tc.Result)
	}
	if err := sameAsInterp(code, vm.Options{Helpers: vm.RawHelpers()}, tc.Mem); err != nil {
		return false, err
	}
	if tc.Error != "" {
		return false, nil
	}
	if _, err := verifier.Verify(insns, verifier.Config{Raw: true, MemSize: uint64(len(tc.Mem))}); err != nil {
		return false, nil // the two that call a helper: checked only
	}
	fast, err := jit.Compile(insns, jit.Options{Unchecked: true})
	if err != nil {
		return false, fmt.Errorf("compile unchecked: %v", err)
	}
	got, gotErr, _, _ = runJIT(fast, vm.Options{Helpers: vm.RawHelpers()}, tc.Mem)
	if gotErr != nil || got != tc.Result {
		return false, fmt.Errorf("unchecked: r0 = %#x (err %v), want %#x", got, gotErr, tc.Result)
	}
	return true, nil
}

// runJIT runs code in raw mode on a copy of mem.
func runJIT(code *jit.Code, opts vm.Options, mem []byte) (uint64, error, []byte, uint64) {
	m := vm.NewMachine(opts)
	defer m.Close()
	mem = bytes.Clone(mem)
	r0, err := m.RunRaw(code, mem)
	return r0, err, mem, m.Executed()
}

// sameAsInterp runs code's program in the checked interpreter and in the
// JIT and returns how they differ, or nil.
func sameAsInterp(code *jit.Code, opts vm.Options, mem []byte) error {
	im := vm.NewMachine(opts)
	imem := bytes.Clone(mem)
	want, wantErr := im.RunRaw(code.Program(), imem)
	got, gotErr, gmem, steps := runJIT(code, opts, mem)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || got != want {
		return fmt.Errorf("jit: r0 = %#x, err %v; interpreter: r0 = %#x, err %v", got, gotErr, want, wantErr)
	}
	if !bytes.Equal(gmem, imem) {
		return fmt.Errorf("jit memory % x, interpreter % x", gmem, imem)
	}
	if steps != im.Executed() {
		return fmt.Errorf("jit executed %d instructions, interpreter %d", steps, im.Executed())
	}
	return nil
}
