package compiler

import (
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// An access function (spec/abi.md, Access functions) is compiled from a
// handler's reads clause as an entry of its own: on the handler's
// context and request it writes one range per item into the reply,
// (region, offset, length) as three u32s, and returns their bytes. An
// index past its array makes the item's range empty; a range's count is
// cut at the array's end; a negative count counts as 0. So every range it
// writes lies inside its region, whatever the request.

// access lowers h's reads clause to IR.
func (b *builder) access() {
	h := b.h
	items := h.Decl.Reads.Items
	b.live = true
	b.pos = h.Decl.Reads.Pos()
	b.ctx = b.keep(b.newReg())
	b.emit(insn{op: irEntry, dst: b.ctx})
	b.data, b.dataEnd = b.packet(bytecode.CtxData, bytecode.CtxDataEnd, h.Args.Size, bytecode.FailShortRequest)
	b.reply, b.replyEnd = b.packet(bytecode.CtxReply, bytecode.CtxReplyEnd, int64(len(items)*bytecode.AccessRangeSize), bytecode.FailShortReply)
	for k, item := range items {
		if !b.live {
			break
		}
		b.pos = item.Pos()
		b.accessRange(int64(k*bytecode.AccessRangeSize), item)
	}
	if b.live {
		b.emit(insn{op: irExit, a: immOp(int64(len(items) * bytecode.AccessRangeSize))})
	}
	for _, f := range b.fails {
		b.pos = f.pos
		b.label(f.label)
		b.fail(f.code)
	}
}

// rangeStep is one step from a reads item's region to its place.
type rangeStep struct {
	field int64       // a field's offset, when index is nil
	index lang.Expr   // an element's index
	count lang.Expr   // the count of a slice (the last step)
	arr   *lang.Array // the array indexed
}

// accessRange writes the range of one reads item at reply+at.
func (b *builder) accessRange(at int64, item lang.Expr) {
	var steps []rangeStep
	e := item
	region := -1
	for region < 0 {
		switch x := e.(type) {
		case *lang.Ident:
			region = b.cu.info.Uses[x].(*lang.Region).Index
		case *lang.SelectorExpr:
			st := b.cu.info.Types[x.X].Type.(*lang.Struct)
			steps = append(steps, rangeStep{field: st.Field(x.Sel.Name).Offset})
			e = x.X
		case *lang.IndexExpr:
			steps = append(steps, rangeStep{index: x.Index, arr: b.cu.info.Types[x.X].Type.(*lang.Array)})
			e = x.X
		case *lang.SliceExpr:
			steps = append(steps, rangeStep{index: x.Index, count: x.Count, arr: b.cu.info.Types[x.X].Type.(*lang.Array)})
			e = x.X
		default:
			b.errorf(x.Pos(), "internal error: %T in a reads item", x)
			return
		}
	}
	off := int64(0)     // the constant part of the offset
	offReg := noReg     // the variable part, if any
	length := operand{} // set by a slice; otherwise the place's size
	haveLength := false
	empty := b.newLabel()
	for k := len(steps) - 1; k >= 0; k-- {
		s := steps[k]
		if s.index == nil {
			off += s.field
			continue
		}
		es := lang.Sizeof(s.arr.Elem)
		i := b.expr(s.index)
		var rem operand // elements from the index to the array's end
		if i.isImm() {
			off += i.imm * es
			rem = immOp(s.arr.Len - i.imm)
		} else {
			r := b.owned(i)
			b.jump(asm.JGE, r, b.small(immOp(s.arr.Len)), empty)
			if s.count != nil {
				t := b.copyReg(immOp(s.arr.Len))
				b.alu(asm.Sub, t, regOp(r), false)
				rem = regOp(t)
			}
			b.scale(r, es)
			if offReg == noReg {
				offReg = r
			} else {
				b.alu(asm.Add, offReg, regOp(r), false)
			}
		}
		if s.count == nil {
			continue
		}
		n := b.owned(b.expr(s.count))
		keep := b.newLabel()
		if lang.IsSigned(b.cu.info.Types[s.count].Type) {
			nonNeg := b.newLabel()
			b.jump(asm.JSGE, n, immOp(0), nonNeg)
			b.mov(n, immOp(0))
			b.label(nonNeg)
		}
		b.jump(asm.JLE, n, b.small(rem), keep)
		b.mov(n, rem)
		b.label(keep)
		b.scale(n, es)
		length, haveLength = regOp(n), true
	}
	if !haveLength {
		length = immOp(lang.Sizeof(b.cu.info.Types[item].Type))
	}
	offset := immOp(off)
	if offReg != noReg {
		if off != 0 {
			b.alu(asm.Add, offReg, b.small(immOp(off)), false)
		}
		offset = regOp(offReg)
	}
	done := b.newLabel()
	b.putRange(at, region, offset, length)
	b.ja(done)
	b.label(empty) // only if an index could be out of range
	b.putRange(at, region, immOp(0), immOp(0))
	b.label(done)
}

// scale multiplies r by the constant es.
func (b *builder) scale(r vreg, es int64) {
	switch {
	case es == 1:
	case es&(es-1) == 0:
		b.alu(asm.LSh, r, immOp(log2(es)), false)
	default:
		b.alu(asm.Mul, r, b.small(immOp(es)), false)
	}
}

// putRange stores (region, offset, length) at reply+at.
func (b *builder) putRange(at int64, region int, offset, length operand) {
	u32 := lang.Typ[lang.U32]
	for i, v := range []operand{immOp(int64(region)), offset, length} {
		b.store(place{typ: u32, base: b.reply, off: at + int64(4*i), root: rootReply}, v)
	}
}
