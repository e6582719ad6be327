package xdp

import (
	"math"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// The handler program: what the dispatcher tail-calls once it has
// authenticated a request and claimed its id (spec/xdp.md, Programs). It
// builds the handler's context, runs the body, turns r0 into a reply or
// an error reply as the user-space node does (spec/abi.md, Return value;
// spec/nic.md, Messages and replies), seals, caches and sends it.
//
// Registers the body may rely on: r6 the XDP context, r7 the scratch;
// both are kept for the template. The body leaves its result in r0.

// ctxSlot is where the handler context lives on the program's stack.
const ctxSlot = -bytecode.CtxSize

// programBody emits the part of a handler program between the context and
// the reply.
type programBody func(e *emitter)

// handlerProgram returns the instructions of the program of handler id
// (a verb's id for a verb program). verb selects
// how r0 is read: a verb's negative values at or below -2^31 are runtime
// statuses (spec/nic.md), a handler's are faults. subprograms are emitted
// after the reply path.
func handlerProgram(l layout, node, id uint32, replySize int, verb bool, body programBody, subprograms func(e *emitter)) (asm.Instructions, error) {
	e := newEmitter("h")
	drop, neg, fault, finish, gone := e.fresh("drop"), e.fresh("neg"), e.fresh("fault"), e.fresh("finish"), e.fresh("gone")
	req := int32(scrReq + wire.HeaderSize)
	rep := int32(l.scrRep + wire.HeaderSize)
	e.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Imm(asm.R1, 0),
	)
	e.lookup(mapScratch, asm.R1, ctxSlot-8, drop)
	e.add(
		asm.Mov.Reg(asm.R7, asm.R0),
		// The request must be for this program's handler: a program slot
		// freed by an uninstall and taken by another handler between the
		// dispatcher's lookup and its tail call must not run it.
		asm.LoadMem(asm.R1, asm.R7, metaHandler, asm.Word),
		asm.JNE.Imm32(asm.R1, u32imm(id), gone),
		asm.LoadMem(asm.R1, asm.R7, metaPlen, asm.Word),
		asm.JGT.Imm(asm.R1, int32(l.maxPayload), drop),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, req),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxData, asm.R2, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxDataEnd, asm.R2, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, rep),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxReply, asm.R2, asm.DWord),
		asm.Add.Imm(asm.R2, int32(replySize)),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxReplyEnd, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, metaSrc, asm.Word),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxSrcNode, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, metaTenant, asm.Word),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxTenant, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, metaID, asm.DWord),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxRequestID, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, metaHandler, asm.Word),
		asm.StoreMem(asm.R10, ctxSlot+bytecode.CtxHandler, asm.R2, asm.DWord),
	)
	// The reply buffer starts zeroed, as vm.Machine.Invoke leaves it.
	for off := 0; off < replySize; off += 8 {
		e.add(storeImm64(asm.R7, int16(int(rep)+off), 0))
	}
	e.count(ctrRuns, asm.R1)
	body(e)
	// r0 → r2 = n, r3 = type, r4 = status
	e.add(
		asm.JSLT.Imm(asm.R0, 0, neg),
		asm.JGT.Imm(asm.R0, int32(replySize), fault),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Mov.Imm(asm.R3, int32(wire.TypeReply)),
		asm.Mov.Imm(asm.R4, 0),
		asm.Ja.Label(finish),
	)
	e.label(neg)
	e.add(
		asm.LoadImm(asm.R1, math.MinInt64, asm.DWord),
		asm.JEq.Reg(asm.R0, asm.R1, fault),
	)
	if verb {
		// -(2^31 + status): a runtime status; nothing else is negative.
		e.add(asm.JSGT.Imm(asm.R0, -bytecode.MaxErrorCode-1, fault))
	} else {
		e.add(asm.JSLT.Imm(asm.R0, -bytecode.MaxErrorCode, fault))
	}
	e.add(
		asm.Mov.Imm(asm.R4, 0),
		asm.Sub.Reg(asm.R4, asm.R0),
		asm.Mov.Reg32(asm.R4, asm.R4),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Imm(asm.R3, int32(wire.TypeErrorReply)),
		asm.Ja.Label(finish),
	)
	e.label(fault)
	e.count(ctrFaults, asm.R1)
	e.add(
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Imm(asm.R3, int32(wire.TypeErrorReply)),
		asm.Mov.Imm32(asm.R4, u32imm(uint32(wire.StatusRuntime)+statusFault)),
	)
	e.label(finish)
	e.add(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R5, asm.R7),
		asm.Call.Label(fnFinish),
		asm.Return(),
	)
	e.label(gone)
	e.unknownHandler()
	e.label(drop)
	e.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
	emitReplyPath(e, l, node)
	emitSipHash(e)
	if subprograms != nil {
		subprograms(e)
	}
	return e.finish()
}

// callHandler is the body of a translated handler: r1 = the context.
func callHandler(tr *translation) programBody {
	return func(e *emitter) {
		e.add(
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Add.Imm(asm.R1, ctxSlot),
			asm.Call.Label(tr.entry),
		)
	}
}

// handlerSubprograms appends the translated code and the subprograms its
// helpers need.
func handlerSubprograms(tr *translation) func(e *emitter) {
	return func(e *emitter) {
		e.add(tr.insns...)
		if tr.helpers[bytecode.HelperHash] {
			emitHash(e)
		}
		if tr.helpers[bytecode.HelperCopy] {
			emitCopy(e)
		}
		if tr.helpers[bytecode.HelperRandom] {
			emitRandom(e)
		}
	}
}
