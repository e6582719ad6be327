package benchprog

import "github.com/cilium/ebpf/asm"

// ALULoopIterations is how many times ALULoop runs its loop body. The
// kernel verifier walks every iteration of a constant-bounded loop and stops
// at one million processed instructions: Linux 6.18 processes 900,015 for
// 100,000 iterations of this 9-instruction body (in about 0.6 s), so the
// body cannot grow by even one instruction without lowering the count.
const ALULoopIterations = 100_000

const (
	aluLoopSeed = 0x9e3779b97f4a7c15
	aluLoopMul  = 0x5bd1e995
)

// ALULoop is a register-only loop: ALULoopIterations rounds of add, xor,
// mul and shift over four registers, returning a checksum. It uses no
// memory.
func ALULoop() Program {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R3, 0),
		asm.LoadImm(asm.R4, imm64(aluLoopSeed), asm.DWord),
		asm.Mov.Imm(asm.R5, 0x12345),
		asm.Mov.Imm(asm.R8, 0), // loop counter
		asm.Add.Reg(asm.R3, asm.R8).WithSymbol("loop"),
		asm.Xor.Reg(asm.R4, asm.R3),
		asm.Mul.Imm(asm.R4, aluLoopMul),
		asm.Mov.Reg(asm.R7, asm.R4),
		asm.RSh.Imm(asm.R7, 29),
		asm.Xor.Reg(asm.R5, asm.R7),
		asm.Add.Reg(asm.R5, asm.R4),
		asm.Add.Imm(asm.R8, 1),
		asm.JLT.Imm(asm.R8, ALULoopIterations, "loop"),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Xor.Reg(asm.R0, asm.R4),
		asm.Add.Reg(asm.R0, asm.R5),
		asm.Return(),
	}
	return Program{Name: "alu-loop", Insns: Resolve(insns), Want: aluLoopRef(), HasWant: true}
}

func aluLoopRef() uint64 {
	var r3, r4, r5 uint64 = 0, aluLoopSeed, 0x12345
	for i := uint64(0); i < ALULoopIterations; i++ {
		r3 += i
		r4 ^= r3
		r4 *= aluLoopMul
		r5 ^= r4 >> 29
		r5 += r4
	}
	return (r3 ^ r4) + r5
}
