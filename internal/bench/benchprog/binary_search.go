package benchprog

import (
	"encoding/binary"
	"math/rand/v2"
	"sort"

	"github.com/cilium/ebpf/asm"
)

const (
	// SearchEntries is the number of sorted u64 entries BinarySearch
	// searches: 32 KiB of memory.
	SearchEntries = 4096
	// SearchKeys is how many keys one run of BinarySearch looks up.
	SearchKeys = 32
	// searchLCG picks key j at index (j*searchLCG + 12345) mod SearchEntries.
	searchLCG = 1103515245
)

// BinarySearch looks up SearchKeys keys, each taken from the array itself,
// in a sorted array of SearchEntries distinct u64 values at r1, and returns
// a checksum of the indices found (r0 = r0*31 + index per key).
//
// Each search is branch-free and takes log2(SearchEntries) = 12 steps: with
// step = 2048, 1024, … 1, base moves up by step when entry[base+step] <=
// key. The comparison is the sign of key-entry, valid because every entry
// is below 2^63, so the verifier sees straight-line code and no path
// explosion, and the index is masked before every load. The step is
// selected with a multiply by 0 or 1, not an AND with 0 or -1: the kernel's
// verifier forks its state on an AND of a {-1, 0} scalar, which would make
// every search 2^12 paths long and exceed its one-million-instruction limit.
func BinarySearch() Program {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0),
		asm.Mov.Imm(asm.R6, 0), // j, the key number
		// key = entry[(j*LCG + 12345) & (N-1)]
		asm.Mov.Reg(asm.R3, asm.R6).WithSymbol("key"),
		asm.Mul.Imm(asm.R3, searchLCG),
		asm.Add.Imm(asm.R3, 12345),
		asm.And.Imm(asm.R3, SearchEntries-1),
		asm.LSh.Imm(asm.R3, 3),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.LoadMem(asm.R7, asm.R3, 0, asm.DWord), // key
		asm.Mov.Imm(asm.R8, 0),                    // base
		asm.Mov.Imm(asm.R2, SearchEntries/2),      // step
		asm.Mov.Reg(asm.R4, asm.R8).WithSymbol("step"),
		asm.Add.Reg(asm.R4, asm.R2),
		asm.And.Imm(asm.R4, SearchEntries-1),
		asm.LSh.Imm(asm.R4, 3),
		asm.Add.Reg(asm.R4, asm.R1),
		asm.LoadMem(asm.R5, asm.R4, 0, asm.DWord), // entry[base+step]
		asm.Mov.Reg(asm.R4, asm.R7),
		asm.Sub.Reg(asm.R4, asm.R5), // key - entry: negative iff entry > key
		asm.RSh.Imm(asm.R4, 63),     // 1 iff entry > key
		asm.Xor.Imm(asm.R4, 1),      // 1 iff entry <= key
		asm.Mul.Reg(asm.R4, asm.R2), // step or 0

		asm.Add.Reg(asm.R8, asm.R4),
		asm.RSh.Imm(asm.R2, 1),
		asm.JNE.Imm(asm.R2, 0, "step"),
		asm.Mul.Imm(asm.R0, 31),
		asm.Add.Reg(asm.R0, asm.R8),
		asm.Add.Imm(asm.R6, 1),
		asm.JLT.Imm(asm.R6, SearchKeys, "key"),
		asm.Return(),
	}
	entries := make([]uint64, SearchEntries)
	rng := rand.New(rand.NewPCG(2, 0x5ea4c))
	v := uint64(0)
	for i := range entries {
		v += 1 + rng.Uint64N(1<<20) // distinct, ascending, far below 2^63
		entries[i] = v
	}
	mem := make([]byte, 8*SearchEntries)
	for i, e := range entries {
		binary.LittleEndian.PutUint64(mem[8*i:], e)
	}
	var want uint64
	for j := uint64(0); j < SearchKeys; j++ {
		key := entries[(j*searchLCG+12345)%SearchEntries]
		// The largest index whose entry is <= key.
		idx := sort.Search(len(entries), func(i int) bool { return entries[i] > key }) - 1
		want = want*31 + uint64(idx)
	}
	return Program{Name: "binary-search", Insns: Resolve(insns), MemSize: len(mem), Mem: fixedMem(mem), Want: want, HasWant: true}
}
