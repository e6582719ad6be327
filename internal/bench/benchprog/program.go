package benchprog

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
)

// Program is one named program in raw mode, with its memory and, for the
// benchmarks, the r0 its Go reference computes.
type Program struct {
	Name string
	// Insns is the body in raw mode (r1 = memory, r2 = MemSize). Jump and
	// call offsets are numeric, so it loads as it is into the VM or, as a
	// subprogram, into the kernel.
	Insns asm.Instructions
	// MemSize is the length of the memory at r1; 0 means none.
	MemSize int
	// Mem returns a fresh copy of the initial memory, MemSize bytes; nil
	// means zeroed memory. Use NewMem rather than calling it directly.
	Mem func() []byte
	// Want is the expected r0, computed by a Go reference implementation.
	// It means nothing unless HasWant is set (Random programs have none).
	Want    uint64
	HasWant bool
}

// NewMem returns a fresh copy of p's initial memory (nil if MemSize is 0).
func (p Program) NewMem() []byte {
	if p.Mem != nil {
		return p.Mem()
	}
	if p.MemSize == 0 {
		return nil
	}
	return make([]byte, p.MemSize)
}

// Benchmarks returns the benchmark programs: an ALU loop, FNV-1a over
// 1 KiB, binary searches in 32 KiB, a 64-hop pointer chase and a linear
// search of 32 KiB.
func Benchmarks() []Program {
	return []Program{ALULoop(), FNV1a(), BinarySearch(), PointerChase(), LinearSearch()}
}

// ByName returns the benchmark program called name.
func ByName(name string) (Program, bool) {
	for _, p := range Benchmarks() {
		if p.Name == name {
			return p, true
		}
	}
	return Program{}, false
}

// Resolve turns symbolic jumps and calls into numeric offsets by encoding
// and decoding, the same path a program file takes. The programs here are
// fixed, so a failure is a bug in this package.
func Resolve(insns asm.Instructions) asm.Instructions {
	raw, err := bytecode.Encode(insns)
	if err != nil {
		panic(fmt.Sprintf("benchprog: encode: %v", err))
	}
	out, err := bytecode.Decode(raw)
	if err != nil {
		panic(fmt.Sprintf("benchprog: decode: %v", err))
	}
	return out
}

// fixedMem returns a Mem function that hands out copies of data.
func fixedMem(data []byte) func() []byte {
	return func() []byte { return append([]byte(nil), data...) }
}

// imm64 reinterprets a 64-bit pattern as lddw's signed immediate.
func imm64(v uint64) int64 { return int64(v) }
