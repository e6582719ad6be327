package xdp

import (
	"encoding/binary"
	"math/bits"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/nicrt/wire"
)

// The dispatcher is the program attached to the interface (spec/xdp.md,
// The dispatcher). Its stages, each leaving with XDP_PASS (the user-space
// node answers) or XDP_DROP, counted by reason, when the packet is not
// for it:
//
//  1. Ethernet, IPv4 without options or fragments, UDP to the node's
//     port (and address): anything else passes up.
//  2. The wire header's structure, as wire.Parse checks it: anything it
//     would refuse passes up, where the node counts it by field.
//  3. The tenant has a SipHash key here, or the packet passes up.
//  4. The MAC, over the request copied into the scratch: a bad one is
//     dropped. From here the packet is authenticated.
//  5. Requests only (every other type passes up), for this node (else
//     dropped, as the node drops them), without route flags, for a
//     handler served here and of the packet's tenant; a verb's region
//     must be here.
//  6. The peer state of (tenant, src) and the claim of the request id
//     (PeerTable.Claim): a new id is claimed and tail-called into its
//     handler's program; a duplicate is answered from the cache, or
//     dropped while it runs, or passed up when the node holds its reply;
//     replays are dropped.
//
// Until stage 6 nothing changes; after a claim the request is answered
// here, so a claimed id never reaches the node.

// dispatcher returns the dispatcher's instructions.
func dispatcher(l layout, c Config) (asm.Instructions, error) {
	e := newEmitter("d")
	const (
		keySlot  = -4  // u32 key of a map lookup
		peerSlot = -16 // the peer state's pointer
		actSlot  = -24 // an action kept across a call
		curSlot  = -32 // a slot's id word as read
		lenSlot  = -40 // a cached datagram's length
	)
	pass := map[counter]string{}
	passTo := func(c counter) string {
		if _, ok := pass[c]; !ok {
			pass[c] = e.fresh("pass_" + counterNames[c])
		}
		return pass[c]
	}
	drop := map[counter]string{}
	dropTo := func(c counter) string {
		if _, ok := drop[c]; !ok {
			drop[c] = e.fresh("drop_" + counterNames[c])
		}
		return drop[c]
	}
	noScratch := e.fresh("no_scratch")
	rq := int16(scrReq) // the request datagram in the scratch

	// 1. Frame.
	e.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Imm(asm.R1, 0),
	)
	e.lookup(mapScratch, asm.R1, keySlot, noScratch)
	e.add(asm.Mov.Reg(asm.R7, asm.R0))
	e.count(ctrRx, asm.R1)
	e.add(
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, offWire),
		asm.JGT.Reg(asm.R4, asm.R3, passTo(ctrPassNotNAAM)),
		asm.LoadMem(asm.R4, asm.R2, 12, asm.Half),
		asm.JEq.Imm(asm.R4, int32(bits.ReverseBytes16(ethTypeIPv6)), passTo(ctrPassIPv6)),
		asm.JNE.Imm(asm.R4, int32(bits.ReverseBytes16(ethTypeIPv4)), passTo(ctrPassNotNAAM)),
		asm.LoadMem(asm.R4, asm.R2, offIP+9, asm.Byte),
		asm.JNE.Imm(asm.R4, protoUDP, passTo(ctrPassNotNAAM)),
		asm.LoadMem(asm.R4, asm.R2, offUDP+2, asm.Half),
		asm.JNE.Imm(asm.R4, int32(bits.ReverseBytes16(c.Port)), passTo(ctrPassNotNAAM)),
	)
	if c.IP != [4]byte{} {
		e.add(
			asm.LoadMem(asm.R4, asm.R2, offIP+16, asm.Word),
			asm.JNE.Imm32(asm.R4, u32imm(binary.LittleEndian.Uint32(c.IP[:])), passTo(ctrPassNotNAAM)),
		)
	}
	e.add(
		asm.LoadMem(asm.R4, asm.R2, offIP, asm.Byte),
		asm.JNE.Imm(asm.R4, 0x45, passTo(ctrPassIP)),
		// The IP header checksum, as ip_rcv checks it: the kernel would
		// drop the packet, so it passes up.
	)
	e.ipSum(asm.R2, asm.R4)
	e.add(
		asm.JNE.Imm(asm.R0, 0xffff, passTo(ctrPassIP)),
		asm.LoadMem(asm.R4, asm.R2, offIP+6, asm.Half),
		asm.HostTo(asm.BE, asm.R4, asm.Half),
		asm.And.Imm(asm.R4, 0x3fff), // more fragments, fragment offset
		asm.JNE.Imm(asm.R4, 0, passTo(ctrPassIP)),
		// The IP and UDP lengths must be the frame's: no padding, nothing cut.
		asm.Mov.Reg(asm.R5, asm.R3),
		asm.Sub.Reg(asm.R5, asm.R2),
		asm.LoadMem(asm.R4, asm.R2, offIP+2, asm.Half),
		asm.HostTo(asm.BE, asm.R4, asm.Half),
		asm.Add.Imm(asm.R4, offIP),
		asm.JNE.Reg(asm.R4, asm.R5, passTo(ctrPassMalformed)),
		asm.LoadMem(asm.R4, asm.R2, offUDP+4, asm.Half),
		asm.HostTo(asm.BE, asm.R4, asm.Half),
		asm.Add.Imm(asm.R4, offUDP),
		asm.JNE.Reg(asm.R4, asm.R5, passTo(ctrPassMalformed)),
		// 2. The wire header's structure (wire.Parse).
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, offPayload),
		asm.JGT.Reg(asm.R4, asm.R3, passTo(ctrPassMalformed)),
		asm.LoadMem(asm.R4, asm.R2, offWire+0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R4),
		asm.And.Imm(asm.R1, 0xffffff),
		asm.JNE.Imm(asm.R1, wire.Magic|wire.Version<<16, passTo(ctrPassMalformed)),
		asm.RSh.Imm(asm.R4, 24), // type
		asm.JEq.Imm(asm.R4, 0, passTo(ctrPassMalformed)),
		asm.JGT.Imm(asm.R4, int32(wire.TypeControl), passTo(ctrPassMalformed)),
		asm.LoadMem(asm.R1, asm.R2, offWire+4, asm.Half),
		asm.And.Imm(asm.R1, ^int32(wire.FlagRetransmit|wire.FlagForwarded|wire.FlagProgram|wire.FlagOneWay)),
		asm.JNE.Imm(asm.R1, 0, passTo(ctrPassMalformed)),
		// length: the frame's payload, and at most MaxPayload
		asm.LoadMem(asm.R9, asm.R2, offWire+32, asm.Word),
		asm.Sub.Imm(asm.R5, offPayload),
		asm.JNE.Reg(asm.R9, asm.R5, passTo(ctrPassMalformed)),
		asm.JGT.Imm(asm.R9, int32(l.maxPayload), passTo(ctrPassMalformed)),
		// status: not 0 in an error reply, 0 elsewhere; credits carry no payload
		asm.LoadMem(asm.R1, asm.R2, offWire+36, asm.Word),
	)
	errReply, notErr, statusOK := e.fresh("err_reply"), e.fresh("not_err"), e.fresh("status_ok")
	e.add(
		asm.JEq.Imm(asm.R4, int32(wire.TypeErrorReply), errReply),
		asm.Ja.Label(notErr),
	)
	e.label(errReply)
	e.add(
		asm.JEq.Imm(asm.R1, 0, passTo(ctrPassMalformed)),
		asm.Ja.Label(statusOK),
	)
	e.label(notErr)
	e.add(asm.JNE.Imm(asm.R1, 0, passTo(ctrPassMalformed)))
	e.label(statusOK)
	credit := e.fresh("credit")
	e.add(
		asm.JNE.Imm(asm.R4, int32(wire.TypeCredit), credit),
		asm.JNE.Imm(asm.R9, 0, passTo(ctrPassMalformed)),
	)
	e.label(credit)
	// 3. The tenant's key.
	e.add(asm.LoadMem(asm.R1, asm.R2, offWire+8, asm.Word))
	e.lookup(mapKeys, asm.R1, keySlot, passTo(ctrPassTenant))
	e.add(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.StoreMem(asm.R7, metaKey, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
		asm.StoreMem(asm.R7, metaKey+8, asm.R1, asm.DWord),
		asm.StoreMem(asm.R7, metaPlen, asm.R9, asm.Word),
		// 4. The MAC, over the datagram copied into the scratch.
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, offWire),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, int32(rq)),
		asm.Mov.Reg(asm.R4, asm.R9),
		asm.Add.Imm(asm.R4, wire.HeaderSize),
		asm.FnXdpLoadBytes.Call(),
		asm.JNE.Imm(asm.R0, 0, passTo(ctrPassMalformed)),
	)
	e.callSipHash(int32(rq), asm.R9, scrTag)
	e.add(
		// One branch on the OR of both words' differences: no early exit.
		asm.LoadMem(asm.R1, asm.R7, scrTag, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, rq+macFields, asm.DWord),
		asm.Xor.Reg(asm.R1, asm.R2),
		asm.LoadMem(asm.R3, asm.R7, scrTag+8, asm.DWord),
		asm.LoadMem(asm.R4, asm.R7, rq+macFields+8, asm.DWord),
		asm.Xor.Reg(asm.R3, asm.R4),
		asm.Or.Reg(asm.R1, asm.R3),
		asm.JNE.Imm(asm.R1, 0, dropTo(ctrDropBadMAC)),
		// 5. What the request is. The fields come from the scratch, the
		// bytes the MAC covered.
		asm.LoadMem(asm.R1, asm.R7, rq+3, asm.Byte),
		asm.JNE.Imm(asm.R1, int32(wire.TypeRequest), passTo(ctrPassType)),
		asm.LoadMem(asm.R1, asm.R7, rq+28, asm.Word),
		asm.JNE.Imm32(asm.R1, u32imm(c.Node), dropTo(ctrDropWrongDst)),
		asm.LoadMem(asm.R1, asm.R7, rq+4, asm.Half),
		asm.StoreMem(asm.R7, metaFlags, asm.R1, asm.Word),
		asm.And.Imm(asm.R1, ^int32(wire.FlagRetransmit)),
		asm.JNE.Imm(asm.R1, 0, passTo(ctrPassRoute)),
		asm.LoadMem(asm.R1, asm.R7, rq+12, asm.Word),
		asm.StoreMem(asm.R7, metaHandler, asm.R1, asm.Word),
	)
	e.lookup(mapHandlers, asm.R1, keySlot, passTo(ctrPassHandler))
	isVerb, dispatched := e.fresh("verb"), e.fresh("dispatched")
	e.add(
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.LoadMem(asm.R2, asm.R7, rq+8, asm.Word),
		asm.StoreMem(asm.R7, metaTenant, asm.R2, asm.Word),
		asm.LoadMem(asm.R1, asm.R8, hentProg, asm.Word),
		asm.StoreMem(asm.R7, metaProg, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R8, hentKind, asm.Word),
		asm.JEq.Imm(asm.R1, kindVerb, isVerb),
		// A handler of another tenant: the node answers foreign handler.
		asm.LoadMem(asm.R1, asm.R8, hentTenant, asm.Word),
		asm.JNE.Reg(asm.R1, asm.R2, passTo(ctrPassHandler)),
		asm.Ja.Label(dispatched),
	)
	// A verb naming a region the node keeps elsewhere passes up; one too
	// short to name any is the verb program's bad request.
	e.label(isVerb)
	e.add(
		asm.JLT.Imm(asm.R9, verbHeader, dispatched),
		asm.LoadMem(asm.R1, asm.R7, rq+wire.HeaderSize+8, asm.Word),
	)
	e.lookup(mapRegions, asm.R1, keySlot, passTo(ctrPassRegion))
	e.label(dispatched)
	e.add(
		asm.LoadMem(asm.R9, asm.R7, rq+16, asm.DWord), // r9 = request id
		asm.StoreMem(asm.R7, metaID, asm.R9, asm.DWord),
		asm.JEq.Imm(asm.R9, -1, passTo(ctrPassID)),
		asm.LoadMem(asm.R1, asm.R7, rq+24, asm.Word),
		asm.StoreMem(asm.R7, metaSrc, asm.R1, asm.Word),
		// 6. The peer state: key = (tenant<<32 | src) + 1, probed from its
		// home (peerHome).
		asm.LoadMem(asm.R8, asm.R7, metaTenant, asm.Word),
		asm.LSh.Imm(asm.R8, 32),
		asm.Or.Reg(asm.R8, asm.R1),
		asm.Add.Imm(asm.R8, 1),
		asm.JEq.Imm(asm.R8, 0, passTo(ctrPassPeers)),
		asm.StoreMem(asm.R10, curSlot, asm.R8, asm.DWord), // the key, until found
		asm.LoadImm(asm.R1, u64imm(peerHashMul), asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R8),
		asm.Mul.Reg(asm.R2, asm.R1),
		asm.Mov.Reg(asm.R1, asm.R2),
		asm.RSh.Imm(asm.R1, 32),
		asm.Xor.Reg(asm.R2, asm.R1),
		asm.StoreMem(asm.R10, actSlot, asm.R2, asm.DWord), // the home
	)
	found := e.fresh("peer_found")
	for i := range peerProbes {
		next := e.fresh("peer_next")
		e.add(
			asm.LoadMem(asm.R1, asm.R10, actSlot, asm.DWord),
			asm.Add.Imm(asm.R1, int32(i)),
			asm.And.Imm(asm.R1, int32(l.maxPeers-1)),
			asm.StoreMem(asm.R7, metaPeer, asm.R1, asm.Word),
		)
		e.lookup(mapPeers, asm.R1, keySlot, next)
		e.add(
			asm.Mov.Reg(asm.R8, asm.R0),
			asm.LoadMem(asm.R2, asm.R10, curSlot, asm.DWord),
			asm.LoadMem(asm.R1, asm.R8, peerKey, asm.DWord),
			asm.JEq.Reg(asm.R1, asm.R2, found),
			asm.JNE.Imm(asm.R1, 0, next),
			asm.Mov.Imm(asm.R0, 0),
			atomicInsn(asm.CmpXchg, asm.R8, asm.R2, asm.DWord, peerKey),
			asm.JEq.Imm(asm.R0, 0, found),
			asm.JEq.Reg(asm.R0, asm.R2, found),
		)
		e.label(next)
	}
	e.add(asm.Ja.Label(passTo(ctrPassPeers)))

	// The claim (PeerTable.Claim): r8 the peer, r9 the id.
	e.label(found)
	dup, claimed := e.fresh("dup"), e.fresh("claimed")
	tooOld := dropTo(ctrDropReplayTooOld)
	e.add(
		asm.StoreMem(asm.R10, peerSlot, asm.R8, asm.DWord),
		asm.LoadMem(asm.R1, asm.R8, peerFloor, asm.DWord),
		asm.JLT.Reg(asm.R9, asm.R1, dropTo(ctrDropReplayFloor)),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.And.Imm(asm.R1, wire.WindowSize-1),
		asm.StoreMem(asm.R7, metaSlot, asm.R1, asm.Word),
		asm.Mul.Imm(asm.R1, int32(l.slotSize)),
		asm.Add.Reg(asm.R8, asm.R1),
		asm.Add.Imm(asm.R8, peerSlots), // r8 = the slot
	)
	for range claimTries {
		topOK := e.fresh("top_ok")
		e.add(
			asm.LoadMem(asm.R2, asm.R10, peerSlot, asm.DWord),
			asm.LoadMem(asm.R1, asm.R2, peerTop, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, topOK),
			asm.Sub.Imm(asm.R1, 1),
			asm.JGT.Reg(asm.R9, asm.R1, topOK),
			asm.Sub.Reg(asm.R1, asm.R9),
			asm.JGE.Imm(asm.R1, wire.WindowSize, tooOld),
		)
		e.label(topOK)
		e.add(
			asm.LoadMem(asm.R0, asm.R8, slotID, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.R9),
			asm.Add.Imm(asm.R1, 1),
			asm.JEq.Reg(asm.R0, asm.R1, dup),
			asm.JGT.Reg(asm.R0, asm.R1, tooOld),
			asm.Mov.Reg(asm.R2, asm.R0),
			atomicInsn(asm.CmpXchg, asm.R8, asm.R1, asm.DWord, slotID),
			asm.JEq.Reg(asm.R0, asm.R2, claimed),
		)
	}
	e.add(asm.Ja.Label(dropTo(ctrDropContended)))

	e.label(claimed)
	topDone := e.fresh("top_done")
	e.add(
		asm.StoreImm(asm.R8, slotState, SlotRunning, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R8, slotSID, asm.R1, asm.DWord),
		asm.LoadMem(asm.R2, asm.R10, peerSlot, asm.DWord),
	)
	for range claimTries {
		e.add(
			asm.LoadMem(asm.R0, asm.R2, peerTop, asm.DWord),
			asm.JGE.Reg(asm.R0, asm.R1, topDone),
			asm.Mov.Reg(asm.R3, asm.R0),
			atomicInsn(asm.CmpXchg, asm.R2, asm.R1, asm.DWord, peerTop),
			asm.JEq.Reg(asm.R0, asm.R3, topDone),
		)
	}
	e.label(topDone)
	notRetx := e.fresh("not_retx")
	e.add(
		asm.LoadMem(asm.R1, asm.R7, metaFlags, asm.Word),
		asm.JEq.Imm(asm.R1, 0, notRetx),
	)
	e.count(ctrRetransmitted, asm.R1)
	e.label(notRetx)
	e.add(
		asm.Mov.Reg(asm.R1, asm.R6),
		mapPtr(asm.R2, mapProgs),
		asm.LoadMem(asm.R3, asm.R7, metaProg, asm.Word),
		asm.FnTailCall.Call(),
	)
	// The program is gone (uninstalled since the lookup).
	e.unknownHandler()

	// A duplicate: resend the cached datagram, or say why not.
	e.label(dup)
	running := dropTo(ctrDropDuplicateRunning)
	resent := e.fresh("resent")
	e.add(
		asm.LoadMem(asm.R2, asm.R8, slotSID, asm.DWord),
		asm.JNE.Reg(asm.R2, asm.R1, running),
		asm.LoadMem(asm.R2, asm.R8, slotState, asm.Word),
		asm.JEq.Imm(asm.R2, SlotElsewhere, passTo(ctrPassElsewhere)),
		asm.JNE.Imm(asm.R2, SlotCached, running),
		asm.LoadMem(asm.R3, asm.R8, slotLen, asm.Word),
		asm.JLT.Imm(asm.R3, wire.HeaderSize, running),
		asm.JGT.Imm(asm.R3, int32(l.cacheBytes), running),
		asm.StoreMem(asm.R10, lenSlot, asm.R3, asm.DWord),
		// Copy it into the scratch's reply datagram.
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(l.scrRep)),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.Add.Imm(asm.R3, slotData),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, running),
		// The slot must still hold this id's reply: a newer id may have
		// taken it while it was copied.
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, 1),
		asm.LoadMem(asm.R2, asm.R8, slotID, asm.DWord),
		asm.JNE.Reg(asm.R2, asm.R1, tooOld),
		asm.LoadMem(asm.R2, asm.R8, slotSID, asm.DWord),
		asm.JNE.Reg(asm.R2, asm.R1, tooOld),
		// A repeated reply carries the retransmit flag, sealed again, as
		// the node's (spec/wire.md, Flags): the caller tells the first
		// try's own answer from it.
		asm.LoadMem(asm.R1, asm.R7, int16(l.scrRep+4), asm.Half),
		asm.Or.Imm(asm.R1, int32(wire.FlagRetransmit)),
		asm.StoreMem(asm.R7, int16(l.scrRep+4), asm.R1, asm.Half),
		asm.LoadMem(asm.R3, asm.R10, lenSlot, asm.DWord),
		asm.JLT.Imm(asm.R3, wire.HeaderSize, running),
		asm.JGT.Imm(asm.R3, int32(l.cacheBytes), running),
		asm.Sub.Imm(asm.R3, wire.HeaderSize),
	)
	e.callSipHash(int32(l.scrRep), asm.R3, int32(l.scrRep)+macFields)
	e.add(
		asm.LoadMem(asm.R3, asm.R10, lenSlot, asm.DWord),
		asm.JLT.Imm(asm.R3, wire.HeaderSize, running),
		asm.JGT.Imm(asm.R3, int32(l.cacheBytes), running),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, int32(l.scrRep)),
		asm.Call.Label(fnTx),
		asm.JEq.Imm(asm.R0, xdpTx, resent),
		asm.JEq.Imm(asm.R0, xdpPass, passTo(ctrPassTailroom)),
	)
	e.count(ctrDropTx, asm.R1)
	e.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
	e.label(resent)
	e.count(ctrCacheHits, asm.R1)
	e.add(asm.Return())

	// Exits.
	for c := counter(0); c < numCounters; c++ {
		if lbl, ok := pass[c]; ok {
			e.label(lbl)
			e.count(c, asm.R1)
			e.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
		}
		if lbl, ok := drop[c]; ok {
			e.label(lbl)
			e.count(c, asm.R1)
			e.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
		}
	}
	e.label(noScratch)
	e.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	emitReplyPath(e, l, c.Node)
	emitSipHash(e)
	return e.finish()
}
