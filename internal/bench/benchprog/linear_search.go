package benchprog

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/cilium/ebpf/asm"
)

const (
	// LinearEntries is the number of u64 entries LinearSearch scans: the
	// same 32 KiB as BinarySearch.
	LinearEntries = 4096
	// LinearKeyIndex is the entry whose value LinearSearch looks for.
	LinearKeyIndex = 3000
)

// LinearSearch scans all LinearEntries distinct u64 values at r1 for the
// value of entry LinearKeyIndex and returns the index where it found it.
// Unlike the other loops here its body is two blocks (the compare jumps
// over the store of the index), the shape of a handler's probe loop.
func LinearSearch() Program {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, -1),
		asm.LoadMem(asm.R6, asm.R1, 8*LinearKeyIndex, asm.DWord), // the key
		asm.Mov.Imm(asm.R3, 0),                                   // i
		asm.Mov.Reg(asm.R4, asm.R3).WithSymbol("loop"),
		asm.And.Imm(asm.R4, LinearEntries-1), // in bounds without r2
		asm.LSh.Imm(asm.R4, 3),
		asm.Add.Reg(asm.R4, asm.R1),
		asm.LoadMem(asm.R5, asm.R4, 0, asm.DWord),
		asm.JNE.Reg(asm.R5, asm.R6, "next"),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Add.Imm(asm.R3, 1).WithSymbol("next"),
		asm.JLT.Imm(asm.R3, LinearEntries, "loop"),
		asm.Return(),
	}
	rng := rand.New(rand.NewPCG(4, 0x11ea5))
	seen := map[uint64]bool{}
	mem := make([]byte, 8*LinearEntries)
	var key uint64
	for i := range LinearEntries {
		v := rng.Uint64()
		for seen[v] {
			v = rng.Uint64()
		}
		seen[v] = true
		binary.LittleEndian.PutUint64(mem[8*i:], v)
		if i == LinearKeyIndex {
			key = v
		}
	}
	want := uint64(0)
	for i := range LinearEntries {
		if binary.LittleEndian.Uint64(mem[8*i:]) == key {
			want = uint64(i)
		}
	}
	return Program{Name: "linear-search", Insns: Resolve(insns), MemSize: len(mem), Mem: fixedMem(mem), Want: want, HasWant: true}
}
