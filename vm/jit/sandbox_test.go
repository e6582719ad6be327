//go:build cgo

package jit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestUncheckedSandbox: unchecked code that the verifier would refuse
// reads 256 MiB past its memory; Wasm's sandbox turns that into a trap,
// reported as an internal fault, and the process lives on.
func TestUncheckedSandbox(t *testing.T) {
	insns, err := bytecode.Assemble("lddw %r1, 0x310000000\nldxdw %r0, [%r1+0]\nexit")
	if err != nil {
		t.Fatal(err)
	}
	code, err := jit.Compile(insns, jit.Options{Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	m := vm.NewMachine(vm.Options{})
	_, err = m.RunRaw(code, make([]byte, 8))
	if !errors.Is(err, vm.ErrInternal) || !strings.HasPrefix(err.Error(), "insn 2: ") {
		t.Fatalf("err = %v, want an internal fault (a Wasm trap) at insn 2, the load", err)
	}
	t.Log(err)
	// A store further on: the trap names its slot too.
	far, err := bytecode.Assemble("mov %r0, 1\nmov %r0, 2\nlddw %r1, 0x320000000\nadd %r0, 3\nstb [%r1+0], 1\nexit")
	if err != nil {
		t.Fatal(err)
	}
	farCode, err := jit.Compile(far, jit.Options{Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RunRaw(farCode, make([]byte, 8)); !errors.Is(err, vm.ErrInternal) || !strings.HasPrefix(err.Error(), "insn 5: ") {
		t.Fatalf("err = %v, want an internal fault at insn 5, the store", err)
	}
	// The machine still works.
	ok, err := bytecode.Assemble("mov %r0, 7\nexit")
	if err != nil {
		t.Fatal(err)
	}
	code, err = jit.Compile(ok, jit.Options{Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	if r0, err := m.RunRaw(code, nil); err != nil || r0 != 7 {
		t.Fatalf("after the trap: r0 = %d, err %v", r0, err)
	}
}
