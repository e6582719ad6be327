package compiler

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// callArgs is a parallel move: whatever registers the arguments sit in
// (including a cycle among r1–r5), each ends up in its argument register.
func TestCallArgsParallelMove(t *testing.T) {
	tests := []struct {
		name string
		phys []uint8 // register of argument i's value
	}{
		{"in place", []uint8{1, 2, 3}},
		{"swap", []uint8{2, 1}},
		{"rotate", []uint8{2, 3, 4, 5, 1}},
		{"chain from r0", []uint8{0, 1, 2}},
		{"callee-saved sources", []uint8{6, 7, 8, 9, 1}},
		{"two cycles", []uint8{2, 1, 4, 3}},
	}
	for _, tt := range tests {
		e := &emitter{phys: map[vreg]uint8{}}
		var args []operand
		regs := [11]int64{}
		for i, p := range tt.phys {
			v := vreg(i + 1)
			e.phys[v] = p
			args = append(args, regOp(v))
			regs[p] = int64(100 + i) // the value of argument i
		}
		withConst := len(args) < 5 // helpers take at most five arguments
		if withConst {
			args = append(args, immOp(42))
		}
		e.callArgs(args)
		for _, ins := range e.insns {
			switch {
			case ins.OpCode == asm.Mov.Op(asm.RegSource):
				regs[ins.Dst] = regs[ins.Src]
			case ins.OpCode == asm.Mov.Op(asm.ImmSource):
				regs[ins.Dst] = ins.Constant
			default:
				t.Fatalf("%s: unexpected instruction %v", tt.name, ins)
			}
		}
		for i := range tt.phys {
			if regs[i+1] != int64(100+i) {
				t.Errorf("%s: r%d = %d, want argument %d (%d)", tt.name, i+1, regs[i+1], i, 100+i)
			}
		}
		if withConst && regs[len(tt.phys)+1] != 42 {
			t.Errorf("%s: the constant argument is %d", tt.name, regs[len(tt.phys)+1])
		}
	}
}
