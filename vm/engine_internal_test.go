package vm

import (
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// TestInterpInstance: a program's instance, for callers that hold it as
// an Executable, interprets it on the machine.
func TestInterpInstance(t *testing.T) {
	insns, err := bytecode.Assemble("mov %r0, %r2\nexit")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(insns)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMachine(Options{})
	in, err := p.Instantiate(&m.ec)
	if err != nil {
		t.Fatal(err)
	}
	if r0, err := in.Run(0, 0, 7); r0 != 7 || err != nil || m.Executed() != 2 {
		t.Errorf("r0 = %d, err %v, executed %d", r0, err, m.Executed())
	}
}
