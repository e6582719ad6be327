package verifier

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// straightLine is n ALU instructions and an exit: the kernel verifies
// 100,000 of these in about 30–45 ms.
func straightLine(n int) asm.Instructions {
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, 0)}
	for i := 0; i < n; i++ {
		insns = append(insns, asm.Add.Imm(asm.R0, int32(i%7)))
	}
	return append(insns, asm.Return())
}

// constLoop is a loop of iters iterations.
func constLoop(iters int32) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R0, 0),
		asm.Add.Imm(asm.R0, 1),
		{OpCode: asm.JLT.Op(asm.ImmSource), Dst: asm.R0, Offset: -2, Constant: int64(iters)},
		asm.Return(),
	}
}

func BenchmarkVerify(b *testing.B) {
	for _, bc := range []struct {
		name   string
		insns  asm.Instructions
		budget uint64
	}{
		{"straight-100k", straightLine(100_000), 200_000},
		{"loop-1M", constLoop(1_000_000), 10_000_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Verify(bc.insns, Config{Raw: true, MemSize: 8, Budget: bc.budget}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
