package compiler

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/lang"
)

// vreg is a virtual register. 0 means none; fp stands for r10, the frame
// pointer, which is never allocated.
type vreg int32

const (
	noReg vreg = 0
	fp    vreg = -1
)

func (r vreg) String() string {
	switch r {
	case noReg:
		return "_"
	case fp:
		return "fp"
	}
	return fmt.Sprintf("v%d", int32(r))
}

// operand is a register or an immediate.
type operand struct {
	reg vreg
	imm int64
}

func immOp(v int64) operand   { return operand{imm: v} }
func regOp(r vreg) operand    { return operand{reg: r} }
func (o operand) isImm() bool { return o.reg == noReg }
func (o operand) String() string {
	if o.isImm() {
		return fmt.Sprint(o.imm)
	}
	return o.reg.String()
}

// fitsImm32 reports whether v can be an instruction's 32-bit immediate
// (sign-extended to 64 bits by ALU64 and jumps).
func fitsImm32(v int64) bool { return v >= -1<<31 && v < 1<<31 }

type irOp uint8

const (
	irMov     irOp = iota // dst = a (register or any 64-bit immediate)
	irALU                 // dst = dst alu a; w32 selects the 32-bit form
	irNeg                 // dst = -dst
	irMovSX               // dst = sign-extend the low size bytes of a (a register)
	irLoad                // dst = *(size *)(base + off); signed: sign-extending load
	irStore               // *(size *)(base + off) = a
	irRegion              // dst = address of byte off of region idx (lddw)
	irJump                // if dst cond a goto label (w32: 32-bit compare)
	irJa                  // goto label
	irLabel               // label:
	irCall                // dst = helper(args...) (dst may be noReg)
	irAtomic              // dst = atomic fetch-op [base+off], dst (two-address: dst holds the operand)
	irCmpXchg             // dst = cmpxchg [base+off], expect a, new args[0]
	irExit                // return a
	irEntry               // dst = the context pointer (r1 at entry)
	irSpill               // *(u64 *)(fp - slot) = a   (from regalloc)
	irFill                // dst = *(u64 *)(fp - slot)
)

// insn is one IR instruction. Two-address like eBPF: an ALU op reads and
// writes dst.
type insn struct {
	op     irOp
	alu    asm.ALUOp
	jop    asm.JumpOp
	atomic asm.AtomicOp
	size   asm.Size
	w32    bool
	signed bool // irLoad: sign-extending load

	dst  vreg
	a    operand
	base vreg // memory ops: a pointer register or fp
	off  int64
	idx  int // irRegion: region index
	slot int // irSpill/irFill: stack offset below fp (positive)

	label  int
	helper int32
	args   []operand

	pos   lang.Pos
	depth int // loop nesting depth, for spill weights
}

// uses appends the virtual registers insn reads.
func (in *insn) uses(out []vreg) []vreg {
	add := func(r vreg) {
		if r > 0 {
			out = append(out, r)
		}
	}
	switch in.op {
	case irMov, irMovSX, irExit, irSpill:
		add(in.a.reg)
	case irALU:
		add(in.dst)
		add(in.a.reg)
	case irNeg:
		add(in.dst)
	case irLoad:
		add(in.base)
	case irStore:
		add(in.base)
		add(in.a.reg)
	case irJump:
		add(in.dst)
		add(in.a.reg)
	case irCall:
		for _, a := range in.args {
			add(a.reg)
		}
	case irAtomic:
		add(in.base)
		add(in.dst)
	case irCmpXchg:
		add(in.base)
		add(in.a.reg)
		for _, a := range in.args {
			add(a.reg)
		}
	}
	return out
}

// def returns the virtual register insn writes, if any.
func (in *insn) def() vreg {
	switch in.op {
	case irMov, irALU, irNeg, irMovSX, irLoad, irRegion, irCall, irAtomic, irCmpXchg, irEntry, irFill:
		if in.dst > 0 {
			return in.dst
		}
	}
	return noReg
}

// clobbers says which physical registers insn destroys besides its
// result: a helper call r0–r5, cmpxchg r0 (it works through r0).
func (in *insn) clobbers() (mask uint16) {
	switch in.op {
	case irCall:
		return 0b111111
	case irCmpXchg:
		return 0b1
	}
	return 0
}

func (in *insn) String() string {
	var b strings.Builder
	switch in.op {
	case irMov:
		fmt.Fprintf(&b, "%s = %s", in.dst, in.a)
	case irALU:
		w := ""
		if in.w32 {
			w = "32"
		}
		fmt.Fprintf(&b, "%s %s%s= %s", in.dst, in.alu, w, in.a)
	case irNeg:
		fmt.Fprintf(&b, "%s = -%s", in.dst, in.dst)
	case irMovSX:
		fmt.Fprintf(&b, "%s = sx%d(%s)", in.dst, in.size.Sizeof()*8, in.a)
	case irLoad:
		fmt.Fprintf(&b, "%s = *(%s)(%s%+d) signed=%v", in.dst, in.size, in.base, in.off, in.signed)
	case irStore:
		fmt.Fprintf(&b, "*(%s)(%s%+d) = %s", in.size, in.base, in.off, in.a)
	case irRegion:
		fmt.Fprintf(&b, "%s = region[%d]+%d", in.dst, in.idx, in.off)
	case irJump:
		fmt.Fprintf(&b, "if %s %s %s goto L%d", in.dst, in.jop, in.a, in.label)
	case irJa:
		fmt.Fprintf(&b, "goto L%d", in.label)
	case irLabel:
		fmt.Fprintf(&b, "L%d:", in.label)
	case irCall:
		fmt.Fprintf(&b, "%s = call %d %v", in.dst, in.helper, in.args)
	case irAtomic:
		fmt.Fprintf(&b, "%s = atomic %s [%s%+d]", in.dst, in.atomic, in.base, in.off)
	case irCmpXchg:
		fmt.Fprintf(&b, "%s = cmpxchg [%s%+d] %s %v", in.dst, in.base, in.off, in.a, in.args)
	case irExit:
		fmt.Fprintf(&b, "exit %s", in.a)
	case irEntry:
		fmt.Fprintf(&b, "%s = ctx", in.dst)
	case irSpill:
		fmt.Fprintf(&b, "spill fp-%d = %s", in.slot, in.a)
	case irFill:
		fmt.Fprintf(&b, "%s = fill fp-%d", in.dst, in.slot)
	}
	return b.String()
}
