package xdp

import (
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/nicrt/wire"
)

// The reply path, shared by the dispatcher (cached replies, a handler
// gone missing) and the handler programs.
const (
	// fnFinish seals the reply in the scratch and sends it:
	//	r1 the XDP context, r2 payload bytes n (bounded by the caller),
	//	r3 the packet type, r4 the status, r5 the scratch.
	// The header comes from the scratch's meta; the tag from fnSipHash;
	// the datagram is cached in the request's slot and sent with fnTx.
	// It returns the XDP action and counts the reply.
	fnFinish = "naam_finish"
	// fnTx turns the frame into the reply: r1 the XDP context, r2 the
	// sealed datagram (header and payload), r3 its length (56 or more,
	// bounded). It sizes the frame (bpf_xdp_adjust_tail), writes the
	// datagram after the UDP header, swaps the Ethernet, IP and UDP
	// addresses, sets the lengths, the TTL and both checksums, and
	// returns XDP_TX (or XDP_DROP when the frame cannot be resized).
	fnTx = "naam_tx"
	// fnCsum returns in r0 the 64-bit sum of the little-endian 32-bit
	// words of r2 bytes at r1, zero-padded (RFC 1071 sums are byte-order
	// independent: fold and store it little-endian). The 8 bytes after the
	// end must be readable.
	fnCsum = "naam_csum"
)

// XDP actions.
const (
	xdpAborted = 0
	xdpDrop    = 1
	xdpPass    = 2
	xdpTx      = 3
)

// count emits scratch.counters[c]++ with r7 holding the scratch and tmp
// as scratch register.
func (e *emitter) count(c counter, tmp asm.Register) {
	off := int16(scrCounters + 8*int(c))
	e.add(
		asm.LoadMem(tmp, asm.R7, off, asm.DWord),
		asm.Add.Imm(tmp, 1),
		asm.StoreMem(asm.R7, off, tmp, asm.DWord),
	)
}

// fold emits r = the 16-bit one's complement sum of the 64-bit sum in r.
func (e *emitter) fold(r, tmp asm.Register) {
	for range 2 {
		e.add(asm.Mov.Reg(tmp, r), asm.RSh.Imm(tmp, 32), asm.Mov.Reg32(r, r), asm.Add.Reg(r, tmp))
	}
	for range 2 {
		e.add(asm.Mov.Reg(tmp, r), asm.RSh.Imm(tmp, 16), asm.And.Imm(r, 0xffff), asm.Add.Reg(r, tmp))
	}
}

// unknownHandler emits the answer to a claimed request whose handler is
// no longer here, as the node answers an id it does not know: an error
// reply with the runtime status unknown handler, sealed, cached and sent.
// r6 holds the XDP context, r7 the scratch.
func (e *emitter) unknownHandler() {
	e.count(ctrUnknownHandler, asm.R1)
	e.add(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Imm(asm.R3, int32(wire.TypeErrorReply)),
		asm.Mov.Imm32(asm.R4, u32imm(uint32(wire.StatusRuntime)+statusUnknownHandler)),
		asm.Mov.Reg(asm.R5, asm.R7),
		asm.Call.Label(fnFinish),
		asm.Return(),
	)
}

// ipSum emits r0 = the folded one's complement sum of the IPv4 header of
// the frame at base (0xffff when its checksum is right).
func (e *emitter) ipSum(base, tmp asm.Register) {
	e.add(asm.Mov.Imm(asm.R0, 0))
	for w := int16(0); w < ipLen; w += 4 {
		e.add(asm.LoadMem(tmp, base, offIP+w, asm.Word), asm.Add.Reg(asm.R0, tmp))
	}
	e.fold(asm.R0, tmp)
}

// emitReplyPath appends fnFinish, fnTx and fnCsum (fnSipHash separately).
func emitReplyPath(e *emitter, l layout, node uint32) {
	emitFinish(e, l, node)
	emitTx(e)
	emitCsum(e)
}

func emitFinish(e *emitter, l layout, node uint32) {
	const nSlot, typeSlot, actSlot = -8, -16, -24
	rep := int16(l.scrRep)
	noCache, replyCtr, sent, errReply := e.fresh("fin_nocache"), e.fresh("fin_count"), e.fresh("fin_sent"), e.fresh("fin_err")
	tx, txFailed := e.fresh("fin_tx"), e.fresh("fin_txfail")
	e.label(fnFinish)
	e.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Reg(asm.R7, asm.R5),
		asm.Mov.Reg(asm.R8, asm.R2),
		asm.StoreMem(asm.R10, nSlot, asm.R2, asm.DWord),
		asm.StoreMem(asm.R10, typeSlot, asm.R3, asm.DWord),
		// magic, version, type
		asm.Mov.Reg(asm.R1, asm.R3),
		asm.LSh.Imm(asm.R1, 24),
		asm.Or.Imm(asm.R1, wire.Magic|wire.Version<<16),
		asm.StoreMem(asm.R7, rep+0, asm.R1, asm.Word),
		// flags, credits
		mapValue(asm.R1, mapConfig, cfgCredits),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.Word),
		asm.And.Imm(asm.R1, 0xffff),
		asm.LSh.Imm(asm.R1, 16),
		// the request's retransmit flag, as the node's reply carries it
		// (spec/wire.md, Flags)
		asm.LoadMem(asm.R2, asm.R7, metaFlags, asm.Word),
		asm.And.Imm(asm.R2, int32(wire.FlagRetransmit)),
		asm.Or.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.R7, rep+4, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R7, metaTenant, asm.Word),
		asm.StoreMem(asm.R7, rep+8, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R7, metaHandler, asm.Word),
		asm.StoreMem(asm.R7, rep+12, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R7, metaID, asm.DWord),
		asm.StoreMem(asm.R7, rep+16, asm.R1, asm.DWord),
		asm.StoreImm(asm.R7, rep+24, int64(int32(node)), asm.Word),
		asm.LoadMem(asm.R1, asm.R7, metaSrc, asm.Word),
		asm.StoreMem(asm.R7, rep+28, asm.R1, asm.Word),
		asm.StoreMem(asm.R7, rep+32, asm.R8, asm.Word),
		asm.StoreMem(asm.R7, rep+36, asm.R4, asm.Word),
	)
	e.callSipHash(int32(rep), asm.R8, int32(rep)+macFields)
	e.add(
		// r8 = the datagram's length
		asm.LoadMem(asm.R8, asm.R10, nSlot, asm.DWord),
		asm.Add.Imm(asm.R8, wire.HeaderSize),
		asm.JGT.Imm(asm.R8, int32(l.cacheBytes), noCache),
		// the slot: peers[meta.peer] + peerSlots + (meta.slot % WindowSize) * slotSize
		asm.LoadMem(asm.R1, asm.R7, metaPeer, asm.Word),
	)
	e.lookup(mapPeers, asm.R1, -28, noCache)
	e.add(
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.LoadMem(asm.R1, asm.R7, metaSlot, asm.Word),
		asm.And.Imm(asm.R1, wire.WindowSize-1),
		asm.Mul.Imm(asm.R1, int32(l.slotSize)),
		asm.Add.Reg(asm.R9, asm.R1),
		asm.Add.Imm(asm.R9, peerSlots),
		// the slot must still be this request's: a newer id may have taken
		// it while the handler ran (only 1024 ids later)
		asm.LoadMem(asm.R1, asm.R9, slotID, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, metaID, asm.DWord),
		asm.Add.Imm(asm.R2, 1),
		asm.JNE.Reg(asm.R1, asm.R2, noCache),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, slotData),
		asm.Mov.Reg(asm.R2, asm.R8),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, int32(rep)),
		asm.FnProbeReadKernel.Call(),
		asm.StoreMem(asm.R9, slotLen, asm.R8, asm.Word),
		asm.StoreImm(asm.R9, slotState, SlotCached, asm.Word),
		asm.Ja.Label(tx),
	)
	e.label(noCache)
	e.add(asm.Mov.Imm(asm.R9, 0)) // r9: the slot when the reply is cached, else 0
	e.label(tx)
	e.add(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, int32(rep)),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.Call.Label(fnTx),
		asm.StoreMem(asm.R10, actSlot, asm.R0, asm.DWord),
		asm.JEq.Imm(asm.R0, xdpTx, sent),
		// No room for the reply in the frame: a cached reply goes up
		// with the request, which the node answers from the cache.
		asm.JNE.Imm(asm.R0, xdpPass, txFailed),
		asm.JEq.Imm(asm.R9, 0, txFailed),
	)
	e.count(ctrPassTailroom, asm.R1)
	e.add(asm.Ja.Label(replyCtr))
	e.label(txFailed)
	e.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.StoreMem(asm.R10, actSlot, asm.R0, asm.DWord))
	e.count(ctrDropTx, asm.R1)
	e.add(asm.Ja.Label(replyCtr))
	e.label(sent)
	e.add(
		asm.LoadMem(asm.R1, asm.R10, typeSlot, asm.DWord),
		asm.JNE.Imm(asm.R1, int32(wire.TypeReply), errReply),
	)
	e.count(ctrReplies, asm.R1)
	e.add(asm.Ja.Label(replyCtr))
	e.label(errReply)
	e.count(ctrErrorReplies, asm.R1)
	e.label(replyCtr)
	e.add(
		asm.LoadMem(asm.R0, asm.R10, actSlot, asm.DWord),
		asm.Return(),
	)
}

func emitTx(e *emitter) {
	drop, noRoom, grown, noHead := e.fresh("tx_drop"), e.fresh("tx_noroom"), e.fresh("tx_grown"), e.fresh("tx_nohead")
	ip, udp := int16(offIP), int16(offUDP)
	e.label(fnTx)
	e.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Reg(asm.R7, asm.R2),
		asm.Mov.Reg(asm.R8, asm.R3),
		// delta = offWire + len - (data_end - data)
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Sub.Reg(asm.R3, asm.R2),
		asm.Mov.Reg(asm.R2, asm.R8),
		asm.Add.Imm(asm.R2, offWire),
		asm.Sub.Reg(asm.R2, asm.R3),
		asm.StoreMem(asm.R10, -8, asm.R2, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnXdpAdjustTail.Call(),
		asm.JNE.Imm(asm.R0, 0, noRoom),
	)
	e.label(grown)
	e.add(
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, offWire),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Mov.Reg(asm.R4, asm.R8),
		asm.FnXdpStoreBytes.Call(),
		asm.JNE.Imm(asm.R0, 0, drop),
		asm.LoadMem(asm.R9, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, offWire),
		asm.JGT.Reg(asm.R1, asm.R3, drop),
		// Ethernet: swap the addresses.
		asm.LoadMem(asm.R1, asm.R9, 0, asm.Word),
		asm.LoadMem(asm.R2, asm.R9, 4, asm.Half),
		asm.LoadMem(asm.R3, asm.R9, 6, asm.Word),
		asm.LoadMem(asm.R4, asm.R9, 10, asm.Half),
		asm.StoreMem(asm.R9, 0, asm.R3, asm.Word),
		asm.StoreMem(asm.R9, 4, asm.R4, asm.Half),
		asm.StoreMem(asm.R9, 6, asm.R1, asm.Word),
		asm.StoreMem(asm.R9, 10, asm.R2, asm.Half),
		// IPv4: addresses, total length, TTL, checksum.
		asm.LoadMem(asm.R1, asm.R9, ip+12, asm.Word),
		asm.LoadMem(asm.R2, asm.R9, ip+16, asm.Word),
		asm.StoreMem(asm.R9, ip+12, asm.R2, asm.Word),
		asm.StoreMem(asm.R9, ip+16, asm.R1, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Add.Imm(asm.R1, ipLen+udpLen),
		asm.HostTo(asm.BE, asm.R1, asm.Half),
		asm.StoreMem(asm.R9, ip+2, asm.R1, asm.Half),
		asm.StoreImm(asm.R9, ip+8, replyTTL, asm.Byte),
		asm.StoreImm(asm.R9, ip+10, 0, asm.Half),
	)
	e.ipSum(asm.R9, asm.R1)
	e.add(
		asm.Xor.Imm(asm.R0, 0xffff),
		asm.StoreMem(asm.R9, ip+10, asm.R0, asm.Half),
		// UDP: ports, length, checksum (pseudo-header, header, datagram).
		asm.LoadMem(asm.R1, asm.R9, udp+0, asm.Half),
		asm.LoadMem(asm.R2, asm.R9, udp+2, asm.Half),
		asm.StoreMem(asm.R9, udp+0, asm.R2, asm.Half),
		asm.StoreMem(asm.R9, udp+2, asm.R1, asm.Half),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Add.Imm(asm.R1, udpLen),
		asm.HostTo(asm.BE, asm.R1, asm.Half),
		asm.StoreMem(asm.R9, udp+4, asm.R1, asm.Half),
		asm.StoreImm(asm.R9, udp+6, 0, asm.Half),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Mov.Reg(asm.R2, asm.R8),
		asm.Call.Label(fnCsum),
		// fnCsum kept r6–r9; the frame did not change, but the kernel
		// wants the packet bounds proven again after a call.
		asm.LoadMem(asm.R9, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, offWire),
		asm.JGT.Reg(asm.R1, asm.R3, drop),
		asm.LoadMem(asm.R1, asm.R9, ip+12, asm.Word),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.LoadMem(asm.R1, asm.R9, ip+16, asm.Word),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.Add.Imm(asm.R0, protoUDP<<8),
		asm.LoadMem(asm.R1, asm.R9, udp+4, asm.Half),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.LoadMem(asm.R1, asm.R9, udp+0, asm.Word),
		asm.Add.Reg(asm.R0, asm.R1),
	)
	e.fold(asm.R0, asm.R1)
	nonzero := e.fresh("tx_csum")
	e.add(
		asm.Xor.Imm(asm.R0, 0xffff),
		asm.JNE.Imm(asm.R0, 0, nonzero),
		asm.Mov.Imm(asm.R0, 0xffff),
	)
	e.label(nonzero)
	e.add(
		asm.StoreMem(asm.R9, udp+6, asm.R0, asm.Half),
		asm.Mov.Imm(asm.R0, xdpTx),
		asm.Return(),
	)
	e.label(drop)
	e.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
	// No tail room for the reply (veth's frames from a local socket have
	// little): grow the frame at its head instead, into the headroom every
	// XDP driver gives (XDP_PACKET_HEADROOM, 256 bytes), and move the
	// Ethernet, IP and UDP headers to the new start. delta = the growth,
	// 1 … 1500 (else: pass).
	e.label(noRoom)
	e.add(
		asm.LoadMem(asm.R2, asm.R10, -8, asm.DWord), // delta, as computed for the tail
		asm.JSLT.Imm(asm.R2, 1, noHead),
		asm.JSGT.Imm(asm.R2, 1500, noHead),
		asm.Neg.Imm(asm.R2, 0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnXdpAdjustHead.Call(),
		asm.JNE.Imm(asm.R0, 0, noHead),
		asm.LoadMem(asm.R9, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.LoadMem(asm.R2, asm.R10, -8, asm.DWord),
		asm.JSLT.Imm(asm.R2, 1, drop),
		asm.JSGT.Imm(asm.R2, 1500, drop),
		asm.Mov.Reg(asm.R4, asm.R9),
		asm.Add.Reg(asm.R4, asm.R2),
		asm.Mov.Reg(asm.R1, asm.R4),
		asm.Add.Imm(asm.R1, offWire),
		asm.JGT.Reg(asm.R1, asm.R3, drop),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, offWire),
		asm.JGT.Reg(asm.R1, asm.R3, drop),
	)
	// Forwards, 8 bytes at a time: the destination is before the source.
	for off := int16(0); off+8 <= offWire; off += 8 {
		e.add(asm.LoadMem(asm.R1, asm.R4, off, asm.DWord), asm.StoreMem(asm.R9, off, asm.R1, asm.DWord))
	}
	e.add(
		asm.LoadMem(asm.R1, asm.R4, offWire-2, asm.Half),
		asm.StoreMem(asm.R9, offWire-2, asm.R1, asm.Half),
		asm.Ja.Label(grown),
	)
	// The frame is unchanged: it passes up, where the node sends the
	// cached reply.
	e.label(noHead)
	e.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
}

func emitCsum(e *emitter) {
	loop, tail := e.fresh("csum_loop"), e.fresh("csum_tail")
	e.label(fnCsum)
	e.add(asm.Mov.Imm(asm.R0, 0), asm.Mov.Imm(asm.R3, 0))
	e.label(loop)
	e.add(
		asm.Mov.Reg(asm.R4, asm.R3),
		asm.Add.Imm(asm.R4, 8),
		asm.JGT.Reg(asm.R4, asm.R2, tail),
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.LoadMem(asm.R4, asm.R4, 0, asm.DWord),
		asm.Mov.Reg32(asm.R5, asm.R4),
		asm.Add.Reg(asm.R0, asm.R5),
		asm.RSh.Imm(asm.R4, 32),
		asm.Add.Reg(asm.R0, asm.R4),
		asm.Add.Imm(asm.R3, 8),
		asm.Ja.Label(loop),
	)
	e.label(tail)
	e.add(
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.LoadMem(asm.R4, asm.R4, 0, asm.DWord),
		asm.Mov.Reg(asm.R5, asm.R2),
		asm.And.Imm(asm.R5, 7),
		asm.LSh.Imm(asm.R5, 3),
		asm.Mov.Imm(asm.R3, 1),
		asm.LSh.Reg(asm.R3, asm.R5),
		asm.Sub.Imm(asm.R3, 1),
		asm.And.Reg(asm.R4, asm.R3),
		asm.Mov.Reg32(asm.R5, asm.R4),
		asm.Add.Reg(asm.R0, asm.R5),
		asm.RSh.Imm(asm.R4, 32),
		asm.Add.Reg(asm.R0, asm.R4),
		asm.Return(),
	)
}
