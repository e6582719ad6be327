package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/nicrt"
)

// Placement at the caller (Scenario.Caller "client"; spec/client.md): a
// handler the verifier proved client-eligible runs in the caller's own VM
// (clientrun.Runner, the caller library's code) over one-sided verbs to
// the node that holds its data: its declared reads in one round trip, each
// read beyond them in one more, each atomic one. The run happens when the
// operation starts, over the node's region bytes as they are then (the
// verbs' effects, its atomics, land then too); its round trips then go
// over the network one after another, each a verb request and its reply,
// retransmitted as any request, answered by the node's NIC without core
// time (spec/nic.md, Pacing: a verb takes no core time). The operation
// ends when the last reply is back and the caller's VM has run (the run's
// instructions at the host cores' model). Handlers that are not eligible
// go to the node.

// verbRequestBytes is a verb's request past the header (spec/nic.md,
// Built-in verbs); a CAS carries 16 bytes of operands, a FETCH-ADD 8.
const verbRequestBytes = 24

// clientSide is the caller's runner and what it needs.
type clientSide struct {
	runner   *clientrun.Runner
	eligible []bool // by handler
	fetch    simFetcher
	ctx      context.Context
}

// clientEnv serves the now and random helpers of runs at the caller.
type clientEnv struct {
	s   *sim
	rng *rand.Rand
}

func (e clientEnv) Now() uint64                       { return uint64(e.s.now) }
func (e clientEnv) Random() uint64                    { return e.rng.Uint64() }
func (e clientEnv) Trace([]byte)                      {}
func (e clientEnv) Send(uint64, uint32, []byte) error { return errRefused }
func (e clientEnv) Forward(uint64, uint32) error      { return errRefused }

func newClientSide(s *sim, obj *bytecode.Object) (*clientSide, error) {
	proofs := make([]clientrun.Proof, len(s.prog.handlers))
	c := &clientSide{eligible: make([]bool, len(proofs)), ctx: context.Background()}
	for i := range proofs {
		e := s.prog.handlers[i].report
		proofs[i] = clientrun.Proof{ClientEligible: e.ClientEligible, ClientReason: e.ClientReason, MaxInsns: e.MaxInsns}
		c.eligible[i] = e.ClientEligible
	}
	r, err := clientrun.New(obj, proofs, clientrun.Config{ReplySize: s.cfg.MaxReply,
		Env: clientEnv{s: s, rng: rand.New(rand.NewPCG(s.sc.Seed, streamClient))}})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	c.runner, c.fetch.s = r, s
	return c, nil
}

// roundTrip is one verb exchange of a run at the caller.
type roundTrip struct{ request, reply int32 } // datagram bytes

// simFetcher is clientrun's Fetcher over the node's regions: each call
// is one round trip, recorded in the op.
type simFetcher struct {
	s    *sim
	node int32
	o    *op
}

var errVerb = errors.New("sim: the verb leaves the region")

func (f *simFetcher) region(i, off, n uint32) ([]byte, error) {
	nd := &f.s.nodes[f.node]
	if int(i) >= len(nd.regions) || uint64(off)+uint64(n) > uint64(len(nd.regions[i].Data)) {
		return nil, errVerb
	}
	return nd.regions[i].Data[off : off+n], nil
}

func (f *simFetcher) Read(_ context.Context, reads []clientrun.Read) error {
	var bytes int32
	for _, r := range reads {
		b, err := f.region(r.Region, r.Offset, r.Length)
		if err != nil {
			return err
		}
		copy(r.Dst, b)
		bytes += int32(r.Length)
	}
	f.o.rts = append(f.o.rts, roundTrip{request: headerBytes + verbRequestBytes*int32(len(reads)), reply: headerBytes + bytes})
	return nil
}

func (f *simFetcher) FetchAdd(_ context.Context, region, offset uint32, delta uint64) (uint64, error) {
	b, err := f.region(region, offset, 8)
	if err != nil || offset%8 != 0 {
		return 0, errVerb
	}
	old := binary.LittleEndian.Uint64(b)
	binary.LittleEndian.PutUint64(b, old+delta)
	f.o.rts = append(f.o.rts, roundTrip{request: headerBytes + verbRequestBytes + 8, reply: headerBytes + 8})
	return old, nil
}

func (f *simFetcher) CompareAndSwap(_ context.Context, region, offset uint32, old, new uint64) (uint64, error) {
	b, err := f.region(region, offset, 8)
	if err != nil || offset%8 != 0 {
		return 0, errVerb
	}
	prev := binary.LittleEndian.Uint64(b)
	if prev == old {
		binary.LittleEndian.PutUint64(b, new)
	}
	f.o.rts = append(f.o.rts, roundTrip{request: headerBytes + verbRequestBytes + 16, reply: headerBytes + 8})
	return prev, nil
}

// runAtClient runs op idx at its caller, if its handler is eligible, and
// sends its first round trip; false: it goes to the node. If the node is
// down the run waits for the first verb to reach it (a placeholder READ
// until then), so that it never reads a failed node's memory.
func (s *sim) runAtClient(idx int32) bool {
	o := &s.ops[idx]
	if s.caller == nil || !s.caller.eligible[o.handler] {
		return false
	}
	o.rts, o.rt, o.atClient, o.deferred = o.rts[:0], 0, true, false
	if s.nodes[o.target].down {
		o.deferred = true
		o.rts = append(o.rts, roundTrip{request: headerBytes + verbRequestBytes, reply: headerBytes})
		s.sendRoundTrip(idx)
		return true
	}
	s.clientRun(idx)
	if len(o.rts) == 0 {
		s.heap.push(event{at: s.now + o.compute, kind: evFinish, op: idx, gen: o.gen})
		return true
	}
	s.sendRoundTrip(idx)
	return true
}

// clientRun runs op idx's handler in the caller's VM now, recording its
// round trips.
func (s *sim) clientRun(idx int32) {
	o := &s.ops[idx]
	hd := &s.prog.handlers[o.handler]
	s.loadNode(o.target)
	f := &s.caller.fetch
	f.node, f.o = o.target, o
	o.rts = o.rts[:0]
	res, err := s.caller.runner.Run(s.caller.ctx, f, clientrun.Call{Handler: hd.name, Request: o.payload,
		SrcNode: uint64(o.client) + uint64(len(s.nodes)) + 1, Tenant: tenant, RequestID: uint64(idx)<<32 | uint64(o.gen), ReplySize: hd.replySize})
	switch {
	case err != nil:
		o.status = nicrt.StatusFault
		if s.st.firstFault == nil {
			s.st.firstFault = fmt.Errorf("client %d: %s: %w", o.client, hd.name, err)
		}
	case res.Outcome == bytecode.OutcomeReply:
		o.status, o.reply = nicrt.StatusOK, append(o.reply[:0], res.Reply...)
	case res.Outcome == bytecode.OutcomeError:
		o.status, o.code = nicrt.StatusError, res.Code
	}
	o.replyLen = len(o.reply)
	o.compute = int64(s.model.Insns(res.Insns, true))
	s.st.clientRuns++
	s.st.insns += res.Insns
}

// sendRoundTrip sends the current round trip's verb request (again, on a
// retransmission).
func (s *sim) sendRoundTrip(idx int32) {
	o := &s.ops[idx]
	s.send(o.client+int32(len(s.nodes)), o.target, pkVerb, int(o.rts[o.rt].request), idx, o.gen, uint8(o.rt), o.try)
}

// verbAtNode answers a verb request: the NIC's hardware path, no core.
func (s *sim) verbAtNode(e event) {
	o := &s.ops[e.op]
	if o.gen != e.gen || o.done || int(e.hop) >= len(o.rts) {
		s.st.net.DuplicatesSuppressed++
		return
	}
	if o.deferred && e.hop == 0 {
		o.deferred = false
		s.clientRun(e.op)
		if len(o.rts) == 0 { // it read nothing: the placeholder stays its one round trip
			o.rts = append(o.rts, roundTrip{request: headerBytes + verbRequestBytes, reply: headerBytes})
		}
	}
	s.st.verbs++
	s.send(e.dst, e.src, pkVerbReply, int(o.rts[e.hop].reply), e.op, e.gen, e.hop, e.try)
}

// verbReplyAtClient takes a verb's reply: the next round trip, or the
// end of the run.
func (s *sim) verbReplyAtClient(e event) {
	o := &s.ops[e.op]
	if o.gen != e.gen || o.done || int(e.hop) != o.rt {
		s.st.net.StaleReplies++
		return
	}
	s.sample(o, e.try)
	o.rt++
	o.roundTrips++
	if o.rt == len(o.rts) {
		s.stopTimer(e.op)
		s.heap.push(event{at: s.now + o.compute, kind: evFinish, op: e.op, gen: e.gen})
		return
	}
	o.try, o.sent = 1, s.now
	o.wait = s.rto(&s.client[o.client])
	s.sendRoundTrip(e.op)
	s.setTimer(e.op, s.now+o.wait)
}
