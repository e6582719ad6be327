package vm

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// hostPtr returns the host address of a size-byte access at addr, or nil if
// the access is outside its segment (or, for writes, the segment is
// read-only). Unchecked machines skip the checks.
func (m *Machine) hostPtr(addr, size uint64, write bool) unsafe.Pointer {
	idx := addr >> 32
	if m.opts.Unchecked {
		return unsafe.Add(m.segs[idx&(numSegments-1)].base, addr&0xffffffff)
	}
	if idx >= numSegments {
		return nil
	}
	s := &m.segs[idx]
	if off := addr & 0xffffffff; off+size <= s.size && (s.writable || !write) {
		return unsafe.Add(s.base, off)
	}
	return nil
}

// accessFault ends a run of n instructions with the fault that explains why
// hostPtr refused an access.
//
//go:noinline
func (m *Machine) accessFault(n uint64, pc int, addr, size uint64, write bool, op string) *Fault {
	m.steps = n
	kind := FaultOutOfBounds
	if idx := addr >> 32; idx < numSegments && write {
		s := &m.segs[idx]
		if off := addr & 0xffffffff; off+size <= s.size && !s.writable {
			kind = FaultReadOnly
		}
	}
	if rs := m.remoteAt(addr); rs != nil && (addr&0xffffffff)+size <= rs.size {
		// In bounds of a remote segment: its memory failed the load, or
		// the access is a store or an atomic verbs cannot do.
		f := m.memFault(FaultRemote, pc, addr, int(size), op)
		f.Err, m.remoteErr = m.remoteErr, nil
		switch {
		case f.Err != nil:
		case write && !rs.writable:
			f.Kind = FaultReadOnly
		default:
			f.Err = errRemoteWrite
		}
		return f
	}
	return m.memFault(kind, pc, addr, int(size), op)
}

// atomicPtr is hostPtr for atomics, which also need natural alignment. The
// check is on the eBPF address, the program's view; the host address is
// aligned too because every writable segment starts on an 8-byte boundary
// (the stack by layout, others by Map and RunRaw).
func (m *Machine) atomicPtr(pc int, addr, size uint64) (unsafe.Pointer, *Fault) {
	p := m.hostPtr(addr, size, true)
	if p == nil {
		return nil, m.accessFault(m.steps, pc, addr, size, true, "atomic")
	}
	if !m.opts.Unchecked && addr&(size-1) != 0 {
		return nil, m.memFault(FaultMisaligned, pc, addr, int(size), "atomic")
	}
	return p, nil
}

// run is the interpreter loop. It returns r0 or the fault and leaves the
// number of instructions executed in m.steps.
//
// Every exit path is one call of a function that takes all it needs as
// arguments: a value the loop still needs after a call would be spilled to
// the stack on every instruction.
//
// A taken jump or local call leaves the dispatch loop with break dispatch
// and goes through the one budget check below it. That shape matters: with
// the shared block after the switch instead (switch {...}; continue; taken:
// ...) the compiler routes every other instruction through an extra jump
// and register move on its way back to the dispatch, 35% or more slower in
// BenchmarkPrograms wherever the linker placed the code.
func (m *Machine) run(p *Program, pc int, regs *[11]uint64) (uint64, error) {
	var r [16]uint64
	copy(r[:], regs[:])
	code := p.code
	budget := m.budget
	var n uint64
	m.depth = 0
	base := unsafe.Pointer(unsafe.SliceData(code))
	for {
		var ins *insn
	dispatch:
		for {
			// Load validated every jump target, and the last slot is a
			// sentinel, so pc is always inside code.
			ins = (*insn)(unsafe.Add(base, uintptr(pc)*unsafe.Sizeof(insn{})))
			pc++
			n++
			d := ins.dst & 15
			switch ins.op {
			case opAddK:
				r[d] += ins.imm
			case opAddX:
				r[d] += r[ins.src&15]
			case opSubK:
				r[d] -= ins.imm
			case opSubX:
				r[d] -= r[ins.src&15]
			case opMulK:
				r[d] *= ins.imm
			case opMulX:
				r[d] *= r[ins.src&15]
			case opDivK:
				r[d] /= ins.imm
			case opDivX:
				if s := r[ins.src&15]; s != 0 {
					r[d] /= s
				} else {
					r[d] = 0
				}
			case opSDivK:
				r[d] = uint64(int64(r[d]) / int64(ins.imm))
			case opSDivX:
				if s := r[ins.src&15]; s != 0 {
					r[d] = uint64(int64(r[d]) / int64(s))
				} else {
					r[d] = 0
				}
			case opOrK:
				r[d] |= ins.imm
			case opOrX:
				r[d] |= r[ins.src&15]
			case opAndK:
				r[d] &= ins.imm
			case opAndX:
				r[d] &= r[ins.src&15]
			case opLshK:
				r[d] <<= ins.imm
			case opLshX:
				r[d] <<= r[ins.src&15] & 63
			case opRshK:
				r[d] >>= ins.imm
			case opRshX:
				r[d] >>= r[ins.src&15] & 63
			case opModK:
				r[d] %= ins.imm
			case opModX:
				if s := r[ins.src&15]; s != 0 {
					r[d] %= s
				}
			case opSModK:
				r[d] = uint64(int64(r[d]) % int64(ins.imm))
			case opSModX:
				if s := r[ins.src&15]; s != 0 {
					r[d] = uint64(int64(r[d]) % int64(s))
				}
			case opXorK:
				r[d] ^= ins.imm
			case opXorX:
				r[d] ^= r[ins.src&15]
			case opMovK:
				r[d] = ins.imm
			case opMovX:
				r[d] = r[ins.src&15]
			case opArshK:
				r[d] = uint64(int64(r[d]) >> ins.imm)
			case opArshX:
				r[d] = uint64(int64(r[d]) >> (r[ins.src&15] & 63))

			case opAdd32K:
				r[d] = uint64(uint32(r[d]) + uint32(ins.imm))
			case opAdd32X:
				r[d] = uint64(uint32(r[d]) + uint32(r[ins.src&15]))
			case opSub32K:
				r[d] = uint64(uint32(r[d]) - uint32(ins.imm))
			case opSub32X:
				r[d] = uint64(uint32(r[d]) - uint32(r[ins.src&15]))
			case opMul32K:
				r[d] = uint64(uint32(r[d]) * uint32(ins.imm))
			case opMul32X:
				r[d] = uint64(uint32(r[d]) * uint32(r[ins.src&15]))
			case opDiv32K:
				r[d] = uint64(uint32(r[d]) / uint32(ins.imm))
			case opDiv32X:
				if s := uint32(r[ins.src&15]); s != 0 {
					r[d] = uint64(uint32(r[d]) / s)
				} else {
					r[d] = 0
				}
			case opSDiv32K:
				r[d] = uint64(uint32(int32(r[d]) / int32(ins.imm)))
			case opSDiv32X:
				if s := int32(r[ins.src&15]); s != 0 {
					r[d] = uint64(uint32(int32(r[d]) / s))
				} else {
					r[d] = 0
				}
			case opOr32K:
				r[d] = uint64(uint32(r[d]) | uint32(ins.imm))
			case opOr32X:
				r[d] = uint64(uint32(r[d]) | uint32(r[ins.src&15]))
			case opAnd32K:
				r[d] = uint64(uint32(r[d]) & uint32(ins.imm))
			case opAnd32X:
				r[d] = uint64(uint32(r[d]) & uint32(r[ins.src&15]))
			case opLsh32K:
				r[d] = uint64(uint32(r[d]) << ins.imm)
			case opLsh32X:
				r[d] = uint64(uint32(r[d]) << (r[ins.src&15] & 31))
			case opRsh32K:
				r[d] = uint64(uint32(r[d]) >> ins.imm)
			case opRsh32X:
				r[d] = uint64(uint32(r[d]) >> (r[ins.src&15] & 31))
			case opMod32K:
				r[d] = uint64(uint32(r[d]) % uint32(ins.imm))
			case opMod32X:
				if s := uint32(r[ins.src&15]); s != 0 {
					r[d] = uint64(uint32(r[d]) % s)
				} else {
					r[d] = uint64(uint32(r[d]))
				}
			case opSMod32K:
				r[d] = uint64(uint32(int32(r[d]) % int32(ins.imm)))
			case opSMod32X:
				if s := int32(r[ins.src&15]); s != 0 {
					r[d] = uint64(uint32(int32(r[d]) % s))
				} else {
					r[d] = uint64(uint32(r[d]))
				}
			case opXor32K:
				r[d] = uint64(uint32(r[d]) ^ uint32(ins.imm))
			case opXor32X:
				r[d] = uint64(uint32(r[d]) ^ uint32(r[ins.src&15]))
			case opMov32K:
				r[d] = uint64(uint32(ins.imm))
			case opMov32X:
				r[d] = uint64(uint32(r[ins.src&15]))
			case opArsh32K:
				r[d] = uint64(uint32(int32(r[d]) >> ins.imm))
			case opArsh32X:
				r[d] = uint64(uint32(int32(r[d]) >> (r[ins.src&15] & 31)))

			case opNeg64:
				r[d] = -r[d]
			case opNeg32:
				r[d] = uint64(-uint32(r[d]))
			case opMovSX8_64:
				r[d] = uint64(int64(int8(r[ins.src&15])))
			case opMovSX16_64:
				r[d] = uint64(int64(int16(r[ins.src&15])))
			case opMovSX32_64:
				r[d] = uint64(int64(int32(r[ins.src&15])))
			case opMovSX8_32:
				r[d] = uint64(uint32(int32(int8(r[ins.src&15]))))
			case opMovSX16_32:
				r[d] = uint64(uint32(int32(int16(r[ins.src&15]))))
			case opZext16:
				r[d] = uint64(uint16(r[d]))
			case opZext32:
				r[d] = uint64(uint32(r[d]))
			case opNop:
			case opBswap16:
				r[d] = uint64(bits.ReverseBytes16(uint16(r[d])))
			case opBswap32:
				r[d] = uint64(bits.ReverseBytes32(uint32(r[d])))
			case opBswap64:
				r[d] = bits.ReverseBytes64(r[d])

			case opJa:
				break dispatch
			case opJeqK:
				if r[d] == ins.imm {
					break dispatch
				}
			case opJeqX:
				if r[d] == r[ins.src&15] {
					break dispatch
				}
			case opJgtK:
				if r[d] > ins.imm {
					break dispatch
				}
			case opJgtX:
				if r[d] > r[ins.src&15] {
					break dispatch
				}
			case opJgeK:
				if r[d] >= ins.imm {
					break dispatch
				}
			case opJgeX:
				if r[d] >= r[ins.src&15] {
					break dispatch
				}
			case opJsetK:
				if r[d]&ins.imm != 0 {
					break dispatch
				}
			case opJsetX:
				if r[d]&r[ins.src&15] != 0 {
					break dispatch
				}
			case opJneK:
				if r[d] != ins.imm {
					break dispatch
				}
			case opJneX:
				if r[d] != r[ins.src&15] {
					break dispatch
				}
			case opJsgtK:
				if int64(r[d]) > int64(ins.imm) {
					break dispatch
				}
			case opJsgtX:
				if int64(r[d]) > int64(r[ins.src&15]) {
					break dispatch
				}
			case opJsgeK:
				if int64(r[d]) >= int64(ins.imm) {
					break dispatch
				}
			case opJsgeX:
				if int64(r[d]) >= int64(r[ins.src&15]) {
					break dispatch
				}
			case opJltK:
				if r[d] < ins.imm {
					break dispatch
				}
			case opJltX:
				if r[d] < r[ins.src&15] {
					break dispatch
				}
			case opJleK:
				if r[d] <= ins.imm {
					break dispatch
				}
			case opJleX:
				if r[d] <= r[ins.src&15] {
					break dispatch
				}
			case opJsltK:
				if int64(r[d]) < int64(ins.imm) {
					break dispatch
				}
			case opJsltX:
				if int64(r[d]) < int64(r[ins.src&15]) {
					break dispatch
				}
			case opJsleK:
				if int64(r[d]) <= int64(ins.imm) {
					break dispatch
				}
			case opJsleX:
				if int64(r[d]) <= int64(r[ins.src&15]) {
					break dispatch
				}

			case opJeq32K:
				if uint32(r[d]) == uint32(ins.imm) {
					break dispatch
				}
			case opJeq32X:
				if uint32(r[d]) == uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJgt32K:
				if uint32(r[d]) > uint32(ins.imm) {
					break dispatch
				}
			case opJgt32X:
				if uint32(r[d]) > uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJge32K:
				if uint32(r[d]) >= uint32(ins.imm) {
					break dispatch
				}
			case opJge32X:
				if uint32(r[d]) >= uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJset32K:
				if uint32(r[d])&uint32(ins.imm) != 0 {
					break dispatch
				}
			case opJset32X:
				if uint32(r[d])&uint32(r[ins.src&15]) != 0 {
					break dispatch
				}
			case opJne32K:
				if uint32(r[d]) != uint32(ins.imm) {
					break dispatch
				}
			case opJne32X:
				if uint32(r[d]) != uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJsgt32K:
				if int32(r[d]) > int32(ins.imm) {
					break dispatch
				}
			case opJsgt32X:
				if int32(r[d]) > int32(r[ins.src&15]) {
					break dispatch
				}
			case opJsge32K:
				if int32(r[d]) >= int32(ins.imm) {
					break dispatch
				}
			case opJsge32X:
				if int32(r[d]) >= int32(r[ins.src&15]) {
					break dispatch
				}
			case opJlt32K:
				if uint32(r[d]) < uint32(ins.imm) {
					break dispatch
				}
			case opJlt32X:
				if uint32(r[d]) < uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJle32K:
				if uint32(r[d]) <= uint32(ins.imm) {
					break dispatch
				}
			case opJle32X:
				if uint32(r[d]) <= uint32(r[ins.src&15]) {
					break dispatch
				}
			case opJslt32K:
				if int32(r[d]) < int32(ins.imm) {
					break dispatch
				}
			case opJslt32X:
				if int32(r[d]) < int32(r[ins.src&15]) {
					break dispatch
				}
			case opJsle32K:
				if int32(r[d]) <= int32(ins.imm) {
					break dispatch
				}
			case opJsle32X:
				if int32(r[d]) <= int32(r[ins.src&15]) {
					break dispatch
				}

			case opLdImm:
				r[d] = ins.imm
				pc++ // skip the second slot
			case opLdxB:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 1, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(*(*uint8)(ptr))
			case opLdxH:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 2, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(*(*uint16)(ptr))
			case opLdxW:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 4, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(*(*uint32)(ptr))
			case opLdxDW:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 8, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = *(*uint64)(ptr)
			case opLdxSB:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 1, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(int64(*(*int8)(ptr)))
			case opLdxSH:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 2, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(int64(*(*int16)(ptr)))
			case opLdxSW:
				a := r[ins.src&15] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 4, false)
				if ptr == nil {
					// As for outOfLine, nothing stays live across the call,
					// not even ins (loadOutOfLine finds it at m.pc).
					m.pc, m.steps = pc-1, n
					if f := m.loadOutOfLine(&r); f != nil {
						return 0, f
					}
					pc, n = m.pc+1, m.steps
					continue
				}
				r[d] = uint64(int64(*(*int32)(ptr)))
			case opStB:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 1, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 1, true, "store")
				}
				*(*uint8)(ptr) = uint8(ins.imm)
			case opStxB:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 1, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 1, true, "store")
				}
				*(*uint8)(ptr) = uint8(r[ins.src&15])
			case opStH:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 2, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 2, true, "store")
				}
				*(*uint16)(ptr) = uint16(ins.imm)
			case opStxH:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 2, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 2, true, "store")
				}
				*(*uint16)(ptr) = uint16(r[ins.src&15])
			case opStW:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 4, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 4, true, "store")
				}
				*(*uint32)(ptr) = uint32(ins.imm)
			case opStxW:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 4, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 4, true, "store")
				}
				*(*uint32)(ptr) = uint32(r[ins.src&15])
			case opStDW:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 8, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 8, true, "store")
				}
				*(*uint64)(ptr) = ins.imm
			case opStxDW:
				a := r[d] + uint64(int64(ins.off))
				ptr := m.hostPtr(a, 8, true)
				if ptr == nil {
					return 0, m.accessFault(n, pc-1, a, 8, true, "store")
				}
				*(*uint64)(ptr) = r[ins.src&15]

			case opAtomAddW, opAtomOrW, opAtomAndW, opAtomXorW, opAtomFetchAddW, opAtomFetchOrW,
				opAtomFetchAndW, opAtomFetchXorW, opAtomXchgW, opAtomCmpXchgW,
				opAtomAddDW, opAtomOrDW, opAtomAndDW, opAtomXorDW, opAtomFetchAddDW, opAtomFetchOrDW,
				opAtomFetchAndDW, opAtomFetchXorDW, opAtomXchgDW, opAtomCmpXchgDW,
				opCall, opCallX:
				// Calls out of the loop: pc and n go through m so that they are
				// not live across the call, which would make the compiler spill
				// them on every instruction.
				m.pc, m.steps = pc-1, n
				if f := m.outOfLine(ins, &r); f != nil {
					return 0, f // m.steps is set
				}
				pc, n = m.pc+1, m.steps
			case opCallLocal:
				if m.depth == MaxCallDepth-1 {
					return 0, m.fault(n, FaultCallDepth, pc-1)
				}
				fr := &m.frames[m.depth&(MaxCallDepth-1)]
				fr.ret = pc
				fr.regs = [5]uint64{r[6], r[7], r[8], r[9], r[10]}
				m.depth++
				r[10] -= StackSize
				break dispatch
			case opExit:
				if n > budget {
					return 0, m.fault(n, FaultBudget, pc-1)
				}
				if m.depth == 0 {
					m.steps, m.exit = n, pc-1
					return r[0], nil
				}
				m.depth--
				fr := &m.frames[m.depth&(MaxCallDepth-1)]
				r[6], r[7], r[8], r[9], r[10] = fr.regs[0], fr.regs[1], fr.regs[2], fr.regs[3], fr.regs[4]
				pc = fr.ret
			case opInvalid: // the second slot of lddw; Load never lets control reach it
				return 0, m.internalFault(n, pc-1, opInvalid)
			case opFellOff:
				return 0, m.fault(n, FaultFellOff, pc-1)
			default:
				return 0, m.internalFault(n, pc-1, ins.op)
			}
		}
		// A taken jump or local call; pc-1 is its slot.
		if n > budget {
			return 0, m.fault(n, FaultBudget, pc-1)
		}
		pc = int(ins.off)
	}
}

// loadOutOfLine finishes the load at slot m.pc of the running program
// (m.prog) that hostPtr refused: from a remote segment (remote.go), or
// with the fault that explains the refusal. m.steps is the instructions
// executed.
//
//go:noinline
func (m *Machine) loadOutOfLine(r *[16]uint64) *Fault {
	ins := &m.prog.code[m.pc]
	a := r[ins.src&15] + uint64(int64(ins.off))
	var size uint64
	switch ins.op {
	case opLdxB, opLdxSB:
		size = 1
	case opLdxH, opLdxSH:
		size = 2
	case opLdxW, opLdxSW:
		size = 4
	default:
		size = 8
	}
	ptr := m.remoteLoad(a, size)
	if ptr == nil {
		return m.accessFault(m.steps, m.pc, a, size, false, "load")
	}
	d := ins.dst & 15
	switch ins.op {
	case opLdxB:
		r[d] = uint64(*(*uint8)(ptr))
	case opLdxH:
		r[d] = uint64(*(*uint16)(ptr))
	case opLdxW:
		r[d] = uint64(*(*uint32)(ptr))
	case opLdxDW:
		r[d] = *(*uint64)(ptr)
	case opLdxSB:
		r[d] = uint64(int64(*(*int8)(ptr)))
	case opLdxSH:
		r[d] = uint64(int64(*(*int16)(ptr)))
	case opLdxSW:
		r[d] = uint64(int64(*(*int32)(ptr)))
	}
	return nil
}

// outOfLine runs the instructions that call functions: atomics and helper
// calls. m.pc is the instruction's slot.
func (m *Machine) outOfLine(ins *insn, r *[16]uint64) *Fault {
	switch ins.op {
	case opCall, opCallX:
		id := uint32(ins.imm)
		if ins.op == opCallX {
			id = uint32(r[ins.dst&15])
		}
		if m.opts.Helpers == nil {
			return &Fault{Kind: FaultHelper, PC: m.pc, Err: errNoHelpers(id)}
		}
		v, err := m.opts.Helpers.Call(m, id, r[1], r[2], r[3], r[4], r[5])
		if err != nil {
			if f, ok := err.(*Fault); ok {
				return f
			}
			return &Fault{Kind: FaultHelper, PC: m.pc, Err: err}
		}
		r[0] = v
	case opAtomAddDW, opAtomOrDW, opAtomAndDW, opAtomXorDW, opAtomFetchAddDW, opAtomFetchOrDW,
		opAtomFetchAndDW, opAtomFetchXorDW, opAtomXchgDW, opAtomCmpXchgDW:
		if rs := m.remoteAt(r[ins.dst&15] + uint64(int64(ins.off))); rs != nil {
			return m.remoteAtomic(rs, ins.op, r[ins.dst&15]+uint64(int64(ins.off)), r, ins.src&15)
		}
		ptr, f := m.atomicPtr(m.pc, r[ins.dst&15]+uint64(int64(ins.off)), 8)
		if f != nil {
			return f
		}
		atomic64(ins.op, (*uint64)(ptr), r, ins.src&15)
	case opAtomAddW, opAtomOrW, opAtomAndW, opAtomXorW, opAtomFetchAddW, opAtomFetchOrW,
		opAtomFetchAndW, opAtomFetchXorW, opAtomXchgW, opAtomCmpXchgW:
		ptr, f := m.atomicPtr(m.pc, r[ins.dst&15]+uint64(int64(ins.off)), 4)
		if f != nil {
			return f
		}
		atomic32(ins.op, (*uint32)(ptr), r, ins.src&15)
	default:
		return &Fault{Kind: FaultInternal, PC: m.pc, Err: errBadOp(ins.op)}
	}
	return nil
}

// fault ends a run that executed n instructions with a fault at slot pc.
//
// The budget is checked where control can loop (taken jumps, local calls)
// and at exit, so a run succeeds exactly when it executes at most the
// budget; a run that exceeds it stops at the next such instruction, whose
// slot (the jump, call or exit, not its target) is the fault's PC.
//
//go:noinline
func (m *Machine) fault(n uint64, kind FaultKind, pc int) error {
	m.steps = n
	return &Fault{Kind: kind, PC: pc}
}

// internalFault ends a run at an interpreter op the loop does not know,
// which Load never produces.
//
//go:noinline
func (m *Machine) internalFault(n uint64, pc int, op opcode) error {
	m.steps = n
	return &Fault{Kind: FaultInternal, PC: pc, Err: errBadOp(op)}
}

func atomic32(op opcode, p *uint32, r *[16]uint64, src uint8) {
	v := uint32(r[src])
	switch op {
	case opAtomAddW:
		atomic.AddUint32(p, v)
	case opAtomOrW:
		atomic.OrUint32(p, v)
	case opAtomAndW:
		atomic.AndUint32(p, v)
	case opAtomXorW:
		xor32(p, v)
	case opAtomFetchAddW:
		r[src] = uint64(atomic.AddUint32(p, v) - v)
	case opAtomFetchOrW:
		r[src] = uint64(atomic.OrUint32(p, v))
	case opAtomFetchAndW:
		r[src] = uint64(atomic.AndUint32(p, v))
	case opAtomFetchXorW:
		r[src] = uint64(xor32(p, v))
	case opAtomXchgW:
		r[src] = uint64(atomic.SwapUint32(p, v))
	case opAtomCmpXchgW:
		want := uint32(r[0])
		for {
			old := atomic.LoadUint32(p)
			if old != want || atomic.CompareAndSwapUint32(p, old, v) {
				r[0] = uint64(old)
				return
			}
		}
	}
}

func atomic64(op opcode, p *uint64, r *[16]uint64, src uint8) {
	v := r[src]
	switch op {
	case opAtomAddDW:
		atomic.AddUint64(p, v)
	case opAtomOrDW:
		atomic.OrUint64(p, v)
	case opAtomAndDW:
		atomic.AndUint64(p, v)
	case opAtomXorDW:
		xor64(p, v)
	case opAtomFetchAddDW:
		r[src] = atomic.AddUint64(p, v) - v
	case opAtomFetchOrDW:
		r[src] = atomic.OrUint64(p, v)
	case opAtomFetchAndDW:
		r[src] = atomic.AndUint64(p, v)
	case opAtomFetchXorDW:
		r[src] = xor64(p, v)
	case opAtomXchgDW:
		r[src] = atomic.SwapUint64(p, v)
	case opAtomCmpXchgDW:
		want := r[0]
		for {
			old := atomic.LoadUint64(p)
			if old != want || atomic.CompareAndSwapUint64(p, old, v) {
				r[0] = old
				return
			}
		}
	}
}

// xor32 and xor64 are atomic xor, which sync/atomic lacks; they return the old value.
func xor32(p *uint32, v uint32) uint32 {
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, old^v) {
			return old
		}
	}
}

func xor64(p *uint64, v uint64) uint64 {
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, old^v) {
			return old
		}
	}
}
