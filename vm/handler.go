package vm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
)

// Invocation is one request for a handler: what Invoke maps and puts in the
// context (spec/abi.md).
type Invocation struct {
	Entry     int    // slot of the handler's first instruction
	Handler   uint32 // ctx.handler
	SrcNode   uint64 // ctx.src_node
	Tenant    uint64 // ctx.tenant
	RequestID uint64 // ctx.request_id
	// Request is mapped read-only as SegRequest; it may start anywhere.
	Request []byte
	// Reply is mapped writable as SegReply, so it must start on an 8-byte
	// boundary (Map). Invoke zeroes it before the run; its length is the
	// reply buffer's size.
	Reply []byte
	// Regions[i] is mapped as region i (at most MaxRegions); a nil Data
	// leaves the region unmapped.
	Regions []RegionMem
}

// RegionMem is the memory behind one region. Writable memory must start on
// an 8-byte boundary (Map).
type RegionMem struct {
	Data     []byte
	Writable bool
	// Remote, when set, is where the region's bytes are instead of Data,
	// which must be nil (MapRemote; spec/vm.md, Remote regions).
	Remote RemoteMemory
	// Memory, when set, is the Memory that Data starts (Data is
	// Memory.Bytes()[:len(Data)]): engines map it in place, so that their
	// writes and atomics are shared with every other core at once. A
	// region given as a plain slice is copied by such engines for a run.
	Memory *Memory
}

// Result is how a handler run ended.
type Result struct {
	R0      int64            // r0 at the final exit
	Outcome bytecode.Outcome // what R0 means; OutcomeInvalid whenever Invoke returns an error
	Reply   []byte           // Invocation.Reply[:R0] when Outcome is OutcomeReply
	Code    int32            // the error code when Outcome is OutcomeError
	// Forward says where the request went when the run called forward
	// successfully: always with OutcomeForwarded, and also when the run
	// forwarded and then failed (the request has left all the same).
	Forward *Forward
	Insns   uint64 // instructions executed
	// Exit is the slot of the exit instruction that ended the run, for a
	// line table to name the source (an error code's failing site).
	Exit int
}

// Forward is where the forward helper sent a request.
type Forward struct {
	Node    uint64
	Handler uint32
}

// Invoke runs x's handler at inv.Entry under the handler ABI (spec/abi.md):
// it builds the context in a buffer of the machine, maps it read-only as
// SegContext, maps the request, the zeroed reply buffer and the regions,
// runs with r1 holding the context's address, unmaps all of them again and
// classifies r0 with bytecode.ClassifyReturn. Invoke owns the context,
// request, reply and region segments: whatever was mapped there before is
// replaced, and regions the program addresses beyond inv.Regions are
// unmapped for the run.
//
// Helpers come from Options.Helpers, normally ABIHelpers. The forward
// helper's state is per run, so Invoke can check the ReturnForwarded
// convention.
//
// The error is a *Fault for a fault during the run and for a return value
// the ABI forbids (FaultReturn): a reply longer than the buffer, an r0 that
// is neither a reply, an error code nor ReturnForwarded, ReturnForwarded
// without a successful forward, or another value after one. It is a plain
// error, before anything runs, for too many regions, memory Map refuses
// (a writable buffer not 8-byte aligned, more than MaxSegmentSize bytes),
// and what RunAt refuses. Result.Outcome is OutcomeInvalid whenever the
// error is not nil.
//
// Result.Reply aliases inv.Reply. Invoke does not allocate unless it fails
// or the handler forwards.
func (m *Machine) Invoke(x Executable, inv *Invocation) (Result, error) {
	p := x.Program()
	if len(inv.Regions) > MaxRegions {
		return Result{}, fmt.Errorf("vm: %d regions, at most %d", len(inv.Regions), MaxRegions)
	}
	m.forwarded = false // RunAt clears it too, but a mapping error never gets there
	err := m.mapInvocation(p, inv)
	var raw uint64
	if err == nil {
		raw, err = m.runEntry(x, p, inv.Entry, Addr(SegContext, 0), 0)
	}
	m.unmapInvocation(p, inv)
	if err != nil {
		res := Result{}
		if _, ok := err.(*Fault); ok {
			res.Insns = m.steps
			res.Forward = m.forwardResult()
		}
		return res, err
	}
	r0 := int64(raw)
	res := Result{R0: r0, Outcome: bytecode.ClassifyReturn(r0), Insns: m.steps, Forward: m.forwardResult(), Exit: m.exit}
	switch {
	case res.Outcome == bytecode.OutcomeInvalid:
		err = fmt.Errorf("r0 = %d is neither a reply length, an error code (-1 to -%d) nor ReturnForwarded", r0, bytecode.MaxErrorCode)
	case m.forwarded && res.Outcome != bytecode.OutcomeForwarded:
		err = fmt.Errorf("r0 = %d after a successful forward (a handler that forwards must return ReturnForwarded)", r0)
	case res.Outcome == bytecode.OutcomeForwarded && !m.forwarded:
		err = errors.New("r0 = ReturnForwarded, but the run did not forward the request")
	case res.Outcome == bytecode.OutcomeReply && uint64(r0) > uint64(len(inv.Reply)):
		err = fmt.Errorf("reply of %d bytes, the buffer has %d", r0, len(inv.Reply))
	case res.Outcome == bytecode.OutcomeReply:
		res.Reply = inv.Reply[:r0]
	case res.Outcome == bytecode.OutcomeError:
		res.Code = int32(-r0)
	}
	if err != nil {
		res.Outcome = bytecode.OutcomeInvalid
		return res, &Fault{Kind: FaultReturn, PC: m.exit, Err: err}
	}
	return res, nil
}

// forwardResult returns where the run forwarded its request, if it did.
func (m *Machine) forwardResult() *Forward {
	if !m.forwarded {
		return nil
	}
	f := m.forward
	return &f
}

// mapInvocation fills the context and maps what inv describes. On an error
// some segments may be mapped; unmapInvocation clears them.
func (m *Machine) mapInvocation(p *Program, inv *Invocation) error {
	clear(inv.Reply)
	if _, err := m.Map(SegRequest, inv.Request, false); err != nil {
		return err
	}
	if _, err := m.Map(SegReply, inv.Reply, true); err != nil {
		return err
	}
	for i, r := range inv.Regions {
		seg := RegionSegment(i)
		if r.Remote != nil {
			if r.Data != nil || r.Memory != nil {
				return fmt.Errorf("vm: region %d: a remote region has no Data or Memory", i)
			}
			if _, err := m.MapRemote(seg, r.Remote, r.Writable); err != nil {
				return err
			}
			continue
		}
		if r.Memory == nil {
			if _, err := m.Map(seg, r.Data, r.Writable); err != nil {
				return err
			}
			continue
		}
		if len(r.Data) > 0 && (len(r.Data) > r.Memory.Len() || unsafe.SliceData(r.Data) != unsafe.SliceData(r.Memory.Bytes())) {
			return fmt.Errorf("vm: region %d: Data is not the start of its Memory", i)
		}
		if _, err := m.MapMemory(seg, r.Memory, len(r.Data), r.Writable); err != nil {
			return err
		}
	}
	for i := len(inv.Regions); i < p.regions; i++ {
		m.Unmap(RegionSegment(i))
	}
	// Map refused anything longer than MaxSegmentSize, so the lengths fit
	// a segment offset.
	ctx := unsafe.Slice((*byte)(unsafe.Pointer(&m.ctx[0])), bytecode.CtxSize)
	le := binary.LittleEndian
	le.PutUint64(ctx[bytecode.CtxData:], Addr(SegRequest, 0))
	le.PutUint64(ctx[bytecode.CtxDataEnd:], Addr(SegRequest, uint32(len(inv.Request))))
	le.PutUint64(ctx[bytecode.CtxReply:], Addr(SegReply, 0))
	le.PutUint64(ctx[bytecode.CtxReplyEnd:], Addr(SegReply, uint32(len(inv.Reply))))
	le.PutUint64(ctx[bytecode.CtxSrcNode:], inv.SrcNode)
	le.PutUint64(ctx[bytecode.CtxTenant:], inv.Tenant)
	le.PutUint64(ctx[bytecode.CtxRequestID:], inv.RequestID)
	le.PutUint64(ctx[bytecode.CtxHandler:], uint64(inv.Handler))
	_, err := m.Map(SegContext, ctx, false)
	return err
}

// unmapInvocation unmaps every segment Invoke owns, so no slice of the
// caller's stays reachable from the machine.
func (m *Machine) unmapInvocation(p *Program, inv *Invocation) {
	m.Unmap(SegContext)
	m.Unmap(SegRequest)
	m.Unmap(SegReply)
	for i := range max(len(inv.Regions), p.regions) {
		m.Unmap(RegionSegment(i))
	}
}
