package server

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/internal/defaults"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// ServerConfig configures Serve. Keys is required; zero fields of the rest
// take their defaults.
type ServerConfig struct {
	// Node is this node's id: a request must name it as its Dst (a packet
	// sealed for another node and replayed here is dropped), and replies
	// carry it as their Src.
	Node uint32
	// Keys gives each tenant's MAC key (wire.Keys).
	Keys wire.Keys
	// MaxPayload is the payload limit of the codec (wire.Config); 0 means
	// wire.MaxPayload. Both ends must agree.
	MaxPayload int
	// Batch is how many datagrams one ReadBatch takes. Default 64.
	Batch int
	// MaxCredits caps the credits granted to one peer (spec/nic.md,
	// Credits). Default 256: well below wire.WindowSize, so that a caller
	// within its credits never falls out of the anti-replay window, and a
	// quarter of an rx queue, so that one peer steered to one core cannot
	// fill it.
	MaxCredits int
	// MaxRegisterBytes caps a region registered over the wire (the
	// register control op), so that a tenant's peer cannot make the node
	// allocate gigabytes with one packet; the host registers larger ones
	// with nicrt.NIC.Register. Default 64 MiB.
	MaxRegisterBytes uint64
	// MaxTenantRegisterBytes caps the bytes of the regions one tenant has
	// registered over the wire and not unregistered, host memory and
	// nicmem alike (both are this process's memory; nicmem is also within
	// Config.NICMemBytes). Default 256 MiB.
	MaxTenantRegisterBytes uint64
	// MaxNodeRegisterBytes caps the same for all tenants together.
	// Default 1 GiB.
	MaxNodeRegisterBytes uint64
	// MaxUploads caps the object uploads (install) one tenant has in
	// progress: begun and not complete. Default 4.
	MaxUploads int
	// MaxNodeUploads caps the uploads in progress of all tenants together,
	// so that they hold at most MaxNodeUploads × wire.MaxInstallSize
	// bytes. At the cap, a new upload of a tenant takes the place of the
	// idlest upload of a tenant with at least two more (spec/nic.md,
	// Control ops). Default 16.
	MaxNodeUploads int
	// UploadTimeout drops an upload that got no chunk for that long.
	// Default 10 s.
	UploadTimeout time.Duration
	// MaxControlOps caps the control ops of one tenant running at once
	// (each on a goroutine of its own: an install verifies, an uninstall
	// drains); one more is refused as overloaded. Default 8.
	MaxControlOps int
	// Peers is the first address book: the node id → address map that
	// send and forward use to reach other nodes (SetPeer and RemovePeer
	// change it later). Serve copies it.
	Peers map[uint32]transport.Addr
	// MaxPeers bounds the peer states (anti-replay window and reply cache,
	// about 40 KB each, one per source node, tenant and kind) the server
	// keeps; past it, the states idle longest are evicted, each leaving
	// only its window's high edge behind, below which that peer's ids stay
	// refused (spec/nic.md, Peer state). Default 4,096.
	MaxPeers int
	// MaxReplyCacheBytes caps the bytes the reply caches of all peer
	// states hold (sealed replies, and forwards kept for retransmission),
	// MaxTenantReplyCacheBytes those of one tenant's. A reply past either
	// is sent but not kept: a duplicate of its request is dropped
	// (drop.not_cached), never run again. Defaults 256 MiB and 64 MiB.
	MaxReplyCacheBytes, MaxTenantReplyCacheBytes uint64
}

// Server is the network side of a NIC: it reads requests from its rx
// queues, opens them with the tenant's key, runs each at most once
// (anti-replay window and reply cache per peer and tenant), submits it to
// the NIC and sends the reply. spec/nic.md, Network side.
type Server struct {
	nic        *nicrt.NIC
	cfg        ServerConfig
	queues     []*rxQueue
	coreCodecs []*wire.Codec // by Reply.Core: done callbacks run on cores
	// dirty[core] lists the tx queues holding replies that core added;
	// only whoever runs that core touches it (Done, Flush), with
	// core.busy held.
	dirty [][]*transport.TxQueue

	peersMu sync.RWMutex
	peers   map[peerKey]*peer
	floors  map[peerKey]uint64 // evicted peers: ids at or below refused
	// cacheBytes counts the bytes the reply caches hold, in all and by
	// tenant (tenantCache under peersMu; each peer holds its tenant's).
	cacheBytes  atomic.Int64
	tenantCache map[uint32]*atomic.Int64

	// book is the address book (node id → address), copy on write under
	// bookMu, read lock-free by the cores that send and forward.
	bookMu sync.Mutex
	book   atomic.Pointer[map[uint32]transport.Addr]
	// sealers seal what handlers send and forward (on any core); sendID
	// numbers the one-way messages this node sends.
	sealers sync.Pool // *wire.Codec
	sendID  atomic.Uint64

	ctlMu       sync.Mutex
	uploads     map[uploadKey]*upload // object uploads being assembled
	wireRegions map[uint32]wireRegion // regions registered over the wire, by id
	controlOps  map[uint32]int        // control ops running, by tenant
	now         func() time.Time      // the uploads' clock: time.Now; tests set their own
	active      atomic.Int64          // peers that sent a request in the last activity period

	pool     sync.Pool // *inflight
	inflight sync.WaitGroup
	rxDone   sync.WaitGroup
	stop     chan struct{}
	closing  atomic.Bool
	closed   sync.Once
	ctr      serverCounters

	payloadLimit int // the codec's payload limit
}

// peer is the state kept per peerKey: the anti-replay window and the
// reply cache over the ids inside it.
type peer struct {
	mu    sync.Mutex
	win   wire.Window
	bytes *atomic.Int64 // the reply cache bytes of the peer's tenant (Server.tenantCache)
	// cache is the reply cache by request id mod WindowSize, in chunks
	// made as ids reach them (slot): a peer that sent a few requests holds
	// one chunk, not the whole cache (spec/nic.md, Peer state).
	cache [wire.WindowSize / cacheChunk]*[cacheChunk]cacheSlot
	seen  atomic.Bool  // a request since the last activity count
	idle  atomic.Int64 // activity periods without a request (countActive)
	// Under mu: requests submitted and not done; evicted once the server
	// dropped the state (a request that finds it so looks the key up
	// again); floor, when hasFloor, the high edge of an evicted window of
	// the same key: ids at or below it are refused.
	running  int
	evicted  bool
	hasFloor bool
	floor    uint64
}

// peerKey names a peer state. Requests a caller sends directly and those
// another node forwarded for it (via) are windowed apart, as are the
// one-way messages a node sends: each stream has its own id counter.
type peerKey struct {
	src, tenant, via uint32
	kind             peerKind
}

type peerKind uint8

const (
	peerDirect    peerKind = iota // the caller's own requests and control packets
	peerForwarded                 // requests node via forwarded for src
	peerOneWay                    // one-way messages (send) from src
)

// cacheChunk is how many reply cache slots are allocated together.
const cacheChunk = 64

// slot returns the reply cache slot of id, making its chunk if need be;
// pr.mu is held.
func (pr *peer) slot(id uint64) *cacheSlot {
	i := id % wire.WindowSize
	c := pr.cache[i/cacheChunk]
	if c == nil {
		c = new([cacheChunk]cacheSlot)
		pr.cache[i/cacheChunk] = c
	}
	return &c[i%cacheChunk]
}

// cached returns the reply cache slot of id if its chunk exists, else
// nil; pr.mu is held.
func (pr *peer) cached(id uint64) *cacheSlot {
	i := id % wire.WindowSize
	if c := pr.cache[i/cacheChunk]; c != nil {
		return &c[i%cacheChunk]
	}
	return nil
}

// cacheSlot is the reply cache entry of one request id.
type cacheSlot struct {
	id    uint64
	state slotState
	dgram []byte // the sealed reply (slotDone) or forwarded request (slotForwarded)
}

type slotState uint8

const (
	slotEmpty     slotState = iota
	slotRunning             // submitted; the reply will come
	slotDone                // dgram holds the reply
	slotForwarded           // the handler forwarded it: another node answers
	slotNotCached           // answered or forwarded, but past the reply cache's bytes: not kept
)

// rxQueue is one rx queue: a Conn, the goroutine reading it, its codec
// and its receive buffers, each owned by an inflight until the request it
// holds is done.
type rxQueue struct {
	s     *Server
	conn  transport.Conn
	codec *wire.Codec
	tx    *transport.TxQueue
	ps    []transport.Packet
	slots []*inflight // slots[i].buf is ps[i].Buf
}

// inflight is a request between Submit and its end: the sink the NIC
// hands the outcome to (Done), and sends and forwards through (Send,
// Forward); it owns the receive buffer its payload aliases.
type inflight struct {
	s    *Server
	q    *rxQueue
	buf  []byte
	peer *peer
	addr transport.Addr // where the reply goes: the sender, the original caller of a forwarded request, or the node that relays it
	hdr  wire.Header
	// relay: addr is the forwarding node's, which passes the reply on to
	// the caller (the reply carries FlagForwarded; spec/wire.md, Routing).
	relay bool
	// oneway: a one-way message, answered by nothing. fwd, when the
	// handler forwarded the request: the sealed datagram, for fwdTo.
	oneway bool
	fwd    []byte
	fwdTo  transport.Addr
}

// activityPeriod is how often the server counts its active peers for the
// credit policy.
const activityPeriod = 100 * time.Millisecond

// Serve starts answering requests for nic on conns, one reading goroutine
// per conn (rx queue; transport.ListenUDPQueues opens several on one port).
// The Server owns the conns from now on: Close closes them. It does not
// own nic.
func Serve(nic *nicrt.NIC, conns []transport.Conn, cfg ServerConfig) (*Server, error) {
	s, err := newServer(nic, conns, cfg)
	if err != nil {
		return nil, err
	}
	for _, q := range s.queues {
		s.rxDone.Go(q.loop)
	}
	go s.countActive()
	return s, nil
}

// withDefaults fills the zero fields with their defaults (spec/nic.md,
// Network side: ServerConfig defaults).
func (c ServerConfig) withDefaults() ServerConfig {
	defaults.Set(&c.Batch, 64)
	defaults.Set(&c.MaxCredits, 256)
	defaults.Set(&c.MaxRegisterBytes, 64<<20)
	defaults.Set(&c.MaxTenantRegisterBytes, 256<<20)
	defaults.Set(&c.MaxNodeRegisterBytes, 1<<30)
	defaults.Set(&c.MaxUploads, 4)
	defaults.Set(&c.MaxNodeUploads, 16)
	defaults.Set(&c.UploadTimeout, 10*time.Second)
	defaults.Set(&c.MaxControlOps, 8)
	defaults.Set(&c.MaxPeers, 4096)
	defaults.Set(&c.MaxReplyCacheBytes, 256<<20)
	defaults.Set(&c.MaxTenantReplyCacheBytes, 64<<20)
	return c
}

// newServer builds a server without starting its goroutines.
func newServer(nic *nicrt.NIC, conns []transport.Conn, cfg ServerConfig) (*Server, error) {
	if len(conns) == 0 {
		return nil, errors.New("server: serve: no conns")
	}
	cfg = cfg.withDefaults()
	if cfg.Batch < 1 || cfg.MaxCredits < 1 || cfg.MaxCredits > 0xffff {
		return nil, fmt.Errorf("server: serve: Batch %d and MaxCredits %d must be positive (credits at most 65535)", cfg.Batch, cfg.MaxCredits)
	}
	if cfg.MaxPeers < 1 {
		return nil, fmt.Errorf("server: serve: MaxPeers %d must be positive", cfg.MaxPeers)
	}
	if cfg.MaxUploads < 1 || cfg.MaxNodeUploads < cfg.MaxUploads || cfg.UploadTimeout < 0 || cfg.MaxControlOps < 1 {
		return nil, fmt.Errorf("server: serve: MaxUploads %d, MaxNodeUploads %d and MaxControlOps %d must be positive, MaxNodeUploads at least MaxUploads; UploadTimeout %v not negative",
			cfg.MaxUploads, cfg.MaxNodeUploads, cfg.MaxControlOps, cfg.UploadTimeout)
	}
	for node, addr := range cfg.Peers {
		if !addr.IsValid() {
			return nil, fmt.Errorf("server: serve: Peers[%d]: invalid address %v", node, addr)
		}
	}
	wcfg := wire.Config{Keys: cfg.Keys, MaxPayload: cfg.MaxPayload}
	newCodec := func() (*wire.Codec, error) { return wire.NewCodec(wcfg) }
	probe, err := newCodec()
	if err != nil {
		return nil, fmt.Errorf("server: serve: %w", err)
	}
	s := &Server{
		nic: nic, cfg: cfg, peers: map[peerKey]*peer{}, floors: map[peerKey]uint64{}, tenantCache: map[uint32]*atomic.Int64{},
		uploads: map[uploadKey]*upload{}, wireRegions: map[uint32]wireRegion{}, controlOps: map[uint32]int{}, now: time.Now,
		stop: make(chan struct{}), payloadLimit: probe.MaxPayload(),
	}
	book := make(map[uint32]transport.Addr, len(cfg.Peers))
	for node, addr := range cfg.Peers {
		book[node] = addr
	}
	s.book.Store(&book)
	s.cfg.Peers = nil // the book is the server's now
	s.sealers.New = func() any { c, _ := newCodec(); return c }
	s.sendID.Store(uint64(time.Now().UnixNano()))
	bufSize := wire.HeaderSize + probe.MaxPayload()
	s.pool.New = func() any {
		return &inflight{s: s, buf: make([]byte, bufSize)}
	}
	for range nic.Cores() {
		c, _ := newCodec()
		s.coreCodecs = append(s.coreCodecs, c)
	}
	s.dirty = make([][]*transport.TxQueue, nic.Cores())
	for _, conn := range conns {
		c, _ := newCodec()
		q := &rxQueue{s: s, conn: conn, codec: c, tx: transport.NewTxQueue(conn, bufSize)}
		q.ps = make([]transport.Packet, cfg.Batch)
		q.slots = make([]*inflight, cfg.Batch)
		for i := range q.slots {
			q.take(i)
		}
		s.queues = append(s.queues, q)
	}
	return s, nil
}

// Held names the server as the Flusher of the replies in holds back.
func (in *inflight) Held() nicrt.Flusher { return in.s }

// Flush sends the replies core held back: its queue ran empty, so no
// more are coming from it for now.
func (s *Server) Flush(core int) {
	for i, tx := range s.dirty[core] {
		tx.Flush()
		s.dirty[core][i] = nil
	}
	s.dirty[core] = s.dirty[core][:0]
}

// take gives slot i of the queue a fresh inflight and its buffer.
func (q *rxQueue) take(i int) {
	in := q.s.pool.Get().(*inflight)
	in.q = q
	q.slots[i] = in
	q.ps[i].Buf = in.buf
}

// LocalAddrs returns the addresses of the server's rx queues.
func (s *Server) LocalAddrs() []transport.Addr {
	var out []transport.Addr
	for _, q := range s.queues {
		out = append(out, q.conn.LocalAddr())
	}
	return out
}

// Close stops reading, waits until every request already submitted has
// been answered, and closes the conns. It does not close the NIC.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		s.closing.Store(true)
		for _, q := range s.queues {
			q.conn.SetReadDeadline(time.Unix(1, 0)) // wake the reader
		}
		s.rxDone.Wait()
		s.inflight.Wait()
		for _, q := range s.queues {
			q.tx.Drain() // replies a core held back
		}
		close(s.stop)
		for _, q := range s.queues {
			if e := q.conn.Close(); e != nil && err == nil && !errors.Is(e, transport.ErrClosed) {
				err = e
			}
		}
	})
	return err
}

// loop reads batches until the server closes.
func (q *rxQueue) loop() {
	s := q.s
	for !s.closing.Load() {
		n, err := q.conn.ReadBatch(q.ps)
		if err != nil {
			if s.closing.Load() || errors.Is(err, transport.ErrClosed) {
				return
			}
			if !transport.IsTimeout(err) {
				s.ctr.rxErrors.Add(1)
				time.Sleep(time.Millisecond) // a persistent error must not spin
			}
			continue
		}
		// If it handed requests to cores' goroutines (their cores were
		// busy), let those run before the next read, which would most
		// often find nothing and cost a system call on the requests' way.
		// Otherwise read at once: measured faster (spec/nic.md, Measured:
		// the network path), most likely because a yield lets the callers
		// just answered run on this thread in turn rather than on the
		// other CPU beside the next batch.
		if q.handleBatch(n) {
			runtime.Gosched()
		}
	}
}

// handleBatch handles ps[:n] with the tx queue held, so that the replies
// ready by the end of each sender's run of datagrams leave together: when
// the sender changes, the replies gathered so far are written at once
// (if there are senderFlush of them), so that a caller gets its answers
// while the rx loop still works on the next caller's requests
// (spec/nic.md, Measured: the network path).
// It reports whether it handed any request to a core's goroutine.
func (q *rxQueue) handleBatch(n int) (queued bool) {
	s := q.s
	s.ctr.rxPackets.Add(uint64(n))
	s.ctr.rxBatches.Add(1)
	held := q.tx.Hold()
	for i := range n {
		if held && i > 0 && q.ps[i].Addr != q.ps[i-1].Addr {
			q.tx.FlushHeld(senderFlush)
		}
		submitted, handed := q.handle(i)
		if submitted {
			q.take(i) // the buffer went with the request
		}
		queued = queued || handed
	}
	if held {
		q.tx.Release()
	}
	return queued
}

// senderFlush is how many replies must be waiting for a change of sender
// in a batch to write them: callers that send one request each, interleaved,
// still share system calls (at most one per senderFlush replies).
const senderFlush = 4

// handle opens datagram i and acts on it. It reports whether the datagram
// was submitted, so that its buffer now belongs to the request, and
// whether it went to another goroutine (a core's, or a control op's).
func (q *rxQueue) handle(i int) (submitted, handed bool) {
	s := q.s
	p := &q.ps[i]
	pkt, err := q.codec.Decode(p.Buf[:p.N])
	if err != nil {
		s.ctr.Count(err)
		return false, false
	}
	if isRelay(&pkt) { // addressed to the caller, not to this node
		q.relay(&pkt, p.Buf[:p.N])
		return false, false
	}
	if pkt.Dst != s.cfg.Node && !describesAnyNode(&pkt) {
		s.ctr.wrongDst.Add(1)
		return false, false
	}
	switch pkt.Type {
	case wire.TypeRequest, wire.TypeControl:
	case wire.TypeCredit:
		s.ctr.creditPackets.Add(1)
		return false, false
	default:
		s.ctr.unexpectedType.Add(1)
		return false, false
	}
	if pkt.Flags&wire.FlagRetransmit != 0 {
		s.ctr.retransmitted.Add(1)
	}
	// Route prefixes (spec/wire.md, Routing): where the reply goes, which
	// window, which handler.
	var route wire.Route
	payload := pkt.Payload
	key := peerKey{src: pkt.Src, tenant: pkt.Tenant}
	replyTo, relay := p.Addr, false
	if pkt.Flags&(wire.FlagForwarded|wire.FlagProgram|wire.FlagOneWay) != 0 {
		if pkt.Type != wire.TypeRequest {
			s.ctr.CountMalformed(wire.MalformedRoute)
			return false, false
		}
		route, payload, err = wire.SplitRoute(&pkt)
		if err != nil {
			s.ctr.CountMalformed(wire.MalformedRoute)
			return false, false
		}
		switch {
		case pkt.Flags&wire.FlagOneWay != 0:
			key.kind = peerOneWay
		case route.Forwarded:
			key.kind, key.via = peerForwarded, route.Via
			replyTo, relay = s.forwardReplyTo(pkt.Src, &route, p.Addr)
		}
	}
	id := pkt.RequestID
	var pr *peer
	for {
		if pr = s.peer(key); pr == nil {
			s.ctr.peersFull.Add(1)
			return false, false
		}
		pr.mu.Lock()
		if !pr.evicted {
			break
		}
		pr.mu.Unlock() // evicted meanwhile: its successor has the floor
	}
	pr.seen.Store(true)
	if pr.hasFloor && id <= pr.floor {
		pr.mu.Unlock()
		s.ctr.replaysEvicted.Add(1)
		return false, false
	}
	verdict := pr.win.Observe(id)
	var slot *cacheSlot
	if verdict != wire.IDTooOld {
		slot = pr.slot(id)
	}
	switch verdict {
	case wire.IDNew:
		slot.id, slot.state = id, slotRunning
		pr.running++
		pr.mu.Unlock()
	case wire.IDDuplicate:
		switch {
		case key.kind == peerOneWay:
			pr.mu.Unlock()
			s.ctr.duplicatesOneWay.Add(1)
		case slot.id == id && slot.state == slotDone:
			b := q.resealRepeat(slot.dgram)
			pr.mu.Unlock()
			q.tx.Push(replyTo, b)
			s.ctr.cacheHits.Add(1)
		case slot.id == id && slot.state == slotRunning:
			pr.mu.Unlock()
			s.ctr.duplicatesRunning.Add(1)
		case slot.id == id && slot.state == slotForwarded && len(slot.dgram) > 0:
			// Forward it again, as it was, to the node it went to (its
			// dst, at its address now): the next node's window and reply
			// cache see a duplicate and answer from its cache.
			fwd, _ := wire.Parse(slot.dgram, q.codec.MaxPayload()) // sealed here: it parses
			to, ok := s.Peer(fwd.Dst)
			if !ok { // the node left the address book meanwhile
				pr.mu.Unlock()
				s.ctr.duplicatesForwarded.Add(1)
				break
			}
			b := append(q.tx.Buffer(), slot.dgram...)
			pr.mu.Unlock()
			q.tx.Push(to, b)
			s.ctr.reforwarded.Add(1)
		case slot.id == id && slot.state == slotForwarded:
			pr.mu.Unlock()
			s.ctr.duplicatesForwarded.Add(1)
		case slot.id == id && slot.state == slotNotCached:
			pr.mu.Unlock()
			s.ctr.duplicatesNotCached.Add(1)
		default:
			pr.mu.Unlock()
			s.ctr.replaysUncached.Add(1)
		}
		return false, false
	default: // wire.IDTooOld
		pr.mu.Unlock()
		s.ctr.replaysTooOld.Add(1)
		return false, false
	}
	in := q.slots[i]
	in.peer, in.addr, in.relay, in.hdr, in.oneway = pr, replyTo, relay, pkt.Header, key.kind == peerOneWay
	s.inflight.Add(1)
	if pkt.Type == wire.TypeControl {
		s.ctr.control.Add(1)
		if why := s.startControl(pkt.Tenant); why != "" {
			s.ctr.controlRefused.Add(1)
			in.answerControl(q.codec, nil, nicrt.StatusOverloaded, why)
			return true, false
		}
		go in.runControl(pkt.Payload)
		return true, true
	}
	handler := pkt.Handler
	if route.HasProgram {
		// The target's own id of the handler the sender's copy of the
		// program named; 0 (an unknown handler, refused by the NIC and
		// answered so) when this node has no such program or handler.
		if handler = s.resolveProgram(uint64(pkt.Tenant), route.Program, pkt.Handler); handler == 0 {
			s.ctr.unknownProgram.Add(1)
		}
	}
	if in.oneway {
		s.ctr.oneWay.Add(1)
	} else {
		s.ctr.requests.Add(1)
	}
	msg := nicrt.Message{
		Tenant: uint64(pkt.Tenant), Handler: handler, RequestID: id,
		SrcNode: uint64(pkt.Src), Payload: payload,
	}
	// Inline: run it here if its core is idle, rather than hand it to the
	// core's goroutine.
	return true, s.nic.SubmitInline(&msg, in)
}

// resealRepeat returns a copy of the cached reply dgram (sealed here) in
// a buffer of the tx queue, with FlagRetransmit set (sealed again if it
// was not): a repeated reply, so that the caller can tell the first try's
// own answer from it and know a retransmission spurious when both come
// (spec/wire.md, Flags).
func (q *rxQueue) resealRepeat(dgram []byte) []byte {
	pkt, err := wire.Parse(dgram, q.codec.MaxPayload())
	if err == nil && pkt.Flags&wire.FlagRetransmit == 0 {
		h := pkt.Header
		h.Flags |= wire.FlagRetransmit
		if b, err := q.codec.Encode(q.tx.Buffer(), &h, pkt.Payload); err == nil {
			return b
		}
	}
	return append(q.tx.Buffer(), dgram...)
}

// repeatFlag is the FlagRetransmit of a reply to a request whose run came
// from a try that carried it: the reply is not the first try's own.
func repeatFlag(req *wire.Header) wire.Flags { return req.Flags & wire.FlagRetransmit }

// peer returns the state of key, creating it; nil when the server holds
// MaxPeers states and none may be evicted.
func (s *Server) peer(key peerKey) *peer {
	s.peersMu.RLock()
	pr := s.peers[key]
	s.peersMu.RUnlock()
	if pr != nil {
		return pr
	}
	s.peersMu.Lock()
	defer s.peersMu.Unlock()
	if pr = s.peers[key]; pr != nil {
		return pr
	}
	if len(s.peers) >= s.cfg.MaxPeers && !s.evictLocked() {
		return nil
	}
	pr = &peer{bytes: s.tenantCache[key.tenant]}
	if pr.bytes == nil {
		pr.bytes = new(atomic.Int64)
		s.tenantCache[key.tenant] = pr.bytes
	}
	if f, ok := s.floors[key]; ok {
		pr.hasFloor, pr.floor = true, f
	}
	s.peers[key] = pr
	s.active.Add(1) // counted at once, until the next count
	return pr
}

// evictLocked drops the peer states idle longest (no request in the
// current activity period, none running), up to a sixteenth of MaxPeers
// at once so that the scan is paid rarely. Each leaves its window's high
// edge in floors: the ids it saw can never run again. It reports whether
// it freed any; s.peersMu is held.
func (s *Server) evictLocked() bool {
	type cand struct {
		key  peerKey
		pr   *peer
		idle int64
	}
	var cands []cand
	for k, pr := range s.peers {
		if !pr.seen.Load() {
			cands = append(cands, cand{k, pr, pr.idle.Load()})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].idle > cands[j].idle })
	want, freed := max(s.cfg.MaxPeers/16, 1), 0
	for _, c := range cands {
		if freed == want {
			break
		}
		pr := c.pr
		pr.mu.Lock()
		if pr.running > 0 || pr.seen.Load() {
			pr.mu.Unlock()
			continue
		}
		pr.evicted = true
		s.uncacheAllLocked(pr)
		floor, ok := pr.win.Top()
		if pr.hasFloor {
			floor, ok = max(floor, pr.floor), true
		}
		pr.mu.Unlock()
		if ok {
			s.floors[c.key] = floor
		}
		delete(s.peers, c.key)
		freed++
	}
	s.ctr.peersEvicted.Add(uint64(freed))
	return freed > 0
}

// countActive counts the peers that sent requests in each activity
// period, for the credit policy.
func (s *Server) countActive() {
	t := time.NewTicker(activityPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.countActiveOnce()
		s.expireUploads()
	}
}

// countActiveOnce ends an activity period: it counts the peers that sent
// a request in it and ages the others, for eviction.
func (s *Server) countActiveOnce() {
	var n int64
	s.peersMu.RLock()
	for _, pr := range s.peers {
		if pr.seen.Swap(false) {
			n++
			pr.idle.Store(0)
		} else {
			pr.idle.Add(1)
		}
	}
	s.peersMu.RUnlock()
	s.active.Store(n)
}

// credits is the grant a reply carries (spec/nic.md, Credits): the NIC
// cores' free queue room shared out among the active peers, at least 1 and
// at most MaxCredits.
func (s *Server) credits() uint16 {
	share := s.nic.QueueSpace() / int(max(s.active.Load(), 1))
	return uint16(min(max(share, 1), s.cfg.MaxCredits))
}

// Done is a request's end: it seals the reply, keeps it in the reply
// cache and sends it. It runs where the request ran: on its core's
// goroutine, or on the rx goroutine, which runs a request inline when its
// core is idle (the reply then leaves with the batch's), or which got a
// rejection at Submit.
func (in *inflight) Done(r nicrt.Reply) {
	s, q := in.s, in.q
	if in.oneway { // nobody waits for it: count how it ended
		in.cache(slotDone, nil)
		if r.Status != nicrt.StatusOK {
			s.ctr.oneWayFailed.Add(1)
		}
		in.release()
		return
	}
	if in.fwd != nil {
		// The handler forwarded it (and returned ReturnForwarded, or
		// faulted after forwarding: the request has left all the same).
		// Keep the sealed forward, so that a retransmission of the
		// caller's goes on to the same node unchanged, and send it.
		b := in.fwd
		in.fwd = nil
		in.cache(slotForwarded, b)
		s.ctr.forwarded.Add(1)
		in.send(r.Core, in.fwdTo, b)
		in.release()
		return
	}
	codec := q.codec
	if r.Core >= 0 {
		codec = s.coreCodecs[r.Core]
	}
	req := &in.hdr
	h := wire.Header{
		Type: wire.TypeReply, Flags: repeatFlag(req), Credits: s.credits(), Tenant: req.Tenant, Handler: req.Handler,
		RequestID: req.RequestID, Src: s.cfg.Node, Dst: req.Src,
	}
	if in.relay {
		h.Flags |= wire.FlagForwarded
	}
	var payload []byte
	switch {
	case r.Status == nicrt.StatusOK:
		payload = r.Data
	case r.Status == nicrt.StatusError && r.Code > 0:
		// The payload names the failing site, file:line:col, when the
		// object's line table has it (spec/nic.md, Error replies).
		h.Type, h.Status = wire.TypeErrorReply, wire.Status(r.Code)
		if r.Pos.Line > 0 {
			pos := r.Pos.String()
			payload = []byte(pos[:min(len(pos), codec.MaxPayload())])
		}
	case r.Status == nicrt.StatusForwarded: // through an Outbox of the NIC's Config
		in.cache(slotForwarded, nil)
		s.ctr.forwarded.Add(1)
		in.release()
		return
	default:
		st := r.Status
		if st == nicrt.StatusError { // a code outside 1 … 2^31-1 cannot travel as one
			st = nicrt.StatusFault
		}
		h.Type, h.Status = wire.TypeErrorReply, wire.StatusRuntime+wire.Status(st)
		if r.Err != nil && st == nicrt.StatusFault {
			msg := r.Err.Error()
			if r.Pos.Line > 0 {
				msg = r.Pos.String() + ": " + msg
			}
			payload = []byte(msg[:min(len(msg), codec.MaxPayload())])
		}
	}
	b, err := codec.Encode(q.tx.Buffer(), &h, payload)
	if err != nil {
		// Only a reply over the payload limit gets here.
		s.ctr.encodeErrors.Add(1)
		h.Type, h.Status = wire.TypeErrorReply, wire.StatusRuntime+wire.Status(nicrt.StatusTooLarge)
		b, _ = codec.Encode(b[:0], &h, nil)
	}
	if h.Type == wire.TypeReply {
		s.ctr.replies.Add(1)
	} else {
		s.ctr.errorReplies.Add(1)
	}
	in.cache(slotDone, b)
	in.send(r.Core, in.addr, b)
	in.release()
}

// send sends b (from q.tx.buffer) to to from where the request ran: a core
// holds it back until its queue runs empty (Flush), so that the replies
// of a burst leave in one WriteBatch rather than one system call each.
func (in *inflight) send(core int, to transport.Addr, b []byte) {
	s, q := in.s, in.q
	if core < 0 {
		q.tx.Push(to, b)
		return
	}
	q.tx.Add(to, b)
	d := s.dirty[core]
	if len(d) == 0 || d[len(d)-1] != q.tx {
		s.dirty[core] = append(d, q.tx)
	}
}

// cache records the request's end in its peer's reply cache, unless the
// slot went to a newer id meanwhile. The slot's buffer is kept for the
// next id of the slot; a reply larger than it needs the bytes within
// MaxReplyCacheBytes and MaxTenantReplyCacheBytes, or is not kept
// (slotNotCached).
func (in *inflight) cache(state slotState, dgram []byte) {
	s, pr, id := in.s, in.peer, in.hdr.RequestID
	pr.mu.Lock()
	slot := pr.slot(id)
	pr.running--
	if slot.id == id && slot.state == slotRunning {
		slot.state = state
		if len(dgram) > cap(slot.dgram) {
			s.uncache(pr, slot)
			if !s.reserveCache(pr, len(dgram)) {
				slot.state = slotNotCached
				s.ctr.notCached.Add(1)
			} else {
				slot.dgram = make([]byte, 0, len(dgram))
			}
		}
		if slot.state != slotNotCached {
			slot.dgram = append(slot.dgram[:0], dgram...)
		}
	}
	pr.mu.Unlock()
}

// reserveCache takes n bytes of the reply cache for pr's tenant, if both
// limits allow.
func (s *Server) reserveCache(pr *peer, n int) bool {
	node, tenant := s.cacheBytes.Add(int64(n)), pr.bytes.Add(int64(n))
	if uint64(node) > s.cfg.MaxReplyCacheBytes || uint64(tenant) > s.cfg.MaxTenantReplyCacheBytes {
		s.cacheBytes.Add(-int64(n))
		pr.bytes.Add(-int64(n))
		return false
	}
	return true
}

// uncache gives back the bytes of slot's buffer; pr.mu is held.
func (s *Server) uncache(pr *peer, slot *cacheSlot) {
	if n := int64(cap(slot.dgram)); n > 0 {
		s.cacheBytes.Add(-n)
		pr.bytes.Add(-n)
		slot.dgram = nil
	}
}

// uncacheAllLocked gives back the bytes of an evicted state's reply
// cache; pr.mu is held.
func (s *Server) uncacheAllLocked(pr *peer) {
	for _, c := range pr.cache {
		if c != nil {
			for i := range c {
				s.uncache(pr, &c[i])
			}
		}
	}
}

func (in *inflight) release() {
	s := in.s
	in.q, in.peer, in.hdr, in.relay = nil, nil, wire.Header{}, false
	in.oneway, in.fwd, in.fwdTo = false, nil, transport.Addr{}
	s.pool.Put(in)
	s.inflight.Done()
}

// describesAnyNode reports whether pkt is a describe op sent to dst 0: the
// one packet a node takes without its id, so that a caller that knows only
// an address can learn it (spec/wire.md, Control plane).
func describesAnyNode(pkt *wire.Packet) bool {
	return pkt.Dst == 0 && pkt.Type == wire.TypeControl && wire.Op(pkt.Handler) == wire.OpDescribe
}
