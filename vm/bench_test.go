package vm_test

import (
	"testing"

	"github.com/naam-project/naam/vm"
)

// The interpreter's own micro-benchmarks; tests/ runs the shared benchmark
// programs side by side with the kernel's JIT.
var benchPrograms = []struct {
	name string
	src  string
	mem  int
}{
	{"alu-loop", `
mov %r0, 0
mov %r3, 1
mov %r4, 0
L:
add %r0, %r4
xor %r3, %r0
lsh %r3, 1
add32 %r3, 7
add %r4, 1
jlt %r4, 100000, L
exit`, 0},
	{"fnv1a-1k", `
lddw %r0, 0xcbf29ce484222325
lddw %r5, 0x100000001b3
mov %r3, 0
L:
mov %r4, %r1
add %r4, %r3
ldxb %r4, [%r4]
xor %r0, %r4
mul %r0, %r5
add %r3, 1
jlt %r3, 1024, L
exit`, 1024},
}

func BenchmarkInterp(b *testing.B) {
	for _, bp := range benchPrograms {
		p := load(b, bp.src)
		mem := make([]byte, bp.mem)
		for i := range mem {
			mem[i] = byte(i * 7)
		}
		for _, mode := range []struct {
			name      string
			unchecked bool
		}{{"checked", false}, {"fast", true}} {
			b.Run(bp.name+"/"+mode.name, func(b *testing.B) {
				m := vm.NewMachine(vm.Options{Unchecked: mode.unchecked})
				if _, err := m.RunRaw(p, mem); err != nil {
					b.Fatal(err)
				}
				insns := m.Executed()
				b.ReportAllocs()
				for b.Loop() {
					m.RunRaw(p, mem)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(insns), "ns/insn")
			})
		}
	}
}

// BenchmarkInvoke measures a handler run with everything around it: the
// context, mapping and unmapping, zeroing the reply and classifying r0.
// "return" is Invoke's own cost; "hash-64" hashes a 64-byte request with
// the hash helper and replies with the 8-byte result.
func BenchmarkInvoke(b *testing.B) {
	handlers := []struct{ name, src string }{
		{"return", "mov %r0, 0\nexit"},
		{"hash-64", hashRequest},
	}
	for _, h := range handlers {
		p := load(b, h.src)
		for _, mode := range []struct {
			name      string
			unchecked bool
		}{{"checked", false}, {"fast", true}} {
			b.Run(h.name+"/"+mode.name, func(b *testing.B) {
				m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(0, nil)), Unchecked: mode.unchecked})
				inv := &vm.Invocation{Request: make([]byte, 64), Reply: make([]byte, 64)}
				if _, err := m.Invoke(p, inv); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					m.Invoke(p, inv)
				}
			})
		}
	}
}
