//go:build !linux

package kernel

import (
	"time"

	"github.com/cilium/ebpf/asm"
)

// Available reports why kernel BPF cannot be used here.
func Available() error { return ErrUnsupported }

// JITStatus reports whether the kernel's BPF JIT is enabled.
func JITStatus() (string, error) { return "", ErrUnsupported }

// Program is a body loaded into the kernel.
type Program struct{}

// Load is unsupported on this system.
func Load(body asm.Instructions, memSize int) (*Program, error) { return nil, ErrUnsupported }

// Run is unsupported on this system.
func (p *Program) Run(mem []byte) (uint64, error) { return 0, ErrUnsupported }

// Bench is unsupported on this system.
func (p *Program) Bench(mem []byte, repeat int) (float64, error) { return 0, ErrUnsupported }

// JITed is unsupported on this system.
func (p *Program) JITed() (bool, error) { return false, ErrUnsupported }

// Close does nothing on this system.
func (p *Program) Close() error { return nil }

// Bench is unsupported on this system.
func Bench(body asm.Instructions, mem []byte, repeat int) (float64, error) {
	return 0, ErrUnsupported
}

// Overhead is unsupported on this system.
func Overhead(repeat int) (float64, error) { return 0, ErrUnsupported }

// Stats is what the kernel's verifier says about a program it accepted.
type Stats struct {
	Time      time.Duration
	Processed int
}

// VerifierStats needs Linux.
func VerifierStats(body asm.Instructions, memSize int) (Stats, error) { return Stats{}, ErrUnsupported }
