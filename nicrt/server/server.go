package server

import (
	"errors"
	"fmt"
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
	// Front, when set, is the tier in front of the server on its port
	// (the XDP tier): the server shares the windows and reply cache of
	// caller streams with it, tells it of what the control plane installs
	// and registers, and shows its counters (Front). nil: none.
	Front Front
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
	// vias lists, per caller and tenant, the nodes whose forwards of
	// its requests have states in peers (peerForwarded keys), so that a
	// relayed reply finds the forward it answers whether or not the
	// forwarding node is in the address book (relay); under peersMu,
	// one entry per such state.
	vias map[viaKey][]uint32
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
		nic: nic, cfg: cfg, peers: map[peerKey]*peer{}, floors: map[peerKey]uint64{}, vias: map[viaKey][]uint32{}, tenantCache: map[uint32]*atomic.Int64{},
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
