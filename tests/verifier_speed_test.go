package tests

import (
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/verifier"
)

// verifySpeedPrograms are the reference points: straight-line code,
// which the kernel walks once, and constant-bound loops, which the kernel
// walks iteration by iteration.
func verifySpeedPrograms() []struct {
	name   string
	body   asm.Instructions
	budget uint64
	trueN  uint64 // instructions a run executes
} {
	straight := asm.Instructions{asm.Mov.Imm(asm.R0, 0)}
	for i := 0; i < 100_000; i++ {
		straight = append(straight, asm.Add.Imm(asm.R0, int32(i%7)))
	}
	straight = append(straight, asm.Return())
	loop := func(n int32) asm.Instructions {
		return asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.Add.Imm(asm.R0, 1),
			{OpCode: asm.JLT.Op(asm.ImmSource), Dst: asm.R0, Offset: -2, Constant: int64(n)},
			asm.Return(),
		}
	}
	return []struct {
		name   string
		body   asm.Instructions
		budget uint64
		trueN  uint64
	}{
		{"straight-100k", straight, 200_000, 100_002},
		{"loop-333k", loop(333_000), 1_000_000, 2 + 2*333_000},
		{"loop-1M", loop(1_000_000), 10_000_000, 2 + 2*1_000_000},
	}
}

// BenchmarkVerifierVsKernel times our verifier and reports the kernel
// verifier's own "verification time" for the same program in the same run
// (kernel-ms; absent when the kernel refuses the program, as it does a
// 1,000,000-iteration loop). bound/true is our proven bound over the
// instructions a run really executes.
func BenchmarkVerifierVsKernel(b *testing.B) {
	for _, bp := range verifySpeedPrograms() {
		b.Run(bp.name, func(b *testing.B) {
			var rep *verifier.Report
			for b.Loop() {
				var err error
				rep, err = verifier.Verify(bp.body, verifier.Config{Raw: true, MemSize: 8, Budget: bp.budget})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rep.MaxInsns)/float64(bp.trueN), "bound/true")
			if kernel.Available() != nil {
				return
			}
			st, err := kernel.VerifierStats(bp.body, 8)
			if err != nil {
				b.Logf("kernel: %v", firstLine(err.Error()))
				return
			}
			b.ReportMetric(float64(st.Time)/float64(time.Millisecond), "kernel-ms")
			b.ReportMetric(float64(st.Processed), "kernel-processed")
		})
	}
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
