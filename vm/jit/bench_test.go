//go:build cgo

package jit_test

import (
	"github.com/cilium/ebpf/asm"
	"runtime"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// BenchmarkPrograms runs each testprog benchmark program in the same run
// through the interpreter (interp, checked), the JIT checked (jit-checked)
// and unchecked after the verifier accepted the program (jit-fast), and the
// kernel's JIT (kernel-jit; skipped with the reason without root). Every
// engine's r0 is checked against the Go reference first. Metrics:
//
//	ns/op       one run (kernel-jit: the kernel's own per-run timing)
//	x-interp    the interpreter's ns/op (same run) over this ns/op: the speed-up
//	x-kernel    this ns/op over the kernel JIT's (same run)
//	compile-us  (jit-*) translation plus wasmtime compilation, once
func BenchmarkPrograms(b *testing.B) {
	kernelErr := kernel.Available()
	for _, p := range benchprog.Benchmarks() {
		b.Run(p.Name, func(b *testing.B) {
			prog, err := vm.Load(p.Insns)
			if err != nil {
				b.Fatal(err)
			}
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
				if kernelNs, err = kp.Bench(p.NewMem(), repeatFor(kp, p, 200*time.Millisecond)); err != nil {
					b.Fatal(err)
				}
			}
			// The interpreter's reference figure for x-interp, measured here.
			im := vm.NewMachine(vm.Options{})
			imem := p.NewMem()
			if r0, err := im.RunRaw(prog, imem); err != nil || r0 != p.Want {
				b.Fatalf("interp: r0 = %#x (err %v), want %#x", r0, err, p.Want)
			}
			interpNs := nsPerRun(func() { im.RunRaw(prog, imem) })

			b.Run("interp", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					im.RunRaw(prog, imem)
				}
				report(b, interpNs, kernelNs)
			})
			for _, mode := range []struct {
				name      string
				unchecked bool
			}{{"jit-checked", false}, {"jit-fast", true}} {
				b.Run(mode.name, func(b *testing.B) {
					if mode.unchecked {
						if _, err := verifier.Verify(p.Insns, verifier.Config{Raw: true, MemSize: uint64(p.MemSize), Budget: 10_000_000}); err != nil {
							b.Fatalf("verifier: %v", err)
						}
					}
					code, err := jit.Compile(p.Insns, jit.Options{Unchecked: mode.unchecked})
					if err != nil {
						b.Fatal(err)
					}
					m := vm.NewMachine(vm.Options{})
					defer m.Close()
					// The program's memory lives across runs, mapped in
					// place, as naamc vm --bench keeps it.
					mem := memoryOf(b, p)
					if r0, err := m.RunRawMemory(code, mem); err != nil || r0 != p.Want {
						b.Fatalf("r0 = %#x (err %v), want %#x", r0, err, p.Want)
					}
					b.ReportAllocs()
					for b.Loop() {
						m.RunRawMemory(code, mem)
					}
					report(b, interpNs, kernelNs)
					b.ReportMetric(float64(code.Stats().Total().Nanoseconds())/1e3, "compile-us")
				})
			}
			b.Run("kernel-jit", func(b *testing.B) {
				if kp == nil {
					b.Skip(kernelErr)
				}
				mem := p.NewMem()
				repeat := repeatFor(kp, p, 20*time.Millisecond)
				var total float64
				var runs int
				for b.Loop() {
					ns, err := kp.Bench(mem, repeat)
					if err != nil {
						b.Fatal(err)
					}
					total += ns * float64(repeat)
					runs += repeat
				}
				perRun := total / float64(runs)
				b.ReportMetric(perRun, "ns/op")
				b.ReportMetric(interpNs/perRun, "x-interp")
			})
		})
	}
}

// memoryOf returns p's initial memory as a vm.Memory.
func memoryOf(tb testing.TB, p benchprog.Program) *vm.Memory {
	mem, err := vm.NewMemory(uint64(p.MemSize))
	if err != nil {
		tb.Fatal(err)
	}
	copy(mem.Bytes(), p.NewMem())
	return mem
}

// report adds x-interp and x-kernel to a benchmark of one run per op.
func report(b *testing.B, interpNs, kernelNs float64) {
	perRun := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(interpNs/perRun, "x-interp")
	if kernelNs > 0 {
		b.ReportMetric(perRun/kernelNs, "x-kernel")
	}
}

// nsPerRun times f over about 0.2 s.
func nsPerRun(f func()) float64 {
	runtime.GC()
	n := 0
	start := time.Now()
	for time.Since(start) < 200*time.Millisecond {
		f()
		n++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// repeatFor picks a repeat count that keeps one kernel test run near d.
func repeatFor(kp *kernel.Program, p benchprog.Program, d time.Duration) int {
	ns, err := kp.Bench(p.NewMem(), 100)
	if err != nil || ns < 1 {
		ns = 1
	}
	return max(1, int(float64(d.Nanoseconds())/ns))
}

// BenchmarkCompile measures Compile (translation plus wasmtime's
// compilation) of each benchmark program and the hand-written KV GET
// handler, checked and unchecked; translate-us is the translation alone.
func BenchmarkCompile(b *testing.B) {
	type named struct {
		name  string
		insns asm.Instructions
	}
	var progs []named
	for _, p := range benchprog.Benchmarks() {
		progs = append(progs, named{p.Name, p.Insns})
	}
	kv, err := testprog.KVGetHand()
	if err != nil {
		b.Fatal(err)
	}
	progs = append(progs, named{"kv-get", kv})
	for _, p := range progs {
		for _, unchecked := range []bool{false, true} {
			name := p.name + "/checked"
			if unchecked {
				name = p.name + "/unchecked"
			}
			b.Run(name, func(b *testing.B) {
				var translate time.Duration
				for b.Loop() {
					code, err := jit.Compile(p.insns, jit.Options{Unchecked: unchecked})
					if err != nil {
						b.Fatal(err)
					}
					translate += code.Stats().Translate
				}
				b.ReportMetric(float64(translate.Nanoseconds())/float64(b.N)/1e3, "translate-us")
			})
		}
	}
}

// BenchmarkOverhead is the fixed cost of one raw run of a two-instruction
// program in each tier: with no memory, with 1 KiB given as a slice
// (which the JIT copies in and out) and with 16 KiB given as a vm.Memory
// (which it maps in place once): what the JIT adds to a short handler.
func BenchmarkOverhead(b *testing.B) {
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	p, err := vm.Load(insns)
	if err != nil {
		b.Fatal(err)
	}
	mem, err := vm.NewMemory(16 << 10)
	if err != nil {
		b.Fatal(err)
	}
	slice := make([]byte, 1024)
	cases := []struct {
		name string
		run  func(m *vm.Machine, x vm.Executable)
	}{
		{"none", func(m *vm.Machine, x vm.Executable) { m.RunRaw(x, nil) }},
		{"slice-1k", func(m *vm.Machine, x vm.Executable) { m.RunRaw(x, slice) }},
		{"memory-16k", func(m *vm.Machine, x vm.Executable) { m.RunRawMemory(x, mem) }},
	}
	for _, c := range cases {
		b.Run(c.name+"/interp", func(b *testing.B) {
			m := vm.NewMachine(vm.Options{})
			b.ReportAllocs()
			for b.Loop() {
				c.run(m, p)
			}
		})
		for _, unchecked := range []bool{false, true} {
			name := c.name + "/jit-checked"
			if unchecked {
				name = c.name + "/jit-fast"
			}
			b.Run(name, func(b *testing.B) {
				code, err := jit.Compile(insns, jit.Options{Unchecked: unchecked})
				if err != nil {
					b.Fatal(err)
				}
				m := vm.NewMachine(vm.Options{})
				defer m.Close()
				b.ReportAllocs()
				for b.Loop() {
					c.run(m, code)
				}
			})
		}
	}
}
