//go:build !cgo

package jit

import (
	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/vm"
)

// Available reports whether the tier can run here: never without cgo.
func Available() error { return ErrUnavailable }

// InPlace returns false: without cgo nothing runs in the JIT.
func InPlace(mem *vm.Memory) bool { return false }

// Code is a compiled program; without cgo there is none.
type Code struct{}

// Compile returns ErrUnavailable: this build has no cgo.
func Compile(insns asm.Instructions, opts Options) (*Code, error) { return nil, ErrUnavailable }

// Compile returns ErrUnavailable: this build has no cgo.
func (e Engine) Compile(p *vm.Program, entries []int) (vm.Executable, error) {
	return nil, ErrUnavailable
}

// Program returns nil.
func (c *Code) Program() *vm.Program { return nil }

// Instantiate returns ErrUnavailable.
func (c *Code) Instantiate(*vm.EngineContext) (vm.Instance, error) { return nil, ErrUnavailable }

// Close does nothing.
func (c *Code) Close() {}

// Stats returns zero.
func (c *Code) Stats() Stats { return Stats{} }

// Unchecked returns false.
func (c *Code) Unchecked() bool { return false }
