package vm

import (
	"errors"
	"strings"
	"testing"
)

// TestInternalFaults covers what Load never produces, so only a Program built
// by hand reaches it: an op the loop does not know, and a Go panic inside the
// loop, which a checked run recovers as an internal fault at m.pc.
func TestInternalFaults(t *testing.T) {
	exit := insn{op: opExit}
	tests := []struct {
		name    string
		code    []insn
		entry   int
		wantPC  int
		wantMsg string
	}{
		{"unknown op", []insn{{op: opMovK}, {op: numOpcodes}, exit}, 0, 1, "insn 1: internal interpreter error: " + errBadOp(numOpcodes).Error()},
		{"second slot of lddw", []insn{{op: opJa, off: 1}, {op: opInvalid}, exit}, 0, 1, "bad internal opcode 0"},
		// A panic reports the entry, not a slot left over from the helper
		// call of the run before.
		{"panic", []insn{exit, exit, exit, {op: opDivK}, exit}, 3, 3, "integer divide by zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMachine(Options{Helpers: RawHelpers()})
			before := &Program{code: []insn{{op: opMovK}, {op: opMovK}, {op: opCall, imm: 5}, exit, {op: opFellOff}}, slots: 4}
			if _, err := m.Run(before); err != nil || m.pc != 2 {
				t.Fatalf("helper run: err = %v, m.pc = %d", err, m.pc)
			}
			p := &Program{code: append(tt.code, insn{op: opFellOff}), slots: len(tt.code)}
			_, err := m.RunAt(p, tt.entry)
			var f *Fault
			if !errors.As(err, &f) || !errors.Is(err, ErrInternal) {
				t.Fatalf("err = %v, want an internal fault", err)
			}
			if f.PC != tt.wantPC || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q (PC %d), want PC %d and %q", err, f.PC, tt.wantPC, tt.wantMsg)
			}
		})
	}
}
