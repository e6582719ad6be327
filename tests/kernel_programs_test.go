package tests

import (
	"testing"

	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/vm"
)

// TestProgramsInKernel runs every named benchmark program in the VM,
// checked and unchecked, and in the kernel, and checks r0 against the Go
// reference, so the programs BenchmarkPrograms times are known good in
// every engine without running the benchmarks.
func TestProgramsInKernel(t *testing.T) {
	kernelErr := kernel.Available()
	for _, p := range benchprog.Benchmarks() {
		t.Run(p.Name, func(t *testing.T) {
			prog, err := vm.Load(p.Insns)
			if err != nil {
				t.Fatal(err)
			}
			for _, unchecked := range []bool{false, true} {
				r0, err := vm.NewMachine(vm.Options{Unchecked: unchecked}).RunRaw(prog, p.NewMem())
				if err != nil || r0 != p.Want {
					t.Errorf("vm (unchecked=%v): r0 = %#x (err %v), want %#x", unchecked, r0, err, p.Want)
				}
			}
			if kernelErr != nil {
				t.Skip(kernelErr)
			}
			kp, err := kernel.Load(p.Insns, p.MemSize)
			if err != nil {
				t.Fatal(err)
			}
			defer kp.Close()
			if r0, err := kp.Run(p.NewMem()); err != nil || r0 != p.Want {
				t.Errorf("kernel: r0 = %#x (err %v), want %#x", r0, err, p.Want)
			}
		})
	}
}
