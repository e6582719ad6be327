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

// accessFault explains why hostPtr refused an access.
func (m *Machine) accessFault(pc int, addr, size uint64, write bool, op string) *Fault {
	kind := FaultOutOfBounds
	if idx := addr >> 32; idx < numSegments && write {
		s := &m.segs[idx]
		if off := addr & 0xffffffff; off+size <= s.size && !s.writable {
			kind = FaultReadOnly
		}
	}
	return m.memFault(kind, pc, addr, int(size), op)
}

// atomicPtr is hostPtr for atomics, which also need natural alignment.
func (m *Machine) atomicPtr(pc int, addr, size uint64) (unsafe.Pointer, *Fault) {
	p := m.hostPtr(addr, size, true)
	if p == nil {
		return nil, m.accessFault(pc, addr, size, true, "atomic")
	}
	if !m.opts.Unchecked && uintptr(p)&uintptr(size-1) != 0 {
		return nil, m.memFault(FaultMisaligned, pc, addr, int(size), "atomic")
	}
	return p, nil
}

// run is the interpreter loop. It returns r0, the number of instructions
// executed and the fault, if any.
func (m *Machine) run(p *Program, pc int, regs *[11]uint64) (uint64, uint64, error) {
	var r [16]uint64
	copy(r[:], regs[:])
	code := p.code
	budget := m.budget
	var n uint64
	depth := 0
	for {
		ins := &code[pc]
		pc++
		n++
		if n > budget {
			return 0, n, &Fault{Kind: FaultBudget, PC: pc - 1}
		}
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
			pc = int(ins.off)
		case opJeqK:
			if r[d] == ins.imm {
				pc = int(ins.off)
			}
		case opJeqX:
			if r[d] == r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJgtK:
			if r[d] > ins.imm {
				pc = int(ins.off)
			}
		case opJgtX:
			if r[d] > r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJgeK:
			if r[d] >= ins.imm {
				pc = int(ins.off)
			}
		case opJgeX:
			if r[d] >= r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJsetK:
			if r[d]&ins.imm != 0 {
				pc = int(ins.off)
			}
		case opJsetX:
			if r[d]&r[ins.src&15] != 0 {
				pc = int(ins.off)
			}
		case opJneK:
			if r[d] != ins.imm {
				pc = int(ins.off)
			}
		case opJneX:
			if r[d] != r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJsgtK:
			if int64(r[d]) > int64(ins.imm) {
				pc = int(ins.off)
			}
		case opJsgtX:
			if int64(r[d]) > int64(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJsgeK:
			if int64(r[d]) >= int64(ins.imm) {
				pc = int(ins.off)
			}
		case opJsgeX:
			if int64(r[d]) >= int64(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJltK:
			if r[d] < ins.imm {
				pc = int(ins.off)
			}
		case opJltX:
			if r[d] < r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJleK:
			if r[d] <= ins.imm {
				pc = int(ins.off)
			}
		case opJleX:
			if r[d] <= r[ins.src&15] {
				pc = int(ins.off)
			}
		case opJsltK:
			if int64(r[d]) < int64(ins.imm) {
				pc = int(ins.off)
			}
		case opJsltX:
			if int64(r[d]) < int64(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJsleK:
			if int64(r[d]) <= int64(ins.imm) {
				pc = int(ins.off)
			}
		case opJsleX:
			if int64(r[d]) <= int64(r[ins.src&15]) {
				pc = int(ins.off)
			}

		case opJeq32K:
			if uint32(r[d]) == uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJeq32X:
			if uint32(r[d]) == uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJgt32K:
			if uint32(r[d]) > uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJgt32X:
			if uint32(r[d]) > uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJge32K:
			if uint32(r[d]) >= uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJge32X:
			if uint32(r[d]) >= uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJset32K:
			if uint32(r[d])&uint32(ins.imm) != 0 {
				pc = int(ins.off)
			}
		case opJset32X:
			if uint32(r[d])&uint32(r[ins.src&15]) != 0 {
				pc = int(ins.off)
			}
		case opJne32K:
			if uint32(r[d]) != uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJne32X:
			if uint32(r[d]) != uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJsgt32K:
			if int32(r[d]) > int32(ins.imm) {
				pc = int(ins.off)
			}
		case opJsgt32X:
			if int32(r[d]) > int32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJsge32K:
			if int32(r[d]) >= int32(ins.imm) {
				pc = int(ins.off)
			}
		case opJsge32X:
			if int32(r[d]) >= int32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJlt32K:
			if uint32(r[d]) < uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJlt32X:
			if uint32(r[d]) < uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJle32K:
			if uint32(r[d]) <= uint32(ins.imm) {
				pc = int(ins.off)
			}
		case opJle32X:
			if uint32(r[d]) <= uint32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJslt32K:
			if int32(r[d]) < int32(ins.imm) {
				pc = int(ins.off)
			}
		case opJslt32X:
			if int32(r[d]) < int32(r[ins.src&15]) {
				pc = int(ins.off)
			}
		case opJsle32K:
			if int32(r[d]) <= int32(ins.imm) {
				pc = int(ins.off)
			}
		case opJsle32X:
			if int32(r[d]) <= int32(r[ins.src&15]) {
				pc = int(ins.off)
			}

		case opLdImm:
			r[d] = ins.imm
			pc++ // skip the second slot
		case opLdxB:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 1, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 1, false, "load")
			}
			r[d] = uint64(*(*uint8)(ptr))
		case opLdxH:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 2, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 2, false, "load")
			}
			r[d] = uint64(*(*uint16)(ptr))
		case opLdxW:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 4, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 4, false, "load")
			}
			r[d] = uint64(*(*uint32)(ptr))
		case opLdxDW:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 8, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 8, false, "load")
			}
			r[d] = *(*uint64)(ptr)
		case opLdxSB:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 1, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 1, false, "load")
			}
			r[d] = uint64(int64(*(*int8)(ptr)))
		case opLdxSH:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 2, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 2, false, "load")
			}
			r[d] = uint64(int64(*(*int16)(ptr)))
		case opLdxSW:
			a := r[ins.src&15] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 4, false)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 4, false, "load")
			}
			r[d] = uint64(int64(*(*int32)(ptr)))
		case opStB, opStxB:
			a := r[d] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 1, true)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 1, true, "store")
			}
			v := ins.imm
			if ins.op == opStxB {
				v = r[ins.src&15]
			}
			*(*uint8)(ptr) = uint8(v)
		case opStH, opStxH:
			a := r[d] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 2, true)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 2, true, "store")
			}
			v := ins.imm
			if ins.op == opStxH {
				v = r[ins.src&15]
			}
			*(*uint16)(ptr) = uint16(v)
		case opStW, opStxW:
			a := r[d] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 4, true)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 4, true, "store")
			}
			v := ins.imm
			if ins.op == opStxW {
				v = r[ins.src&15]
			}
			*(*uint32)(ptr) = uint32(v)
		case opStDW, opStxDW:
			a := r[d] + uint64(int64(ins.off))
			ptr := m.hostPtr(a, 8, true)
			if ptr == nil {
				return 0, n, m.accessFault(pc-1, a, 8, true, "store")
			}
			v := ins.imm
			if ins.op == opStxDW {
				v = r[ins.src&15]
			}
			*(*uint64)(ptr) = v

		case opAtomAddW, opAtomOrW, opAtomAndW, opAtomXorW, opAtomFetchAddW, opAtomFetchOrW,
			opAtomFetchAndW, opAtomFetchXorW, opAtomXchgW, opAtomCmpXchgW:
			a := r[d] + uint64(int64(ins.off))
			ptr, f := m.atomicPtr(pc-1, a, 4)
			if f != nil {
				return 0, n, f
			}
			atomic32(ins.op, (*uint32)(ptr), &r, ins.src&15)
		case opAtomAddDW, opAtomOrDW, opAtomAndDW, opAtomXorDW, opAtomFetchAddDW, opAtomFetchOrDW,
			opAtomFetchAndDW, opAtomFetchXorDW, opAtomXchgDW, opAtomCmpXchgDW:
			a := r[d] + uint64(int64(ins.off))
			ptr, f := m.atomicPtr(pc-1, a, 8)
			if f != nil {
				return 0, n, f
			}
			atomic64(ins.op, (*uint64)(ptr), &r, ins.src&15)

		case opCall, opCallX:
			id := uint32(ins.imm)
			if ins.op == opCallX {
				id = uint32(r[d])
			}
			if m.opts.Helpers == nil {
				return 0, n, &Fault{Kind: FaultHelper, PC: pc - 1, Err: errNoHelpers(id)}
			}
			m.pc = pc - 1
			v, err := m.opts.Helpers.Call(m, id, r[1], r[2], r[3], r[4], r[5])
			if err != nil {
				if f, ok := err.(*Fault); ok {
					return 0, n, f
				}
				return 0, n, &Fault{Kind: FaultHelper, PC: pc - 1, Err: err}
			}
			r[0] = v
		case opCallLocal:
			if depth == MaxCallDepth-1 {
				return 0, n, &Fault{Kind: FaultCallDepth, PC: pc - 1}
			}
			fr := &m.frames[depth]
			fr.ret = pc
			copy(fr.regs[:], r[6:11])
			depth++
			r[10] -= StackSize
			pc = int(ins.off)
		case opExit:
			if depth == 0 {
				return r[0], n, nil
			}
			depth--
			fr := &m.frames[depth]
			copy(r[6:11], fr.regs[:])
			pc = fr.ret
		case opFellOff:
			return 0, n, &Fault{Kind: FaultFellOff, PC: pc - 1}
		default:
			return 0, n, &Fault{Kind: FaultInternal, PC: pc - 1, Err: errBadOp(ins.op)}
		}
	}
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
