package xdp

import (
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/nicrt/wire"
)

// fnSipHash is the subprogram that computes a packet's tag: SipHash-2-4
// with 128-bit output (spec/wire.md, Authentication), as nicrt/wire's
// Go code does, over the 40 bytes of header fields and the payload:
//
//	r1 key: 16 bytes, k0 and k1 little-endian
//	r2 the header's first 40 bytes (5 words)
//	r3 the payload; r4 its length n, which the caller bounds; the 8 bytes
//	   after the payload's end must be readable (the last word is read
//	   whole and masked)
//	r5 where the 16-byte tag goes
//
// It returns nothing (r0 is clobbered). The message words are read with
// 8-byte loads from the given pointers, so the kernel checks each against
// the memory they point to.
const fnSipHash = "naam_siphash"

// SipHash registers: the state in r6–r9 (callee-saved, so the loops keep
// it across nothing but their own instructions), the word in r1, r0 as the
// rotation's scratch.
const (
	sv0, sv1, sv2, sv3 = asm.R6, asm.R7, asm.R8, asm.R9
	sipM               = asm.R1
	sipTmp             = asm.R0
)

// sipRound emits one SipRound (26 instructions).
func sipRound(e *emitter) {
	e.add(asm.Add.Reg(sv0, sv1))
	e.rotl(sv1, sipTmp, 13)
	e.add(asm.Xor.Reg(sv1, sv0))
	e.rotl(sv0, sipTmp, 32)
	e.add(asm.Add.Reg(sv2, sv3))
	e.rotl(sv3, sipTmp, 16)
	e.add(asm.Xor.Reg(sv3, sv2), asm.Add.Reg(sv0, sv3))
	e.rotl(sv3, sipTmp, 21)
	e.add(asm.Xor.Reg(sv3, sv0), asm.Add.Reg(sv2, sv1))
	e.rotl(sv1, sipTmp, 17)
	e.add(asm.Xor.Reg(sv1, sv2))
	e.rotl(sv2, sipTmp, 32)
}

// sipCompress emits the compression of the word in sipM: two rounds.
func sipCompress(e *emitter) {
	e.add(asm.Xor.Reg(sv3, sipM))
	sipRound(e)
	sipRound(e)
	e.add(asm.Xor.Reg(sv0, sipM))
}

// emitSipHash appends fnSipHash.
func emitSipHash(e *emitter) {
	const outSlot, nSlot = -8, -16
	loop, tail, final := e.fresh("sip_loop"), e.fresh("sip_tail"), e.fresh("sip_final")
	e.label(fnSipHash)
	e.add(
		asm.StoreMem(asm.R10, outSlot, asm.R5, asm.DWord),
		asm.StoreMem(asm.R10, nSlot, asm.R4, asm.DWord),
		asm.LoadMem(sv0, asm.R1, 0, asm.DWord), // k0
		asm.LoadMem(sv1, asm.R1, 8, asm.DWord), // k1
		asm.Mov.Reg(sv2, sv0),
		asm.Mov.Reg(sv3, sv1),
		asm.LoadImm(sipTmp, 0x736f6d6570736575, asm.DWord),
		asm.Xor.Reg(sv0, sipTmp),
		asm.LoadImm(sipTmp, 0x646f72616e646f6d^0xee, asm.DWord),
		asm.Xor.Reg(sv1, sipTmp),
		asm.LoadImm(sipTmp, 0x6c7967656e657261, asm.DWord),
		asm.Xor.Reg(sv2, sipTmp),
		asm.LoadImm(sipTmp, 0x7465646279746573, asm.DWord),
		asm.Xor.Reg(sv3, sipTmp),
	)
	for w := range int16(5) {
		e.add(asm.LoadMem(sipM, asm.R2, 8*w, asm.DWord))
		sipCompress(e)
	}
	// r2 = payload, r3 = n, r4 = offset of the next word.
	e.add(
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.LoadMem(asm.R3, asm.R10, nSlot, asm.DWord),
		asm.Mov.Imm(asm.R4, 0),
	)
	e.label(loop)
	e.add(
		asm.Mov.Reg(sipM, asm.R4),
		asm.Add.Imm(sipM, 8),
		asm.JGT.Reg(sipM, asm.R3, tail),
		asm.Mov.Reg(sipM, asm.R2),
		asm.Add.Reg(sipM, asm.R4),
		asm.LoadMem(sipM, sipM, 0, asm.DWord),
	)
	sipCompress(e)
	e.add(
		asm.Add.Imm(asm.R4, 8),
		asm.Ja.Label(loop),
	)
	// The last 0–7 bytes, the rest of the word masked off, and the
	// message's length mod 256 (40 + n) in the top byte.
	e.label(tail)
	e.add(
		asm.Mov.Reg(sipM, asm.R2),
		asm.Add.Reg(sipM, asm.R4),
		asm.LoadMem(sipM, sipM, 0, asm.DWord),
		asm.Mov.Reg(asm.R5, asm.R3),
		asm.And.Imm(asm.R5, 7),
		asm.LSh.Imm(asm.R5, 3),
		asm.Mov.Imm(sipTmp, 1),
		asm.LSh.Reg(sipTmp, asm.R5),
		asm.Sub.Imm(sipTmp, 1),
		asm.And.Reg(sipM, sipTmp),
		asm.Mov.Reg(asm.R5, asm.R3),
		asm.Add.Imm(asm.R5, 40),
		asm.LSh.Imm(asm.R5, 56),
		asm.Or.Reg(sipM, asm.R5),
	)
	sipCompress(e)
	// A jump target, so that the kernel's verifier can prune the
	// finalisation when it reaches it from another loop exit.
	e.add(asm.Ja.Label(final))
	e.label(final)
	// The two words of the tag: v2 ^= 0xee, 4 rounds, the first; v1 ^=
	// 0xdd, 4 rounds, the second.
	for half, v := range []struct {
		reg asm.Register
		xor int32
	}{{sv2, 0xee}, {sv1, 0xdd}} {
		e.add(asm.Xor.Imm(v.reg, v.xor))
		for range 4 {
			sipRound(e)
		}
		e.add(
			asm.LoadMem(asm.R5, asm.R10, outSlot, asm.DWord),
			asm.Mov.Reg(sipM, sv0),
			asm.Xor.Reg(sipM, sv1),
			asm.Xor.Reg(sipM, sv2),
			asm.Xor.Reg(sipM, sv3),
			asm.StoreMem(asm.R5, int16(8*half), sipM, asm.DWord),
		)
	}
	e.add(
		asm.Return(),
	)
}

// callSipHash emits the call of fnSipHash over a datagram in the scratch
// (r7): the header at hdr, the payload right after it, n bytes of it in
// reg n, the tag to out.
func (e *emitter) callSipHash(hdr int32, n asm.Register, out int32) {
	e.add(
		asm.Mov.Reg(asm.R4, n),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, metaKey),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, hdr),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, hdr+wire.HeaderSize),
		asm.Mov.Reg(asm.R5, asm.R7),
		asm.Add.Imm(asm.R5, out),
		asm.Call.Label(fnSipHash),
	)
}
