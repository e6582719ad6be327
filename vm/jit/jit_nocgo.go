//go:build !cgo

package jit

import (
	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/vm"
)

// Available reports whether the tier can run here: never without cgo.
func Available() error { return ErrUnavailable }

// Code is a compiled program; without cgo there is none.
type Code struct{}

// Compile returns ErrUnavailable: this build has no cgo.
func Compile(insns asm.Instructions, opts Options) (*Code, error) { return nil, ErrUnavailable }

// Program returns nil.
func (c *Code) Program() *vm.Program { return nil }

// Close does nothing.
func (c *Code) Close() {}

// Close does nothing.
func (m *Machine) Close() {}

// Stats returns zero.
func (c *Code) Stats() Stats { return Stats{} }

// Machine is a JIT core; without cgo there is none.
type Machine struct{}

// NewMachine returns ErrUnavailable: this build has no cgo.
func NewMachine(opts vm.Options) (*Machine, error) { return nil, ErrUnavailable }

// RunRaw returns ErrUnavailable.
func (m *Machine) RunRaw(c *Code, mem []byte) (uint64, error) { return 0, ErrUnavailable }

// Invoke returns ErrUnavailable.
func (m *Machine) Invoke(c *Code, inv *vm.Invocation) (vm.Result, error) {
	return vm.Result{}, ErrUnavailable
}

// Executed returns 0.
func (m *Machine) Executed() uint64 { return 0 }

// VM returns nil.
func (m *Machine) VM() *vm.Machine { return nil }
