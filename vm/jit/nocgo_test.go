//go:build !cgo

package jit_test

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestUnavailable: without cgo the tier says so, clearly, everywhere.
func TestUnavailable(t *testing.T) {
	if err := jit.Available(); !errors.Is(err, jit.ErrUnavailable) {
		t.Errorf("Available() = %v", err)
	}
	if _, err := jit.Compile(asm.Instructions{asm.Return()}, jit.Options{}); !errors.Is(err, jit.ErrUnavailable) {
		t.Errorf("Compile: %v", err)
	}
	p, err := vm.Load(asm.Instructions{asm.Return()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (jit.Engine{}).Compile(p, nil); !errors.Is(err, jit.ErrUnavailable) || err.Error() != "jit tier unavailable: built without cgo" {
		t.Errorf("Engine.Compile: %v", err)
	}
}
