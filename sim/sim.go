package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/steer"
	"github.com/naam-project/naam/vm"
)

// The random streams of a run: PCG(seed, stream).
const (
	streamNetwork  = 1
	streamWorkload = 2
	streamHelpers  = 3
	streamSetup    = 4
	streamClient   = 5
)

// tenant is the one tenant every message of a run is from.
const tenant = 1

// maxRegionBytes bounds the regions of all nodes together, were every
// node touched.
const maxRegionBytes = 8 << 30

// maxHops bounds a request's chain of forwards: a forward past it is
// refused (the handler sees send's -1), as a loop must not run forever.
const maxHops = 64

// Options are what Run needs besides the scenario.
type Options struct {
	Programs Programs
	// Progress, when set, is told how many operations are finished out of
	// the total now and then (every 1/512 of them). It sees the run; it
	// cannot change it.
	Progress func(done, total int)
}

// node is one simulated node. Everything but the counters is made when
// a message first reaches it (load), so that untouched nodes cost a few
// words.
type node struct {
	regions  []vm.RegionMem     // nil until loaded
	steer    []nicrt.SteerState // per handler, with the regions
	cores    []core             // NIC cores, then host cores
	hostLoad float64
	txFree   int64 // when its port is free
	received uint64
	runs     uint64
	epoch    uint32 // +1 at every failure
	group    uint16 // partition group
	down     bool
	shiftIdx int32 // index in the shift set, or -1
}

// core is one NIC or host core: a first-come first-served server on the
// virtual clock.
type core struct {
	busyUntil int64
	queued    int32 // messages placed on it and not finished
}

// client is one caller.
type client struct {
	home         int32
	txFree       int64
	srtt, rttvar int64 // 0 until the first sample
	rtts         uint64
}

// hopState is what one node of a request's chain holds of it: its
// window entry and reply-cache slot, the outcome of its one run.
type hopState struct {
	node    int32
	handler int32  // the handler it runs (a forward's target)
	epoch   uint32 // the node's epoch + 1 when it ran; 0: not yet
	done    bool   // the run ended: the outcome below is cached
	status  nicrt.Status
	code    int32
	fwdNode int32 // the next node when it forwarded, else -1
	fwdH    int32
}

// op is one client operation in flight.
type op struct {
	gen      uint32
	client   int32
	target   int32 // the node called
	handler  int32
	try      uint8
	done     bool
	start    int64 // first send
	wait     int64 // the current try's timeout
	payload  []byte
	reply    []byte
	hops     []hopState
	status   nicrt.Status // the final outcome
	code     int32
	replyLen int
	check    uint64 // what the workload expects of the reply
	kind     uint8  // the workload's kind of operation
	// A run at the caller (client.go): its verb round trips, the one in
	// progress, and the caller's VM time.
	atClient bool
	deferred bool // the run waits for its first verb to reach the node
	rts      []roundTrip
	rt       int
	compute  int64
	// sent is when the request in progress (or round trip) was first
	// sent; roundTrips counts the exchanges with the node.
	sent       int64
	roundTrips int
	// The retransmission timer (timers): when, its sequence number, its
	// place in the timer heap (−1: not armed).
	timerAt  int64
	timerSeq uint64
	timerPos int32
}

// oneway is one message a handler sent.
type oneway struct {
	gen       uint32
	src, dst  int32 // nodes
	handler   int32
	copies    int32 // datagrams in flight
	delivered bool
	payload   []byte
}

type sim struct {
	sc     Scenario
	cfg    nicrt.Config
	model  nicrt.CostModel
	prog   *program
	wl     workload
	net    *network
	nodes  []node
	nNIC   int
	nHost  int
	client []client
	ops    []op
	free   []int32
	ow     []oneway
	owFree []int32
	heap   eventHeap
	now    int64

	nicM, hostM *vm.Machine
	env         simEnv
	replyBuf    []byte
	workRNG     *rand.Rand
	helperRNG   *rand.Rand

	issued, finished int
	progress         func(done, total int)
	progressEvery    int

	timers timers
	caller *clientSide // nil: every operation goes to its node
	shift  shiftState
	st     stats
}

// ErrInternal is what Run returns, wrapped, if the simulator itself
// failed (a Go panic in it): never a result built on a broken run.
var ErrInternal = errors.New("sim: internal error")

// Run simulates sc.
func Run(sc Scenario, opts Options) (r *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%w: %v", ErrInternal, p)
		}
	}()
	sc = sc.withDefaults()
	cfg, err := sc.check()
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s := &sim{sc: sc, progress: opts.Progress}
	if s.model, err = nicrt.NewCostModel(cfg); err != nil {
		return nil, fmt.Errorf("sim: nic: %w", err)
	}
	s.cfg = s.model.Config()
	s.nNIC, s.nHost = s.cfg.NICCores, max(s.cfg.HostCores, 0)
	if s.wl, err = newWorkload(sc, opts.Programs); err != nil {
		return nil, err
	}
	obj, err := s.wl.object()
	if err != nil {
		return nil, err
	}
	if s.prog, err = load(obj, s.model, sc.NIC.NICMem); err != nil {
		return nil, err
	}
	if err := s.wl.bind(s.prog); err != nil {
		return nil, err
	}
	var perNode uint64
	for _, r := range s.prog.regions {
		perNode += (r.Size + 7) &^ 7
	}
	if perNode*uint64(sc.Nodes) > maxRegionBytes {
		return nil, fmt.Errorf("sim: nodes: %d nodes with %d bytes of regions each need more than %d GiB", sc.Nodes, perNode, maxRegionBytes>>30)
	}
	if sc.Caller == "client" {
		if s.caller, err = newClientSide(s, obj); err != nil {
			return nil, err
		}
	}
	s.net = newNetwork(sc, s.cfg.LinkBitsPerSec, sc.Seed)
	s.workRNG = rand.New(rand.NewPCG(sc.Seed, streamWorkload))
	s.helperRNG = rand.New(rand.NewPCG(sc.Seed, streamHelpers))
	if err := s.wl.setup(s, rand.New(rand.NewPCG(sc.Seed, streamSetup))); err != nil {
		return nil, err
	}
	s.env.s, s.timers.s = s, s
	helpers := s.env.helpers()
	s.nicM = vm.NewMachine(vm.Options{Helpers: helpers, Budget: s.cfg.NICBudget, Unchecked: true})
	s.hostM = vm.NewMachine(vm.Options{Helpers: helpers, Budget: s.cfg.HostBudget, Unchecked: s.cfg.HostUnchecked})
	s.replyBuf = alignedBytes(s.cfg.MaxReply)
	s.nodes = make([]node, sc.Nodes)
	for i := range s.nodes {
		s.nodes[i].hostLoad = sc.NIC.HostLoad
		s.nodes[i].shiftIdx = -1
	}
	s.shift.init(s)
	s.client = make([]client, sc.Clients)
	for i := range s.client {
		s.client[i].home = int32(i % sc.Nodes)
	}
	s.progressEvery = max(sc.Messages/512, 1)
	s.st.init(s)
	for i := range sc.Events {
		s.heap.push(event{at: int64(sc.Events[i].At), kind: evScenario, op: int32(i)})
	}
	for c := range s.client {
		for range sc.Outstanding {
			s.heap.push(event{at: 0, kind: evIssue, src: int32(c)})
		}
	}
	if err := s.loop(); err != nil {
		return nil, err
	}
	return s.result(), nil
}

// alignedBytes is n zeroed bytes starting on an 8-byte boundary.
func alignedBytes(n int) []byte {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

func (s *sim) loop() error {
	for s.heap.len() > 0 || len(s.timers.ops) > 0 {
		if s.nextIsTimer() {
			i := s.timers.ops[0]
			o := &s.ops[i]
			s.now = o.timerAt
			s.stopTimer(i)
			s.timeout(i)
			continue
		}
		e := s.heap.pop()
		s.now = e.at
		switch e.kind {
		case evArrive:
			s.arrive(e)
		case evDone:
			s.done(e)
		case evSend:
			s.sendOneway(e)
		case evIssue:
			s.issue(int(e.src))
		case evScenario:
			s.scenarioEvent(int(e.op))
		case evFinish:
			if o := &s.ops[e.op]; o.gen == e.gen && !o.done {
				s.finish(e.op, true)
			}
		}
		if s.st.err != nil {
			return s.st.err
		}
	}
	return nil
}

// endpoint numbering: nodes 0 … N−1, then clients.
func (s *sim) isNode(e int32) bool { return int(e) < len(s.nodes) }

func (s *sim) home(e int32) int32 {
	if s.isNode(e) {
		return e
	}
	return s.client[int(e)-len(s.nodes)].home
}

// send puts a datagram of size bytes on src's port to dst.
func (s *sim) send(src, dst int32, pk packetKind, size int, opIdx int32, gen uint32, hop, try uint8) int {
	a, b := s.home(src), s.home(dst)
	p := s.net.props(a, b)
	bps := s.net.bps
	if p.bps != 0 {
		bps = p.bps
	}
	tx := &s.client[0].txFree
	if s.isNode(src) {
		tx = &s.nodes[src].txFree
	} else {
		tx = &s.client[int(src)-len(s.nodes)].txFree
	}
	depart := max(s.now, *tx) + wireNanos(size, bps)
	*tx = depart
	s.st.net.Datagrams++
	s.st.net.Bytes += uint64(size)
	e := event{kind: evArrive, pk: pk, src: src, dst: dst, op: opIdx, gen: gen, hop: hop, try: try}
	copies := 0
	if p.loss > 0 && s.net.rng.Float64() < p.loss {
		s.st.net.DroppedLoss++
	} else {
		e.at = depart + s.net.latency(p.lat)
		s.heap.push(e)
		copies++
	}
	if p.dup > 0 && s.net.rng.Float64() < p.dup {
		s.st.net.Duplicated++
		e.at = depart + s.net.latency(p.lat)
		s.heap.push(e)
		copies++
	}
	return copies
}

// reachable: the datagram e may be delivered (its destination node is up
// and on its source's side of any partition); counts what is not.
func (s *sim) reachable(e event) bool {
	a, b := s.home(e.src), s.home(e.dst)
	if s.nodes[a].group != s.nodes[b].group {
		s.st.net.DroppedPartition++
		return false
	}
	if s.isNode(e.dst) && s.nodes[e.dst].down {
		s.st.net.DroppedDown++
		return false
	}
	return true
}

func (s *sim) arrive(e event) {
	if e.pk == pkOneway {
		s.arriveOneway(e)
		return
	}
	if !s.reachable(e) {
		return
	}
	if !s.isNode(e.dst) {
		if e.pk == pkVerbReply {
			s.verbReplyAtClient(e)
		} else {
			s.replyAtClient(e)
		}
		return
	}
	nd := &s.nodes[e.dst]
	nd.received++
	switch e.pk {
	case pkRequest, pkForward:
		s.request(e)
	case pkReply:
		s.relay(e)
	case pkVerb:
		s.verbAtNode(e)
	}
}

// request is a request or a forward at a node: the window and reply
// cache first (the op's hop state stands for them), then a run.
func (s *sim) request(e event) {
	o := &s.ops[e.op]
	if o.gen != e.gen || o.done || int(e.hop) >= len(o.hops) {
		s.st.net.DuplicatesSuppressed++ // the caller is done with it: below the window, or answered
		return
	}
	h := &o.hops[e.hop]
	nd := &s.nodes[e.dst]
	if h.epoch != 0 && h.node == e.dst {
		if h.epoch == nd.epoch+1 {
			s.st.net.DuplicatesSuppressed++
			if h.done {
				s.st.net.FromCache++
				s.emit(e.dst, e.op, int(e.hop), true)
			}
			return
		}
		s.st.net.RerunsAfterRestart++ // the node lost its windows (spec/wire.md, Known gap)
	}
	h.node, h.epoch, h.done, h.fwdNode = e.dst, nd.epoch+1, false, -1
	s.env.hop = int(e.hop)
	out, ok := s.dispatch(e.dst, int(h.handler), o.payload, uint64(o.client)+uint64(len(s.nodes))+1, uint64(e.op)<<32|uint64(o.gen))
	if !ok {
		h.status, h.done = nicrt.StatusOverloaded, true
		s.emit(e.dst, e.op, int(e.hop), false)
		return
	}
	h.status, h.code = out.status, out.code
	if out.fwd >= 0 {
		h.fwdNode, h.fwdH = out.fwd, out.fwdH
	}
	if out.status != nicrt.StatusForwarded {
		o.reply = append(o.reply[:0], out.reply...)
	}
	s.heap.push(event{at: out.end, kind: evDone, pk: e.pk, dst: e.dst, op: e.op, gen: e.gen, hop: e.hop, core: out.core, epoch: nd.epoch})
}

// done ends a run on a core; the outcome leaves the node.
func (s *sim) done(e event) {
	nd := &s.nodes[e.dst]
	if nd.down || nd.epoch != e.epoch {
		return // lost with the node
	}
	nd.cores[e.core].queued--
	if e.pk == pkOneway {
		return
	}
	o := &s.ops[e.op]
	if o.gen != e.gen {
		return
	}
	h := &o.hops[e.hop]
	if h.node != e.dst || h.epoch != nd.epoch+1 {
		return
	}
	h.done = true
	if !o.done {
		s.emit(e.dst, e.op, int(e.hop), false)
	}
}

// emit sends what node n's run of hop made of the op: the forward to the
// next node, or the reply (to the client, or relayed to the node before);
// again from the reply cache for a retransmission (cached: a forward the
// handler made once, sent again).
func (s *sim) emit(n int32, opIdx int32, hop int, cached bool) {
	o := &s.ops[opIdx]
	h := &o.hops[hop]
	if h.status == nicrt.StatusForwarded {
		if hop+1 >= len(o.hops) {
			o.hops = append(o.hops, hopState{})
		}
		next := &o.hops[hop+1]
		next.handler = h.fwdH
		if !cached {
			s.st.net.Forwards++
		}
		s.send(n, h.fwdNode, pkForward, headerBytes+forwardPrefixBytes+len(o.payload), opIdx, o.gen, uint8(hop+1), o.try)
		return
	}
	o.status, o.code, o.replyLen = h.status, h.code, len(o.reply)
	size := headerBytes + len(o.reply)
	if s.net.relay && hop > 0 {
		s.send(n, o.hops[hop-1].node, pkReply, size, opIdx, o.gen, uint8(hop-1), o.try)
		return
	}
	s.send(n, o.client+int32(len(s.nodes)), pkReply, size, opIdx, o.gen, 0, o.try)
}

// relay passes a relayed reply on toward the client, if the node still
// keeps the forward it made (a restarted node does not).
func (s *sim) relay(e event) {
	o := &s.ops[e.op]
	if o.gen != e.gen || o.done {
		s.st.net.StaleReplies++
		return
	}
	h := &o.hops[e.hop]
	if h.node != e.dst || h.epoch != s.nodes[e.dst].epoch+1 {
		s.st.net.RelayUnmatched++
		return
	}
	s.st.net.Relays++
	size := headerBytes + o.replyLen
	if e.hop > 0 {
		s.send(e.dst, o.hops[e.hop-1].node, pkReply, size, e.op, e.gen, e.hop-1, e.try)
		return
	}
	s.send(e.dst, o.client+int32(len(s.nodes)), pkReply, size, e.op, e.gen, 0, e.try)
}

func (s *sim) replyAtClient(e event) {
	o := &s.ops[e.op]
	if o.gen != e.gen || o.done {
		s.st.net.StaleReplies++
		return
	}
	s.sample(o, e.try)
	s.finish(e.op, true)
}

// sample feeds the caller's round-trip estimator with the reply to o's
// request in progress, if it was sent once (Karn).
func (s *sim) sample(o *op, try uint8) {
	c := &s.client[o.client]
	if try == 1 && o.try == 1 {
		rtt := s.now - o.sent
		if c.srtt == 0 {
			c.srtt, c.rttvar = rtt, rtt/2
		} else {
			d := c.srtt - rtt
			if d < 0 {
				d = -d
			}
			c.rttvar = (3*c.rttvar + d) / 4
			c.srtt = (7*c.srtt + rtt) / 8
		}
	}
}

// finish ends an op: answered, or failed after its last try.
func (s *sim) finish(opIdx int32, answered bool) {
	s.stopTimer(opIdx)
	o := &s.ops[opIdx]
	o.done = true
	s.st.opDone(s, o, answered)
	s.finished++
	if s.progress != nil && (s.finished%s.progressEvery == 0 || s.finished == s.sc.Messages) {
		s.progress(s.finished, s.sc.Messages)
	}
	c := o.client
	o.gen++
	s.free = append(s.free, opIdx)
	s.heap.push(event{at: s.now, kind: evIssue, src: c})
}

func (s *sim) rto(c *client) int64 {
	r := s.sc.Retransmit
	t := int64(r.Timeout)
	if c.srtt > 0 {
		t = c.srtt + 4*c.rttvar
	}
	return min(max(t, int64(r.MinTimeout)), int64(r.MaxTimeout))
}

// timeout fires op i's timer: a retransmission, or the end of its tries.
func (s *sim) timeout(i int32) {
	o := &s.ops[i]
	if int(o.try) >= s.sc.Retransmit.MaxTries {
		s.st.net.Timeouts++
		s.finish(i, false)
		return
	}
	o.try++
	s.st.net.Retransmissions++
	o.wait = min(2*o.wait, int64(s.sc.Retransmit.MaxTimeout))
	if o.atClient {
		s.sendRoundTrip(i)
	} else {
		s.send(o.client+int32(len(s.nodes)), o.target, pkRequest, headerBytes+len(o.payload), i, o.gen, 0, o.try)
	}
	s.setTimer(i, s.now+o.wait)
}

// issue starts client c's next operation, if any remain.
func (s *sim) issue(c int) {
	if s.issued >= s.sc.Messages || (s.sc.Duration > 0 && s.now >= int64(s.sc.Duration)) {
		return
	}
	s.issued++
	var idx int32
	if n := len(s.free); n > 0 {
		idx = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.ops = append(s.ops, op{gen: 1, timerPos: -1})
		idx = int32(len(s.ops) - 1)
	}
	o := &s.ops[idx]
	o.client, o.try, o.done, o.start, o.sent = int32(c), 1, false, s.now, s.now
	o.status, o.code, o.replyLen, o.reply = 0, 0, 0, o.reply[:0]
	o.hops = append(o.hops[:0], hopState{fwdNode: -1})
	o.atClient, o.roundTrips = false, 0
	s.wl.next(s, o)
	o.hops[0].handler = o.handler
	o.wait = s.rto(&s.client[c])
	if s.runAtClient(idx) {
		if len(s.ops[idx].rts) > 0 {
			s.setTimer(idx, s.now+o.wait)
		}
		return
	}
	o.roundTrips = 1
	s.send(int32(c+len(s.nodes)), o.target, pkRequest, headerBytes+len(o.payload), idx, o.gen, 0, 1)
	s.setTimer(idx, s.now+o.wait)
}

// runOut is what a run made.
type runOut struct {
	status nicrt.Status
	code   int32
	reply  []byte // s.replyBuf: valid until the next run
	fwd    int32  // the node it forwarded to, else -1
	fwdH   int32
	core   int32
	end    int64
}

// loadNode makes node n's state on the first message: regions (filled by
// the workload's loader), cores and steering state.
func (s *sim) loadNode(n int32) {
	nd := &s.nodes[n]
	if nd.regions != nil {
		return
	}
	var total uint64
	for _, r := range s.prog.regions {
		total += (r.Size + 7) &^ 7
	}
	mem := alignedBytes(int(total))
	nd.regions = make([]vm.RegionMem, len(s.prog.regions))
	off := uint64(0)
	for i, r := range s.prog.regions {
		nd.regions[i] = vm.RegionMem{Data: mem[off : off+r.Size : off+r.Size], Writable: r.Writable}
		off += (r.Size + 7) &^ 7
	}
	nd.steer = make([]nicrt.SteerState, len(s.prog.handlers))
	nd.cores = make([]core, s.nNIC+s.nHost)
	s.st.loaded++
	s.wl.load(s, n)
}

// loadRun runs a handler on node n for its host's loader: no core time,
// no counters.
func (s *sim) loadRun(n int32, h int, payload []byte) ([]byte, error) {
	hd := &s.prog.handlers[h]
	inv := vm.Invocation{Entry: hd.entry, Handler: hd.objectID, SrcNode: uint64(n) + 1, Tenant: tenant,
		Request: payload, Reply: s.replyBuf[:hd.replySize], Regions: s.nodes[n].regions}
	s.env.begin(n, h, true)
	res, err := s.hostM.Invoke(s.prog.code, &inv)
	s.env.end()
	if err != nil {
		return nil, fmt.Errorf("sim: loading node %d: %s: %w", n, hd.name, err)
	}
	if res.Outcome != bytecode.OutcomeReply {
		return nil, fmt.Errorf("sim: loading node %d: %s failed with code %d", n, hd.name, res.Code)
	}
	return res.Reply, nil
}

// place picks the core for a message of handler h on node n, as
// nicrt.NIC's placement does (spec/nic.md, Placement and Steering); ok
// false: refused as overloaded.
func (s *sim) place(n int32, h int, src uint64) (ci int, place nicrt.Placement, ok bool) {
	nd := &s.nodes[n]
	hd := &s.prog.handlers[h]
	hash := nicrt.FlowHash(src, tenant)
	nic := int(hash % uint64(s.nNIC))
	host := -1
	if s.nHost > 0 {
		host = s.nNIC + int(hash%uint64(s.nHost))
	}
	hostOpen := host >= 0 && nd.hostLoad < 1
	depth := int32(s.cfg.RxQueueDepth)
	room := func(c int) bool { return waiting(&nd.cores[c], s.now) < depth }
	policy := s.cfg.Placement
	if policy == nicrt.PolicySteer && hd.fixed == nicrt.PlaceNIC {
		if !hostOpen {
			s.st.steer.NIC++
			return nic, nicrt.PlaceNIC, room(nic)
		}
		st := &nd.steer[h]
		costs := nicrt.SteerCosts(
			nicrt.ClassEstimate{Open: true, Backlog: s.backlog(&nd.cores[nic]), Service: st.Service(false, hd.bound[0])},
			nicrt.ClassEstimate{Open: true, Backlog: s.backlog(&nd.cores[host]), Service: st.Service(true, hd.bound[1])},
			nd.hostLoad)
		d := st.Decide(costs)
		s.shift.decided(s, n, d)
		if d.Probe {
			s.st.steer.Probes++
		}
		if d.Switched {
			s.st.steer.Switches++
		}
		first, fp, other, op := nic, nicrt.PlaceNIC, host, nicrt.PlaceHostSteer
		if d.Location == steer.Host {
			s.st.steer.Host++
			first, fp, other, op = host, nicrt.PlaceHostSteer, nic, nicrt.PlaceNIC
		} else {
			s.st.steer.NIC++
		}
		if room(first) {
			return first, fp, true
		}
		return other, op, room(other)
	}
	switch place = nicrt.PlaceFor(policy, hd.fixed, hostOpen, int(waiting(&nd.cores[nic], s.now)), s.cfg.SpillThreshold); place {
	case nicrt.PlaceNone:
		return 0, place, false
	case nicrt.PlaceNIC:
		return nic, place, room(nic)
	case nicrt.PlaceHostSpill:
		if room(host) {
			return host, place, true
		}
		return nic, nicrt.PlaceNIC, room(nic)
	}
	return host, place, room(host)
}

// waiting is the messages queued on c and not yet started.
func waiting(c *core, now int64) int32 {
	if c.queued > 0 && c.busyUntil > now {
		return c.queued - 1
	}
	return c.queued
}

// backlog is how long a message placed on c now would wait (ns): on the
// virtual clock, exactly the work it has taken and not finished.
func (s *sim) backlog(c *core) float64 { return float64(max(c.busyUntil-s.now, 0)) }

// dispatch places and runs a message of handler h on node n: the VM runs
// it now, and the core is busy for its modelled service time after what
// it has queued. ok false: refused (overloaded).
func (s *sim) dispatch(n int32, h int, payload []byte, src, reqID uint64) (out runOut, ok bool) {
	s.loadNode(n)
	nd := &s.nodes[n]
	hd := &s.prog.handlers[h]
	ci, place, ok := s.place(n, h, src)
	if !ok {
		return out, false
	}
	c := &nd.cores[ci]
	host := ci >= s.nNIC
	start := max(s.now, c.busyUntil)
	m := s.nicM
	if host {
		m = s.hostM
	}
	inv := vm.Invocation{Entry: hd.entry, Handler: hd.objectID, SrcNode: src, Tenant: tenant, RequestID: reqID,
		Request: payload, Reply: s.replyBuf[:hd.replySize], Regions: nd.regions}
	s.env.begin(n, h, host)
	s.env.at = start
	res, err := s.invoke(m, &inv)
	bulk := s.env.end()
	out.fwd = -1
	switch {
	case err != nil:
		out.status = nicrt.StatusFault
		if s.st.firstFault == nil {
			s.st.firstFault = fmt.Errorf("node %d: %s: %w", n, hd.name, err)
		}
	case res.Outcome == bytecode.OutcomeReply:
		out.status, out.reply = nicrt.StatusOK, res.Reply
	case res.Outcome == bytecode.OutcomeError:
		out.status, out.code = nicrt.StatusError, res.Code
	case res.Outcome == bytecode.OutcomeForwarded:
		out.status = nicrt.StatusForwarded
	}
	if res.Forward != nil && s.env.fwdNode >= 0 {
		out.fwd, out.fwdH = s.env.fwdNode, s.env.fwdH
		if out.status != nicrt.StatusForwarded { // forwarded, then faulted: the request has left all the same
			out.status = nicrt.StatusForwarded
		}
	}
	k := s.model.Insns(res.Insns, host) + hd.touches[b2i(host)] + bulk
	if host {
		k += s.model.Handoff(len(payload), len(out.reply))
	}
	nd.steer[h].Ran(host, k)
	service := k
	if host && nd.hostLoad > 0 {
		service *= nicrt.HostStretch(nd.hostLoad)
	}
	c.busyUntil = start + int64(service)
	c.queued++
	out.core, out.end = int32(ci), c.busyUntil
	nd.runs++
	s.st.ran(s, n, place, start, res.Insns, k)
	s.env.flushSends(out.end, nd.epoch)
	return out, true
}

// invoke runs the VM, turning a Go panic into a fault of the run as a
// core does.
func (s *sim) invoke(m *vm.Machine, inv *vm.Invocation) (res vm.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = vm.Result{}, &vm.Fault{Kind: vm.FaultInternal, Err: fmt.Errorf("%v", p)}
		}
	}()
	return m.Invoke(s.prog.code, inv)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sendOneway puts a run's one-way message on the wire when the run ends.
func (s *sim) sendOneway(e event) {
	w := &s.ow[e.op]
	nd := &s.nodes[w.src]
	if nd.down || nd.epoch != e.epoch {
		s.loseOneway(e.op)
		return
	}
	w.copies += int32(s.send(w.src, w.dst, pkOneway, headerBytes+programPrefixBytes+len(w.payload), e.op, w.gen, 0, 0))
	if w.copies == 0 {
		s.loseOneway(e.op)
	}
}

func (s *sim) arriveOneway(e event) {
	w := &s.ow[e.op]
	if w.gen != e.gen {
		s.st.net.DuplicatesSuppressed++
		return
	}
	w.copies--
	if s.reachable(e) {
		s.nodes[e.dst].received++
		if w.delivered {
			s.st.net.DuplicatesSuppressed++
		} else {
			w.delivered = true
			s.st.sends.Delivered++
			s.env.hop = -1 // a one-way message is not forwarded
			if out, ok := s.dispatch(e.dst, int(w.handler), w.payload, uint64(w.src)+1, uint64(e.op)<<32|uint64(w.gen)); !ok {
				s.st.sends.Refused++
			} else {
				// The run's end frees its core.
				s.heap.push(event{at: out.end, kind: evDone, pk: pkOneway, dst: e.dst, core: out.core, epoch: s.nodes[e.dst].epoch})
			}
			w = &s.ow[e.op] // the run's sends may have grown s.ow
		}
	}
	if w.copies == 0 {
		if !w.delivered {
			s.loseOneway(e.op)
			return
		}
		s.freeOneway(e.op)
	}
}

// loseOneway ends a one-way message no copy of arrived.
func (s *sim) loseOneway(i int32) {
	w := &s.ow[i]
	s.st.sends.Lost++
	s.wl.lost(w.payload, w.handler)
	s.freeOneway(i)
}

func (s *sim) newOneway() int32 {
	if n := len(s.owFree); n > 0 {
		i := s.owFree[n-1]
		s.owFree = s.owFree[:n-1]
		return i
	}
	s.ow = append(s.ow, oneway{gen: 1})
	return int32(len(s.ow) - 1)
}

func (s *sim) freeOneway(i int32) {
	w := &s.ow[i]
	w.gen++
	w.copies, w.delivered = 0, false
	s.owFree = append(s.owFree, i)
}

// scenarioEvent applies Scenario.Events[i].
func (s *sim) scenarioEvent(i int) {
	e := s.sc.Events[i]
	s.st.events.Applied++
	switch e.Kind {
	case "fail":
		e.Nodes.each(func(n int) {
			nd := &s.nodes[n]
			if nd.down {
				return
			}
			nd.down = true
			nd.epoch++
			nd.regions, nd.steer, nd.cores = nil, nil, nil // memory, windows and queues are gone
			s.st.events.Failures++
		})
	case "restart":
		e.Nodes.each(func(n int) {
			nd := &s.nodes[n]
			if nd.down {
				nd.down = false
				s.st.events.Restarts++
			}
		})
	case "partition":
		for j := range s.nodes {
			s.nodes[j].group = 0
		}
		for g, set := range e.Groups {
			set.each(func(n int) { s.nodes[n].group = uint16(g + 1) })
		}
	case "heal":
		for j := range s.nodes {
			s.nodes[j].group = 0
		}
	case "host_load":
		e.Nodes.each(func(n int) { s.nodes[n].hostLoad = e.HostLoad })
	}
}
