package verifier

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// FuzzVerify feeds arbitrary slot streams to the verifier in raw mode: it
// must never panic, and whatever it accepts must run in the checked VM
// without a fault and within its proven bound, on the fuzzed memory.
func FuzzVerify(f *testing.F) {
	files, _ := filepath.Glob("testdata/cases/*.s")
	for _, file := range files {
		vc, err := parseCase(file)
		if err != nil || vc.raw != nil || vc.memSize != 64 {
			continue
		}
		insns, err := bytecode.Assemble(vc.src)
		if err != nil {
			continue
		}
		raw, err := bytecode.Encode(insns)
		if err != nil {
			continue
		}
		f.Add(raw, make([]byte, 64))
	}
	f.Fuzz(func(t *testing.T, raw, mem []byte) {
		insns, err := bytecode.Decode(raw)
		if err != nil {
			return
		}
		mem = append(mem, make([]byte, 64)...)[:64]
		rep, err := Verify(insns, Config{Raw: true, MemSize: 64, Budget: 100_000})
		if err != nil {
			var verr *Error
			if !errors.As(err, &verr) {
				t.Fatalf("rejection is not a *verifier.Error: %v", err)
			}
			return
		}
		p, err := vm.Load(insns)
		if err != nil {
			t.Fatalf("verified but the VM refuses it: %v", err)
		}
		m := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
		if _, err := m.RunRaw(p, mem); err != nil {
			text, _ := bytecode.Disassemble(insns)
			t.Fatalf("verified (max-insns=%d) but faults: %v\n%s", rep.MaxInsns, err, text)
		}
		if m.Executed() > rep.MaxInsns {
			t.Fatalf("executed %d, proven bound %d", m.Executed(), rep.MaxInsns)
		}
	})
}
