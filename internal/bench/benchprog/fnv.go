package benchprog

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/cilium/ebpf/asm"
)

// FNV1aSize is the length of the data FNV1a hashes.
const FNV1aSize = 1024

const (
	fnvOffsetBasis = 0xcbf29ce484222325
	fnvPrime       = 0x100000001b3
)

// FNV1a hashes FNV1aSize bytes of memory at r1 with 64-bit FNV-1a, one byte
// per iteration, and returns the hash.
func FNV1a() Program {
	insns := asm.Instructions{
		asm.LoadImm(asm.R0, imm64(fnvOffsetBasis), asm.DWord),
		asm.LoadImm(asm.R4, fnvPrime, asm.DWord),
		asm.Mov.Imm(asm.R3, 0), // i
		asm.Mov.Reg(asm.R5, asm.R3).WithSymbol("loop"),
		asm.And.Imm(asm.R5, FNV1aSize-1), // in bounds without r2
		asm.Add.Reg(asm.R5, asm.R1),
		asm.LoadMem(asm.R6, asm.R5, 0, asm.Byte),
		asm.Xor.Reg(asm.R0, asm.R6),
		asm.Mul.Reg(asm.R0, asm.R4),
		asm.Add.Imm(asm.R3, 1),
		asm.JLT.Imm(asm.R3, FNV1aSize, "loop"),
		asm.Return(),
	}
	data := make([]byte, FNV1aSize)
	rng := rand.New(rand.NewPCG(1, 0xf17))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	h := fnv.New64a()
	h.Write(data)
	return Program{Name: "fnv1a", Insns: Resolve(insns), MemSize: FNV1aSize, Mem: fixedMem(data), Want: h.Sum64(), HasWant: true}
}
