package vm_test

import (
	"strings"
	"testing"

	"github.com/naam-project/naam/vm"
)

// TestEngineHooks: InvokeWith and RunRawWith hand the run to the engine
// with the segments mapped and apply the ABI to what it returns; MapStack
// refuses what is not a whole, aligned stack.
func TestEngineHooks(t *testing.T) {
	p := load(t, "mov %r0, 0\nexit") // the engines below never run it
	m := vm.NewMachine(vm.Options{})
	var sawReply, sawRequest int
	engine := func(r0 uint64) vm.RunFunc {
		return func(m *vm.Machine, _ *vm.Program, entry int, r1, r2 uint64) (uint64, error) {
			m.BeginRun()
			sawRequest = len(m.Segment(vm.SegRequest).Data)
			sawReply = len(m.Segment(vm.SegReply).Data)
			m.EndRun(5, 1)
			return r0, nil
		}
	}
	res, err := m.InvokeWith(p, &vm.Invocation{Request: []byte("abc"), Reply: make([]byte, 16)}, engine(4))
	if err != nil || res.R0 != 4 || len(res.Reply) != 4 || res.Insns != 5 || sawRequest != 3 || sawReply != 16 {
		t.Errorf("InvokeWith: %+v, %v; the engine saw request %d, reply %d bytes", res, err, sawRequest, sawReply)
	}
	if m.Segment(vm.SegReply).Data != nil {
		t.Error("the reply stays mapped after InvokeWith")
	}
	_, err = m.InvokeWith(p, &vm.Invocation{Reply: make([]byte, 16)}, engine(17))
	if err == nil || !strings.Contains(err.Error(), "insn 1: bad handler return value: reply of 17 bytes") {
		t.Errorf("too long a reply: %v", err)
	}
	if r0, err := m.RunRawWith(p, make([]byte, 8), engine(9)); r0 != 9 || err != nil || sawRequest != 8 {
		t.Errorf("RunRawWith: %d, %v (request %d bytes)", r0, err, sawRequest)
	}
	if err := m.MapStack(make([]byte, 100)); err == nil {
		t.Error("MapStack took 100 bytes")
	}
}
