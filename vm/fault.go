package vm

import (
	"errors"
	"fmt"
)

// Sentinel errors that a *Fault matches with errors.Is, one per FaultKind.
var (
	ErrOutOfBounds = errors.New("memory access out of bounds")
	ErrReadOnly    = errors.New("write to read-only memory")
	ErrMisaligned  = errors.New("misaligned atomic access")
	ErrBudget      = errors.New("instruction budget exhausted")
	ErrCallDepth   = errors.New("call depth exceeded")
	ErrHelper      = errors.New("helper call failed")
	ErrFellOff     = errors.New("execution fell off the end of the program")
	ErrInternal    = errors.New("internal interpreter error")
	ErrReturn      = errors.New("bad handler return value")
	ErrRemote      = errors.New("remote memory access failed")
)

// FaultKind classifies a fault.
type FaultKind uint8

const (
	FaultOutOfBounds FaultKind = iota + 1
	FaultReadOnly
	FaultMisaligned
	FaultBudget
	FaultCallDepth
	FaultHelper
	FaultFellOff
	FaultInternal
	// FaultReturn: a handler ended with an r0 the ABI does not allow
	// (Machine.Invoke); the fault's PC is the exit.
	FaultReturn
	// FaultRemote: an access to a remote region (MapRemote) that its
	// RemoteMemory refused, or that one-sided verbs cannot do (a store,
	// an atomic other than an 8-byte add or cmpxchg); Err says which.
	FaultRemote
)

var faultSentinels = [...]error{
	FaultOutOfBounds: ErrOutOfBounds,
	FaultReadOnly:    ErrReadOnly,
	FaultMisaligned:  ErrMisaligned,
	FaultBudget:      ErrBudget,
	FaultCallDepth:   ErrCallDepth,
	FaultHelper:      ErrHelper,
	FaultFellOff:     ErrFellOff,
	FaultInternal:    ErrInternal,
	FaultReturn:      ErrReturn,
	FaultRemote:      ErrRemote,
}

func (k FaultKind) sentinel() error {
	if int(k) < len(faultSentinels) && faultSentinels[k] != nil {
		return faultSentinels[k]
	}
	return ErrInternal
}

func (k FaultKind) String() string { return k.sentinel().Error() }

// Fault is a typed runtime error: what went wrong, at which instruction
// (slot index) and, for memory faults, at which address.
type Fault struct {
	Kind FaultKind
	PC   int    // slot index of the faulting instruction
	Addr uint64 // address of a memory fault
	Size int    // access size in bytes of a memory fault
	Op   string // "load", "store" or "atomic" for memory faults
	Err  error  // cause of a helper, internal or return fault
	// Where describes Addr for a reader, e.g. "request+16 (length 12)".
	Where string
}

func (f *Fault) Error() string {
	switch f.Kind {
	case FaultOutOfBounds, FaultReadOnly, FaultMisaligned:
		return fmt.Sprintf("insn %d: %s: %d-byte %s at %#x (%s)", f.PC, f.Kind, f.Size, f.Op, f.Addr, f.Where)
	case FaultHelper, FaultInternal, FaultReturn:
		if f.Err != nil {
			return fmt.Sprintf("insn %d: %s: %v", f.PC, f.Kind, f.Err)
		}
	case FaultRemote:
		return fmt.Sprintf("insn %d: %s: %d-byte %s at %#x (%s): %v", f.PC, f.Kind, f.Size, f.Op, f.Addr, f.Where, f.Err)
	}
	return fmt.Sprintf("insn %d: %s", f.PC, f.Kind)
}

// Is reports whether target is the sentinel for f's kind.
func (f *Fault) Is(target error) bool { return target == f.Kind.sentinel() }

// Unwrap returns the cause of a helper, internal, return or remote fault.
func (f *Fault) Unwrap() error { return f.Err }

type errNoHelpers uint32

func (e errNoHelpers) Error() string {
	return fmt.Sprintf("helper %d called, but this machine has no helpers", uint32(e))
}

type errBadOp opcode

func (e errBadOp) Error() string { return fmt.Sprintf("bad internal opcode %d", uint8(e)) }
