package vm_test

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// FuzzVM runs arbitrary slot streams in checked mode: a fuzzed program may
// fail to load or fault, but must never panic or hit an internal error.
func FuzzVM(f *testing.F) {
	for _, src := range []string{
		"mov %r0, 1\nexit",
		"ldxdw %r0, [%r1+8]\nexit",
		"L:\nadd %r0, 1\nja L",
		"mov %r3, 0\nlock cmpxchg [%r10-8], %r3\nexit",
		"call local f\nexit\nf:\nstxdw [%r10-8], %r1\nexit",
		"lddw %r1, region[0]+0\nldxb %r0, [%r1]\nexit",
	} {
		insns, err := bytecode.Assemble(src)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := bytecode.Encode(insns)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, []byte("0123456789abcdef"))
	}
	f.Fuzz(func(t *testing.T, raw, mem []byte) {
		p, err := vm.LoadRaw(raw)
		if err != nil {
			return
		}
		m := vm.NewMachine(vm.Options{Budget: 10_000, Helpers: vm.RawHelpers()})
		if _, err := m.Map(vm.RegionSegment(0), make([]byte, 64), true); err != nil {
			t.Fatal(err)
		}
		_, err = m.RunRaw(p, mem)
		if errors.Is(err, vm.ErrInternal) {
			t.Fatalf("internal error: %v", err)
		}
		if err != nil && !errors.As(err, new(*vm.Fault)) {
			t.Fatalf("run error %T is not a *vm.Fault: %v", err, err)
		}
	})
}

// FuzzInvoke runs arbitrary slot streams as checked handlers with the ABI's
// helpers: a run may fault, but never panic or hit an internal error, and a
// Result says no more than the ABI allows.
func FuzzInvoke(f *testing.F) {
	for _, src := range []string{hashRequest, forwards, readsZeroReply, "mov %r0, 65\nexit", "mov %r0, -3\nexit",
		"mov %r6, %r1\nldxdw %r1, [%r6+16]\nldxdw %r2, [%r6]\nmov %r3, 8\ncall 2\nmov %r0, 8\nexit"} {
		insns, err := bytecode.Assemble(src)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := bytecode.Encode(insns)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, []byte("0123456789abcdef"))
	}
	f.Fuzz(func(t *testing.T, raw, request []byte) {
		p, err := vm.LoadRaw(raw)
		if err != nil {
			return
		}
		m := vm.NewMachine(vm.Options{Budget: 10_000, Helpers: vm.ABIHelpers(vm.NewLocalEnv(0, nil))})
		inv := &vm.Invocation{Request: request, Reply: make([]byte, 64),
			Regions: []vm.RegionMem{{Data: make([]byte, 64), Writable: true}, {Data: make([]byte, 8)}}}
		res, err := m.Invoke(p, inv)
		switch {
		case errors.Is(err, vm.ErrInternal):
			t.Fatalf("internal error: %v", err)
		case err != nil && !errors.As(err, new(*vm.Fault)):
			t.Fatalf("run error %T is not a *vm.Fault: %v", err, err)
		case err != nil && res.Outcome != bytecode.OutcomeInvalid:
			t.Fatalf("error %v with outcome %v", err, res.Outcome)
		case err == nil && res.Outcome == bytecode.OutcomeReply && int64(len(res.Reply)) != res.R0:
			t.Fatalf("r0 = %d with a reply of %d bytes", res.R0, len(res.Reply))
		case err == nil && (res.Outcome == bytecode.OutcomeForwarded) != (res.Forward != nil):
			t.Fatalf("outcome %v with Forward %v", res.Outcome, res.Forward)
		}
	})
}
