package verifier

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/internal/testing/verifygen"
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

// shapeSize is a shape at one size and fan-out (verifygen.Build).
type shapeSize struct {
	shape  verifygen.Shape
	n, fan int
}

// worstShapes are the generated programs that make the verifier work
// hardest (internal/testing/verifygen.Shape), at sizes up to the install size
// limit: 16 MiB of object (wire.MaxInstallSize) holds at most 2,097,152
// slots of code.
var worstShapes = []shapeSize{
	{verifygen.ShapeStraight, 2_000_000, 0},
	{verifygen.ShapeConstants, 2_000_000, 0},
	{verifygen.ShapeBranchChain, 20_000, 0},
	{verifygen.ShapeBranchChain, 2_000_000, 0},
	{verifygen.ShapeDiamonds, 2_000_000, 0},
	{verifygen.ShapeStackDiamonds, 20_000, 0},
	{verifygen.ShapeStackDiamonds, 2_000_000, 0},
	{verifygen.ShapeCallFanOut, 0, 8},
	{verifygen.ShapeCallFanOut, 0, 64},
	{verifygen.ShapeCallFanOut, 0, 57_000},
	{verifygen.ShapeCallSwitch, 0, 8},
	{verifygen.ShapeCallSwitch, 0, 62_000},
	{verifygen.ShapeLoopChain, 20_000, 0},
	{verifygen.ShapeLoopChain, 2_000_000, 0},
	{verifygen.ShapeLoopBody, 32_000, 0},
	{verifygen.ShapeSharedTail, 2_000, 1_000},
	{verifygen.ShapeSharedTail, 500_000, 500_000},
	{verifygen.ShapeShifts, 2_000_000, 0},
	{verifygen.ShapeLoopAround, 20_000, 0},
	{verifygen.ShapeLoopAround, 1_000_000, 0},
	{verifygen.ShapeLoopAround, 2_000_000, 0},
}

// BenchmarkWorstShapes verifies each worst shape under the default
// Limits, as an install over the wire does: each must be accepted or
// refused within DefaultTime and the memory limit. Besides ns/op and
// B/op it reports peak-MiB, the most heap in use during the run (sampled
// every 200µs, the program itself included), and what the verifier
// accounted: steps, states and MiB held.
//
//	go test ./verifier -run '^$' -bench WorstShapes -benchtime 3x
func BenchmarkWorstShapes(b *testing.B) {
	for _, ws := range worstShapes {
		p := verifygen.Build(ws.shape, ws.n, ws.fan)
		name := fmt.Sprintf("%s-%dslots", ws.shape, len(p.Insns))
		if ws.fan > 0 {
			name = fmt.Sprintf("%s-fan%d-%dslots", ws.shape, ws.fan, len(p.Insns))
		}
		b.Run(name, func(b *testing.B) {
			cfg := Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget}
			var m *meter
			var err error
			b.ReportAllocs()
			peak := sampleHeap(func() {
				for b.Loop() {
					_, m, err = verify(p.Insns, cfg)
				}
			})
			accepted := 0.0
			if err == nil {
				accepted = 1
			} else if verr, ok := err.(*Error); !ok || verr.Code != CodeVerifierBudget && verr.Code != CodeBudget {
				b.Fatalf("%v", err)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(m.used.Steps), "steps")
			b.ReportMetric(float64(m.used.States), "states")
			b.ReportMetric(float64(m.used.Bytes)/(1<<20), "held-MiB")
			b.ReportMetric(accepted, "accepted")
		})
	}
}

// sampleHeap runs f and returns the most heap in use while it ran.
func sampleHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	peak := read()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return max(peak, read())
}
