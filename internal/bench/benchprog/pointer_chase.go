package benchprog

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/cilium/ebpf/asm"
)

const (
	// ChaseNodes is the number of 16-byte nodes of PointerChase (16 KiB):
	// word 0 is the index of the next node, word 1 the node's value.
	ChaseNodes = 1024
	// ChaseHops is how many links PointerChase follows.
	ChaseHops = 64
)

// PointerChase follows ChaseHops next-links from node 0 through a single
// random cycle of ChaseNodes nodes and returns the value of the node it
// ends on: the shape of a k-deep remote lookup that an active message does
// in one round trip.
func PointerChase() Program {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R3, 0), // node index
		asm.Mov.Imm(asm.R6, 0), // hop
		asm.Mov.Reg(asm.R4, asm.R3).WithSymbol("hop"),
		asm.And.Imm(asm.R4, ChaseNodes-1),
		asm.LSh.Imm(asm.R4, 4),
		asm.Add.Reg(asm.R4, asm.R1),
		asm.LoadMem(asm.R3, asm.R4, 0, asm.DWord), // next
		asm.Add.Imm(asm.R6, 1),
		asm.JLT.Imm(asm.R6, ChaseHops, "hop"),
		asm.And.Imm(asm.R3, ChaseNodes-1),
		asm.LSh.Imm(asm.R3, 4),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.LoadMem(asm.R0, asm.R3, 8, asm.DWord), // value
		asm.Return(),
	}
	rng := rand.New(rand.NewPCG(3, 0xc4a5e))
	// Sattolo's algorithm: a uniformly random permutation that is a single
	// cycle, so the chase never revisits a node before it has seen all.
	next := make([]uint64, ChaseNodes)
	for i := range next {
		next[i] = uint64(i)
	}
	for i := len(next) - 1; i > 0; i-- {
		j := rng.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	values := make([]uint64, ChaseNodes)
	mem := make([]byte, 16*ChaseNodes)
	for i := range values {
		values[i] = rng.Uint64()
		binary.LittleEndian.PutUint64(mem[16*i:], next[i])
		binary.LittleEndian.PutUint64(mem[16*i+8:], values[i])
	}
	node := uint64(0)
	for range ChaseHops {
		node = next[node]
	}
	return Program{Name: "pointer-chase", Insns: Resolve(insns), MemSize: len(mem), Mem: fixedMem(mem), Want: values[node], HasWant: true}
}
