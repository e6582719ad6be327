package benchprog_test

import (
	"testing"

	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/vm"
)

// TestBenchmarksInVM runs every benchmark program in the VM, checked and
// unchecked, and compares r0 with the Go reference.
func TestBenchmarksInVM(t *testing.T) {
	for _, p := range benchprog.Benchmarks() {
		t.Run(p.Name, func(t *testing.T) {
			prog, err := vm.Load(p.Insns)
			if err != nil {
				t.Fatal(err)
			}
			for _, unchecked := range []bool{false, true} {
				m := vm.NewMachine(vm.Options{Unchecked: unchecked})
				mem := p.NewMem()
				r0, err := m.RunRaw(prog, mem)
				if err != nil {
					t.Fatalf("unchecked=%v: %v", unchecked, err)
				}
				if r0 != p.Want {
					t.Errorf("unchecked=%v: r0 = %#x, want %#x", unchecked, r0, p.Want)
				}
				t.Logf("unchecked=%v: %d instructions", unchecked, m.Executed())
			}
		})
	}
}
