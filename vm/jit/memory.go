package jit

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// stackProof reports whether a size-byte access at r10+off is inside the
// stack in every frame, and for an atomic also aligned: r10 is
// stack+4096-512k for frame k (0 to 7), so offsets from -512 to -size stay
// within [stack+0, stack+4096), and r10 is a multiple of 512.
func stackProof(off int16, size uint32, atomic bool) bool {
	return off >= -vm.StackSize && int(off) <= -int(size) && (!atomic || int(off)%int(size) == 0)
}

func sizeOf(raw byte) uint32 {
	return [4]uint32{4, 2, 1, 8}[(raw>>3)&3]
}

// hostAddr computes the access's eBPF address into lA and leaves its host
// (linear) address on the stack. Checked: an access outside its segment, or
// a write to a read-only one, faults at slot first.
//
// Plain loads and stores inside loops go through a segment cache of their
// own (cached): the segment the site last reached, its linear base and
// the window of addresses that fit there. A hit adds the base to the
// address, so that the base table's load is off the path from one
// access's result to the next's address (a pointer chase); a miss, and
// every first access of a run, takes the table path and fills the cache.
func (t *translator) hostAddr(base asm.Register, off int16, size uint32, write bool, op int32, slot int) {
	c := &t.c
	if base == asm.R10 && (!t.checked || stackProof(off, size, op == infoAtomic)) {
		// r10 is never written (bytecode.Validate), so it always points into
		// the stack, at the top of the current frame: no segment lookup.
		// Checked code takes this path only where no frame can fault
		// (stackProof), which no verifier needs to prove.
		c.get(10)
		c.op(opI32WrapI64)
		c.i32(int32(stackBase) + int32(off))
		c.op(opI32Add)
		return
	}
	if f := t.fastLoop; f != nil {
		if s, ok := f.site[slot]; ok {
			t.guardedAddr(&f.groups[s.group], s, base, off)
			return
		}
	}
	c.get(reg(base))
	if off != 0 {
		c.i64(int64(off))
		c.op(opI64Add)
	}
	c.set(lA)
	site, cached := t.cacheSite(slot, op)
	if !cached {
		t.tableAddr(size, write, op, slot)
		return
	}
	// The hit's address, base + (u32)lA; then, if lA - seg<<32 >= window,
	// a miss: the tables' address instead. (An if without an else, which
	// Cranelift lays out of line: a hit runs straight through.)
	c.get(lA)
	c.op(opI32WrapI64)
	c.get(site + 2)
	c.op(opI32Add)
	c.set(lHost)
	c.get(lA)
	c.get(site)
	c.op(opI64Sub)
	c.get(site + 1)
	c.op(opI64GeU)
	c.op(opIf, blockTypeEmpty)
	t.push(label{block: -1})
	t.tableAddr(size, write, op, slot)
	c.set(lHost)
	// The access fits (or it faulted): cache its segment.
	c.get(lA)
	c.i64(-1 << 32)
	c.op(opI64And)
	c.set(site)
	if t.checked {
		c.get(lH)
		c.mem(opI64Load, 3, limitTable(size, write))
		c.get(site)
		c.op(opI64Sub)
	} else {
		c.i64(1 << 32) // the whole segment: the verifier proved the rest
	}
	c.set(site + 1)
	c.get(lH)
	c.mem(opI32Load, 2, baseTable)
	c.set(site + 2)
	t.pop()
	c.get(lHost)
}

// tableAddr is hostAddr's path through the segment tables, for the
// address in lA; it leaves the segment × 8 in lH.
func (t *translator) tableAddr(size uint32, write bool, op int32, slot int) {
	c := &t.c
	t.segIndex()
	if !t.checked {
		c.get(lH)
		c.mem(opI32Load, 2, baseTable)
		c.get(lA)
		c.op(opI32WrapI64)
		c.op(opI32Add)
		return
	}
	// a >= limit[segment & 255]: fault. An address of segment 256 or more
	// is at least 2^40, above every limit, and so is one near 2^64, where
	// a + size would wrap: no clamp, no addition.
	c.get(lA)
	c.get(lH)
	c.mem(opI64Load, 3, limitTable(size, write))
	c.op(opI64GeU)
	c.op(opIf, blockTypeEmpty)
	t.faultWith(statusMem, slot, true, int32(size)|int32(b2i(write))<<8|op<<9)
	c.op(opEnd)
	if op == infoAtomic {
		c.get(lA)
		c.i64(int64(size - 1))
		c.op(opI64And)
		c.op(opI64Eqz)
		c.op(opI32Eqz)
		c.op(opIf, blockTypeEmpty)
		t.faultWith(int32(vm.FaultMisaligned), slot, true, int32(size)|1<<8|op<<9)
		c.op(opEnd)
	}
	c.get(lH)
	c.mem(opI32Load, 2, baseTable)
	c.get(lA)
	c.op(opI32WrapI64)
	c.op(opI32Add)
}

// segIndex sets lH to segment×8 of the address in lA, (a >> 29) & 0x7f8:
// the index into the base and limit tables, for segments 0–255 (higher
// ones wrap; the limit test catches them).
func (t *translator) segIndex() {
	c := &t.c
	c.get(lA)
	c.i64(29)
	c.op(opI64ShrU)
	c.op(opI32WrapI64)
	c.i32(0x7f8)
	c.op(opI32And)
	c.set(lH)
}

// maxCacheSites bounds the segment caches of one program: each is three
// locals.
const maxCacheSites = 64

// cacheSite returns the first local of slot's segment cache (seg<<32,
// window, linear base), if the access gets one: a plain load or store in
// a loop, while there are caches left.
func (t *translator) cacheSite(slot int, op int32) (uint32, bool) {
	if op == infoAtomic || !t.inLoop[slot] || t.sites == maxCacheSites {
		return 0, false
	}
	t.sites++
	l := t.newLocal(wI64)
	t.newLocal(wI64)
	t.newLocal(wI32)
	return l, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *translator) emitAtomic(ins *asm.Instruction, slot int, raw byte, size uint32) error {
	c := &t.c
	dw := raw == bytecode.OpAtomDW
	if !dw && raw != bytecode.OpAtomW {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported opcode %#02x", raw)}
	}
	pick := func(w, d byte) byte {
		if dw {
			return d
		}
		return w
	}
	var op byte
	fetch := true
	switch ins.OpCode.AtomicOp() {
	case asm.AddAtomic:
		op, fetch = pick(atomI32RmwAdd, atomI64RmwAdd), false
	case asm.OrAtomic:
		op, fetch = pick(atomI32RmwOr, atomI64RmwOr), false
	case asm.AndAtomic:
		op, fetch = pick(atomI32RmwAnd, atomI64RmwAnd), false
	case asm.XorAtomic:
		op, fetch = pick(atomI32RmwXor, atomI64RmwXor), false
	case asm.FetchAdd:
		op = pick(atomI32RmwAdd, atomI64RmwAdd)
	case asm.FetchOr:
		op = pick(atomI32RmwOr, atomI64RmwOr)
	case asm.FetchAnd:
		op = pick(atomI32RmwAnd, atomI64RmwAnd)
	case asm.FetchXor:
		op = pick(atomI32RmwXor, atomI64RmwXor)
	case asm.Xchg:
		op = pick(atomI32RmwXchg, atomI64RmwXchg)
	case asm.CmpXchg:
		op = pick(atomI32RmwCmpxchg, atomI64RmwCmpxchg)
	default:
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported atomic %#x", uint32(ins.OpCode.AtomicOp()))}
	}
	align := uint32(2)
	if dw {
		align = 3
	}
	t.hostAddr(ins.Dst, ins.Offset, size, true, infoAtomic, slot)
	src := reg(ins.Src)
	if op == atomI32RmwCmpxchg || op == atomI64RmwCmpxchg {
		// cmpxchg: compare with r0, store src, old value to r0.
		c.get(0)
		if !dw {
			c.op(opI32WrapI64)
		}
		c.get(src)
		if !dw {
			c.op(opI32WrapI64)
		}
		c.atomic(op, align)
		if !dw {
			c.op(opI64ExtendI32U)
		}
		c.set(0)
		return nil
	}
	c.get(src)
	if !dw {
		c.op(opI32WrapI64)
	}
	c.atomic(op, align)
	if !dw {
		c.op(opI64ExtendI32U)
	}
	if fetch {
		c.set(src)
	} else {
		c.op(0x1a) // drop
	}
	return nil
}

// writesMemory reports whether an instruction may write memory outside
// the stack.
func writesMemory(insns []*asm.Instruction) bool {
	for _, ins := range insns {
		if ins == nil {
			continue
		}
		raw := bytecode.RawOpcode(ins)
		switch class := asm.Class(raw & 7); {
		case (class == asm.StClass || class == asm.StXClass) && ins.Dst != asm.R10:
			return true
		case raw == bytecode.OpCall && ins.Src != bytecode.PseudoCall, raw == bytecode.OpCallX:
			return true
		}
	}
	return false
}

// callsHelpers reports whether the program calls a helper.
func callsHelpers(insns []*asm.Instruction) bool {
	for _, ins := range insns {
		if ins == nil {
			continue
		}
		if raw := bytecode.RawOpcode(ins); raw == bytecode.OpCall && ins.Src != bytecode.PseudoCall || raw == bytecode.OpCallX {
			return true
		}
	}
	return false
}

// stackLow returns the lowest stack offset the program can write. Only
// stores and atomics at r10+off write the stack when nothing else can (no
// store through another register, which may hold a stack pointer, no
// helper, no local call, which moves r10 down); then r10 is always
// stack+StackBytes, and they write from StackBytes+off up. Otherwise it
// is 0: the whole stack.
func stackLow(insns []*asm.Instruction) int {
	if writesMemory(insns) {
		return 0
	}
	low := vm.StackBytes
	for _, ins := range insns {
		if ins == nil {
			continue
		}
		raw := bytecode.RawOpcode(ins)
		switch class := asm.Class(raw & 7); {
		case raw == bytecode.OpCall && ins.Src == bytecode.PseudoCall:
			return 0
		case class == asm.StClass || class == asm.StXClass: // through r10: writesMemory saw the others
			low = min(low, max(0, vm.StackBytes+int(ins.Offset)))
		}
	}
	return low
}
