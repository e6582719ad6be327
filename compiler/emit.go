package compiler

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// emitter turns allocated IR into eBPF instructions with source
// positions.
type emitter struct {
	insns  asm.Instructions
	pos    []lang.Pos
	labels map[int]int // label → instruction index
	fixups []fixup     // jumps to resolve
	phys   map[vreg]uint8
	cur    lang.Pos
}

type fixup struct {
	insn, label int
}

func (e *emitter) r(v vreg) asm.Register {
	switch v {
	case fp:
		return asm.R10
	case r0Marker:
		return asm.R0
	}
	return asm.Register(e.phys[v])
}

func (e *emitter) add(ins asm.Instruction) {
	e.insns = append(e.insns, ins)
	e.pos = append(e.pos, e.cur)
}

// movImm loads a 64-bit constant into dst.
func (e *emitter) movImm(dst asm.Register, v int64) {
	if fitsImm32(v) {
		e.add(asm.Mov.Imm(dst, int32(v)))
		return
	}
	e.add(asm.LoadImm(dst, v, asm.DWord))
}

func (e *emitter) movOp(dst asm.Register, a operand) {
	if a.isImm() {
		e.movImm(dst, a.imm)
		return
	}
	if src := e.r(a.reg); src != dst {
		e.add(asm.Mov.Reg(dst, src))
	}
}

func (e *emitter) insn(in *insn) {
	e.cur = in.pos
	switch in.op {
	case irLabel:
		e.labels[in.label] = len(e.insns)
	case irEntry:
		if d := e.r(in.dst); d != asm.R1 {
			e.add(asm.Mov.Reg(d, asm.R1))
		}
	case irMov:
		d := e.r(in.dst)
		switch {
		case in.w32 && in.a.isImm():
			e.add(asm.Mov.Imm32(d, int32(in.a.imm)))
		case in.w32:
			e.add(asm.Mov.Reg32(d, e.r(in.a.reg)))
		default:
			e.movOp(d, in.a)
		}
	case irALU:
		d := e.r(in.dst)
		switch {
		case in.a.isImm() && in.w32:
			e.add(in.alu.Imm32(d, int32(in.a.imm)))
		case in.a.isImm():
			e.add(in.alu.Imm(d, int32(in.a.imm)))
		case in.w32:
			e.add(in.alu.Reg32(d, e.r(in.a.reg)))
		default:
			e.add(in.alu.Reg(d, e.r(in.a.reg)))
		}
	case irNeg:
		e.add(asm.Instruction{OpCode: asm.Neg.Op(asm.ImmSource), Dst: e.r(in.dst)})
	case irMovSX:
		op := map[asm.Size]asm.ALUOp{asm.Byte: asm.MovSX8, asm.Half: asm.MovSX16, asm.Word: asm.MovSX32}[in.size]
		e.add(asm.Instruction{OpCode: op.Op(asm.RegSource), Dst: e.r(in.dst), Src: e.r(in.a.reg)})
	case irLoad:
		op := asm.LoadMemOp(in.size)
		if in.signed {
			op = asm.LoadMemSXOp(in.size)
		}
		e.add(asm.Instruction{OpCode: op, Dst: e.r(in.dst), Src: e.r(in.base), Offset: int16(in.off)})
	case irStore:
		if in.a.isImm() {
			e.add(asm.Instruction{OpCode: asm.StoreImmOp(in.size), Dst: e.r(in.base), Offset: int16(in.off), Constant: in.a.imm})
		} else {
			e.add(asm.Instruction{OpCode: asm.StoreMemOp(in.size), Dst: e.r(in.base), Src: e.r(in.a.reg), Offset: int16(in.off)})
		}
	case irRegion:
		e.add(asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: e.r(in.dst), Src: bytecode.PseudoMapValue,
			Constant: int64(uint64(uint32(in.off))<<32 | uint64(uint32(in.idx)))})
	case irJump:
		e.fixups = append(e.fixups, fixup{len(e.insns), in.label})
		if in.a.isImm() {
			e.add(asm.Instruction{OpCode: in.jop.Op(asm.ImmSource), Dst: e.r(in.dst), Constant: in.a.imm})
		} else {
			e.add(asm.Instruction{OpCode: in.jop.Op(asm.RegSource), Dst: e.r(in.dst), Src: e.r(in.a.reg)})
		}
	case irJa:
		e.fixups = append(e.fixups, fixup{len(e.insns), in.label})
		e.add(asm.Instruction{OpCode: asm.Ja.Op(asm.ImmSource)})
	case irCall:
		e.callArgs(in.args)
		e.add(asm.Instruction{OpCode: asm.Call.Op(asm.ImmSource), Constant: int64(in.helper)})
		if in.dst > 0 {
			if d := e.r(in.dst); d != asm.R0 {
				e.add(asm.Mov.Reg(d, asm.R0))
			}
		}
	case irAtomic:
		e.add(asm.Instruction{OpCode: in.atomic.OpCode(in.size), Dst: e.r(in.base), Src: e.r(in.dst),
			Offset: int16(in.off), Constant: int64(in.atomic >> 8)})
	case irCmpXchg:
		e.movOp(asm.R0, in.a)
		e.add(asm.Instruction{OpCode: asm.CmpXchg.OpCode(in.size), Dst: e.r(in.base), Src: e.r(in.args[0].reg),
			Offset: int16(in.off), Constant: int64(asm.CmpXchg >> 8)})
		if d := e.r(in.dst); d != asm.R0 {
			e.add(asm.Mov.Reg(d, asm.R0))
		}
	case irExit:
		e.movOp(asm.R0, in.a)
		e.add(asm.Return())
	case irSpill:
		e.add(asm.Instruction{OpCode: asm.StoreMemOp(asm.DWord), Dst: asm.R10, Src: e.r(in.a.reg), Offset: int16(-in.slot)})
	case irFill:
		e.add(asm.Instruction{OpCode: asm.LoadMemOp(asm.DWord), Dst: e.r(in.dst), Src: asm.R10, Offset: int16(-in.slot)})
	}
}

// callArgs moves the arguments into r1, r2, … as one parallel move: a
// register still to be read is never overwritten first.
func (e *emitter) callArgs(args []operand) {
	type move struct {
		dst asm.Register
		src operand
	}
	var pending []move
	for i, a := range args {
		dst := asm.Register(i + 1)
		if !a.isImm() && e.r(a.reg) == dst {
			continue
		}
		pending = append(pending, move{dst, a})
	}
	for len(pending) > 0 {
		progress := false
		for i := 0; i < len(pending); i++ {
			m := pending[i]
			blocked := false
			for j, o := range pending {
				if j != i && !o.src.isImm() && e.r(o.src.reg) == m.dst {
					blocked = true
					break
				}
			}
			if blocked {
				continue
			}
			e.movOp(m.dst, m.src)
			pending = append(pending[:i], pending[i+1:]...)
			i--
			progress = true
		}
		if !progress {
			// A cycle among r1–r5: park one source in r0, which no
			// argument is read from inside a cycle.
			m := pending[0]
			e.add(asm.Mov.Reg(asm.R0, e.r(m.src.reg)))
			for j := range pending {
				if !pending[j].src.isImm() && e.r(pending[j].src.reg) == e.r(m.src.reg) {
					pending[j].src = operand{reg: r0Marker}
				}
			}
		}
	}
}

// r0Marker stands for "the value parked in r0" during callArgs.
const r0Marker vreg = math.MaxInt32

// resolve fills in jump offsets, counting lddw as two slots.
func (e *emitter) resolve() error {
	slot := make([]int, len(e.insns)+1)
	for i, ins := range e.insns {
		slot[i+1] = slot[i] + int(ins.Size()/asm.InstructionSize)
	}
	for _, f := range e.fixups {
		target, ok := e.labels[f.label]
		if !ok {
			return fmt.Errorf("internal error: label L%d was never placed", f.label)
		}
		off := slot[target] - slot[f.insn] - 1
		if off < math.MinInt16 || off > math.MaxInt16 {
			return fmt.Errorf("the handler is too large: a jump spans %d instructions, more than a 16-bit offset reaches", off)
		}
		e.insns[f.insn].Offset = int16(off)
	}
	return nil
}
