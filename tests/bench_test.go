package tests

import (
	"runtime"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/vm"
)

// kernelBatch is roughly how long one BPF_PROG_TEST_RUN of the kernel-jit
// sub-benchmarks lasts: long enough that the syscall is noise, short enough
// for b.Loop to take several samples.
const kernelBatch = 20 * time.Millisecond

// BenchmarkPrograms runs each testprog benchmark program in the VM, checked
// (vm-checked) and unchecked (vm-fast), and in the kernel's JIT
// (kernel-jit). Every mode checks r0 against the Go reference before it is
// timed. Metrics:
//
//	ns/op      one run of the program (kernel-jit: the kernel's own timing
//	           of one run inside BPF_PROG_TEST_RUN, overhead included;
//	           B/op and allocs/op are per run too, the syscall's
//	           allocations spread over the batch)
//	ns/insn    ns/op over the instructions the VM executed in one run
//	x-kernel   ns/op over the kernel-jit ns/op measured in the same process
//	overhead-ns  (kernel-jit) ns/op of an empty body: test-run loop and wrapper
func BenchmarkPrograms(b *testing.B) {
	kernelErr := kernel.Available()
	var overhead float64
	if kernelErr == nil {
		var err error
		if overhead, err = kernel.Overhead(1_000_000); err != nil {
			b.Fatal(err)
		}
		status, _ := kernel.JITStatus()
		b.Logf("kernel: %s; empty-body overhead %.1f ns/run", status, overhead)
	}
	for _, p := range benchprog.Benchmarks() {
		b.Run(p.Name, func(b *testing.B) {
			prog, err := vm.Load(p.Insns)
			if err != nil {
				b.Fatal(err)
			}
			insns := executed(b, prog, p)

			var kp *kernel.Program
			var kernelNs float64
			if kernelErr == nil {
				if kp, err = kernel.Load(p.Insns, p.MemSize); err != nil {
					b.Fatalf("%+v", err)
				}
				defer kp.Close()
				if r0, err := kp.Run(p.NewMem()); err != nil || r0 != p.Want {
					b.Fatalf("kernel: r0 = %#x (err %v), want %#x", r0, err, p.Want)
				}
				// The reference for x-kernel: about 0.2 s of kernel runs.
				if kernelNs, err = kp.Bench(p.NewMem(), repeatFor(kp, p, 200*time.Millisecond)); err != nil {
					b.Fatal(err)
				}
			}

			for _, mode := range []struct {
				name      string
				unchecked bool
			}{{"vm-checked", false}, {"vm-fast", true}} {
				b.Run(mode.name, func(b *testing.B) {
					m := vm.NewMachine(vm.Options{Unchecked: mode.unchecked})
					mem := p.NewMem()
					if r0, err := m.RunRaw(prog, mem); err != nil || r0 != p.Want {
						b.Fatalf("r0 = %#x (err %v), want %#x", r0, err, p.Want)
					}
					b.ReportAllocs()
					// The benchmark programs never write memory, so one
					// copy serves every run.
					for b.Loop() {
						m.RunRaw(prog, mem)
					}
					perRun := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(perRun/float64(insns), "ns/insn")
					if kernelNs > 0 {
						b.ReportMetric(perRun/kernelNs, "x-kernel")
					}
				})
			}

			b.Run("kernel-jit", func(b *testing.B) {
				if kp == nil {
					b.Skip(kernelErr)
				}
				mem := p.NewMem()
				repeat := repeatFor(kp, p, kernelBatch)
				b.ReportAllocs()
				var total float64
				var runs int
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					ns, err := kp.Bench(mem, repeat)
					if err != nil {
						b.Fatal(err)
					}
					total += ns * float64(repeat)
					runs += repeat
				}
				runtime.ReadMemStats(&after)
				// One b.Loop iteration is a batch of repeat runs; report
				// time and allocations per run, as the VM modes do.
				perRun := total / float64(runs)
				b.ReportMetric(perRun, "ns/op")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(runs), "allocs/op")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(runs), "B/op")
				b.ReportMetric(perRun/float64(insns), "ns/insn")
				b.ReportMetric(overhead, "overhead-ns")
			})
		})
	}
}

// executed runs p once in a checked VM, checks r0 and returns how many
// instructions one run executes.
func executed(b *testing.B, prog *vm.Program, p benchprog.Program) uint64 {
	m := vm.NewMachine(vm.Options{})
	r0, err := m.RunRaw(prog, p.NewMem())
	if err != nil || r0 != p.Want {
		b.Fatalf("vm: r0 = %#x (err %v), want %#x", r0, err, p.Want)
	}
	return m.Executed()
}

// repeatFor picks a repeat count that keeps one kernel test run near d.
func repeatFor(kp *kernel.Program, p benchprog.Program, d time.Duration) int {
	ns, err := kp.Bench(p.NewMem(), 100)
	if err != nil || ns < 1 {
		ns = 1
	}
	return max(1, int(float64(d.Nanoseconds())/ns))
}
