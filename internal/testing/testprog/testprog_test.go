package testprog_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/vm"
)

// TestRandomRunsInVM checks that generated programs load, run without
// faults, and that one seed always gives the same program.
func TestRandomRunsInVM(t *testing.T) {
	for seed := uint64(0); seed < 500; seed++ {
		for _, opts := range []testprog.RandomOptions{{}, {VMOnly: true, NoCalls: true}} {
			p := testprog.Random(rand.New(rand.NewPCG(seed, 0)), opts)
			again := testprog.Random(rand.New(rand.NewPCG(seed, 0)), opts)
			if !reflect.DeepEqual(p.Insns, again.Insns) || !bytes.Equal(p.NewMem(), again.NewMem()) {
				t.Fatalf("seed %d: two different programs", seed)
			}
			prog, err := vm.Load(p.Insns)
			if err != nil {
				t.Fatalf("seed %d %+v: %v\n%v", seed, opts, err, p.Insns)
			}
			var mems [2][]byte
			var r0s [2]uint64
			for i, unchecked := range []bool{false, true} {
				m := vm.NewMachine(vm.Options{Unchecked: unchecked})
				mems[i] = p.NewMem()
				r0s[i], err = m.RunRaw(prog, mems[i])
				if err != nil {
					t.Fatalf("seed %d %+v unchecked=%v: %v\n%v", seed, opts, unchecked, err, p.Insns)
				}
			}
			if r0s[0] != r0s[1] || !bytes.Equal(mems[0], mems[1]) {
				t.Fatalf("seed %d: checked and unchecked runs differ", seed)
			}
		}
	}
}
