package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// Config configures a Node. The zero Config is a node on 127.0.0.1 with
// a kernel-chosen port, tenant 1 and the development key, alone.
type Config struct {
	// Name names the node in the cluster; default "naam-" and the address
	// it listens on.
	Name string
	// Listen is the UDP address active messages arrive on; default
	// "127.0.0.1:0" (port 0: the kernel picks one; Node.Addr tells).
	Listen string
	// Advertise is the IP address other nodes reach this one at, which
	// membership gossips; needed (with membership) when Listen is an
	// unspecified address such as 0.0.0.0, which names no host to others.
	Advertise string
	// ID is the node id on the wire; 0 derives it from Name (FNV-1a).
	// Ids must be unique in a cluster.
	ID uint32
	// Tenant is the tenant this node's regions, programs and calls belong
	// to; default 1.
	Tenant uint32
	// Secret is the tenant's MAC key, shared by the cluster, at least 16
	// bytes (32 random bytes recommended). Empty means DevSecret, which is
	// public: fine on loopback, never on a network.
	Secret []byte
	// Tenants gives the keys (each at least 16 bytes) of other tenants
	// the node serves besides Tenant: their callers (host.Dial with the
	// tenant and its key) register regions, install programs and call
	// them over the wire, each tenant within its own regions, programs
	// and control-plane limits. The node's own calls stay Tenant's.
	Tenants map[uint32][]byte
	// MAC is the algorithm of the tenants' keys (wire.MACAlg): default
	// HMAC-SHA256; the XDP tier answers SipHash-2-4-128 tenants only, and
	// passes the others' packets up (spec/xdp.md). Callers must use the
	// same.
	MAC wire.MACAlg
	// XDP names a network interface to attach the XDP tier to (package
	// xdp): the node answers there, in the kernel, the requests for the
	// handlers it places on the NIC and the verbs, with its regions in
	// memory the kernel shares; the rest passes up to the node on the same
	// port. Start fails, with ErrXDPUnavailable and the reason, where the
	// tier cannot run (no privilege, no XDP, no such interface). "": none.
	XDP string
	// XDPGeneric attaches the tier in generic (skb) mode instead of the
	// driver's native mode, for devices without native XDP.
	XDPGeneric bool
	// Queues is the number of rx queues (SO_REUSEPORT sockets); default 1.
	Queues int
	// NIC configures the modelled NIC (nicrt.Config; zero fields take its
	// defaults).
	NIC nicrt.Config
	// Client tunes the calls to peers (timeouts, tries, outstanding
	// requests); Node, Server and Keys are set by the node.
	Client caller.ClientConfig
	// Server sets the limits of the node's server (peer states, credits,
	// what the control plane may register and upload: server.ServerConfig;
	// zero fields take its defaults); Node, Keys and Peers are set by the
	// node.
	Server server.ServerConfig

	// Gossip is the address membership listens on (TCP and UDP), e.g.
	// "127.0.0.1:0". Empty with no Join: no membership, peers are dialed
	// by address.
	Gossip string
	// Join lists gossip addresses of cluster members to join through.
	Join []string
	// Peers lists active-message addresses of nodes to dial at start, for
	// a cluster without membership: each is dialed (again every half
	// second until it answers), and its node id becomes a destination of
	// handlers' send and forward.
	Peers []string

	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// DevSecret is the key a Config without a Secret uses (peer.DevSecret).
// It is in the source: anyone can forge its packets.
var DevSecret = peer.DevSecret

// Node is one machine's NAAM runtime: its NIC, the server answering
// active messages, its regions and programs, and its peers.
type Node struct {
	cfg Config
	log *slog.Logger
	nic *nicrt.NIC
	srv *server.Server
	// front is the XDP tier in front of srv (Config.XDP), or nil.
	front *xdpFront
	addr  netip.AddrPort
	// advertise is the address gossiped to other nodes: addr, or
	// Config.Advertise with addr's port.
	advertise netip.AddrPort
	keys      wire.KeyMap
	tenant    uint32

	mu      sync.Mutex
	peers   map[netip.AddrPort]*Peer
	dialing map[netip.AddrPort]*dialWait
	closed  bool

	ml     *memberlist.Memberlist
	mlDown bool // ml was shut down (tests' crashes); under closeO
	meta   *metaState

	stopWatch, watchDone chan struct{} // watchPrograms

	bg      sync.WaitGroup // dialStatic goroutines
	closing chan struct{}  // closed when Close begins

	membersMu sync.Mutex
	members   map[string]Member // what the events said, by name
	closeO    sync.Once
	cerr      error
}

type dialWait struct {
	done chan struct{}
	p    *Peer
	err  error
}

// Start starts a node: its NIC, its rx queues on Listen and, when asked,
// membership.
func Start(cfg Config) (*Node, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Tenant == 0 {
		cfg.Tenant = 1
	}
	if cfg.Queues == 0 {
		cfg.Queues = 1
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	secret := cfg.Secret
	if len(secret) == 0 {
		secret = DevSecret
		log.Warn("using the development key: packets can be forged by anyone who has the source", "tenant", cfg.Tenant)
	}
	key, err := wire.NewKeyAlg(cfg.MAC, secret)
	if err != nil {
		return nil, fmt.Errorf("host: secret: %w", err)
	}
	keys := wire.KeyMap{cfg.Tenant: key}
	for t, s := range cfg.Tenants {
		if t == 0 || t == cfg.Tenant {
			return nil, fmt.Errorf("host: Config.Tenants: tenant %d is not another tenant than the node's (%d)", t, cfg.Tenant)
		}
		if keys[t], err = wire.NewKeyAlg(cfg.MAC, s); err != nil {
			return nil, fmt.Errorf("host: Config.Tenants[%d]: %w", t, err)
		}
	}
	listen, err := netip.ParseAddrPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("host: listen address %q: %w", cfg.Listen, err)
	}
	// The NIC's cores tell the node of failed runs, to log them
	// (failureLog), and then Config.NIC.Failed if it is set.
	var flog atomic.Pointer[failureLog]
	ncfg := cfg.NIC
	var front *xdpFront
	if cfg.XDP != "" {
		if front, err = newXDPFront(&cfg, log); err != nil {
			return nil, err
		}
		ncfg.Memory = front.memory
	}
	ncfg.Failed = func(f nicrt.Failure) {
		if l := flog.Load(); l != nil {
			l.failed(f)
		}
		if cfg.NIC.Failed != nil {
			cfg.NIC.Failed(f)
		}
	}
	nic, err := nicrt.New(ncfg)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	conns, err := transport.ListenUDPQueues(transport.UDPConfig{Addr: listen}, cfg.Queues)
	if err != nil {
		nic.Close()
		return nil, fmt.Errorf("host: listen on %v: %w", listen, err)
	}
	addr := conns[0].LocalAddr()
	advertise := addr
	if cfg.Advertise != "" {
		ip, err := netip.ParseAddr(cfg.Advertise)
		if err != nil {
			closeAll(conns)
			nic.Close()
			return nil, fmt.Errorf("host: advertise address %q: %w", cfg.Advertise, err)
		}
		advertise = netip.AddrPortFrom(ip, addr.Port())
	} else if addr.Addr().IsUnspecified() && (cfg.Gossip != "" || len(cfg.Join) > 0) {
		closeAll(conns)
		nic.Close()
		return nil, fmt.Errorf("host: listening on %v, other nodes need an address to reach this one: set Advertise (naam node --advertise IP)", addr)
	}
	if cfg.Name == "" {
		cfg.Name = "naam-" + addr.String()
	}
	if cfg.ID == 0 {
		cfg.ID = NodeID(cfg.Name)
	}
	n := &Node{
		cfg: cfg, log: log.With("node", cfg.Name), nic: nic, addr: addr, advertise: advertise,
		keys: keys, tenant: cfg.Tenant,
		peers: map[netip.AddrPort]*Peer{}, dialing: map[netip.AddrPort]*dialWait{},
		closing: make(chan struct{}),
	}
	flog.Store(newFailureLog(n))
	tconns := make([]transport.Conn, len(conns))
	for i, c := range conns {
		tconns[i] = c
	}
	scfg := cfg.Server
	scfg.Node, scfg.Keys, scfg.Peers = cfg.ID, n.keys, nil
	if front != nil {
		if err := front.open(cfg.ID, addr, n.keys, scfg.MaxPayload, nic.Config().MaxReply, n.log); err != nil {
			closeAll(conns)
			nic.Close()
			return nil, err
		}
		n.front, scfg.Front = front, front
	}
	n.srv, err = server.Serve(nic, tconns, scfg)
	if err != nil {
		front.close()
		closeAll(conns)
		nic.Close()
		return nil, fmt.Errorf("host: %w", err)
	}
	if front != nil {
		if err := front.attach(n.srv); err != nil {
			n.srv.Close()
			front.close()
			nic.Close()
			return nil, err
		}
	}
	if cfg.Gossip != "" || len(cfg.Join) > 0 {
		if err := n.startMembership(secret); err != nil {
			n.srv.Close()
			nic.Close()
			return nil, err
		}
	}
	for _, addr := range cfg.Peers {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("host: peer address %q: %w", addr, err)
		}
		n.bg.Add(1)
		go n.dialStatic(ap)
	}
	n.log.Info("node started", "addr", addr.String(), "id", cfg.ID, "tenant", cfg.Tenant, "queues", cfg.Queues, "gossip", n.GossipAddr())
	return n, nil
}

func closeAll(conns []*transport.UDPConn) {
	for _, c := range conns {
		c.Close()
	}
}

// NodeID derives a node id from a name: FNV-1a, never 0.
func NodeID(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	if id := h.Sum32(); id != 0 {
		return id
	}
	return 1
}

// gossipKey derives memberlist's AES key from the tenant secret, so that
// only holders of the secret can join or read the gossip.
func gossipKey(secret []byte) []byte {
	sum := sha256.Sum256(append([]byte("naam memberlist\x00"), secret...))
	return sum[:]
}

// Name is the node's name in the cluster.
func (n *Node) Name() string { return n.cfg.Name }

// ID is the node's id on the wire.
func (n *Node) ID() uint32 { return n.cfg.ID }

// Addr is the UDP address active messages reach the node at.
func (n *Node) Addr() netip.AddrPort { return n.addr }

// Tenant is the tenant the node acts for.
func (n *Node) Tenant() uint32 { return n.tenant }

// MAC is the algorithm of the node's tenant keys (Config.MAC).
func (n *Node) MAC() wire.MACAlg { return n.keys[n.tenant].Alg() }

// NIC is the node's modelled NIC, for its counters and configuration.
func (n *Node) NIC() *nicrt.NIC { return n.nic }

// Server is the node's network side, for its counters.
func (n *Node) Server() *server.Server { return n.srv }

// RegionOptions are a region's rights and placement, for Node.Register
// and Peer.Register alike (nicrt.RegionOptions).
type RegionOptions = nicrt.RegionOptions

// Region is memory the node registered: the application reads and writes
// its bytes directly, handlers through their objects' regions, peers
// through the RDMA verbs. Concurrent access is the application's to
// coordinate, as with RDMA; the verbs' CAS and FETCH-ADD and the VM's
// atomics are real atomics on the same memory.
type Region struct {
	r *nicrt.Region
}

// Bytes is the region's memory, 8-byte aligned.
func (r *Region) Bytes() []byte { return r.r.Bytes() }

// Name is the name objects link the region by.
func (r *Region) Name() string { return r.r.Name }

// Size is the region's size in bytes.
func (r *Region) Size() uint64 { return r.r.Size() }

// Register allocates a zeroed region of size bytes called name for the
// node's tenant.
func (n *Node) Register(name string, size uint64, opts RegionOptions) (*Region, error) {
	r, err := n.nic.Register(uint64(n.tenant), name, size, opts)
	if err != nil {
		return nil, fmt.Errorf("host: register %q: %w", name, err)
	}
	n.log.Info("region registered", "region", name, "size", size, "writable", opts.Writable, "nicmem", opts.NICMem)
	if n.front != nil {
		n.front.Registered(r)
	}
	return &Region{r}, nil
}

// Program is an installed program.
type Program struct {
	p *nicrt.Program
}

// Handlers lists the program's handlers with their ids on this node.
func (p *Program) Handlers() []nicrt.HandlerInfo { return p.p.Handlers() }

// Source is the program's source file name.
func (p *Program) Source() string { return p.p.Source }

// InstallOptions are the choices of one install, for Node.InstallWith
// and Peer.InstallWith alike: region bindings (nicrt.InstallOptions).
type InstallOptions = nicrt.InstallOptions

// Install verifies obj and makes its handlers callable, linking its
// regions to the node's by name (register them first). It is InstallWith
// with the zero InstallOptions.
func (n *Node) Install(obj *bytecode.Object) (*Program, error) {
	return n.InstallWith(obj, InstallOptions{})
}

// InstallWith is Install with opts: opts.Regions links object regions to
// registered regions of other names.
func (n *Node) InstallWith(obj *bytecode.Object, opts InstallOptions) (*Program, error) {
	p, err := n.nic.InstallWith(uint64(n.tenant), obj, opts)
	if err != nil {
		return nil, fmt.Errorf("host: install %s: %w", obj.Source, err)
	}
	n.log.Info("program installed", "source", obj.Source, "program", p.ID, "handlers", len(obj.Handlers), "max_insns", p.Report.MaxInsns)
	if n.front != nil {
		n.front.Installed(p, obj)
	}
	n.updateMeta()
	return &Program{p}, nil
}

// Uninstall removes p once its requests in flight are done.
func (n *Node) Uninstall(p *Program) error {
	if n.front != nil {
		n.front.Uninstalling(p.p)
	}
	if err := n.nic.Uninstall(p.p); err != nil {
		return fmt.Errorf("host: uninstall: %w", err)
	}
	n.updateMeta()
	return nil
}

// Load reads an object file (.nobj, from naamc build).
func Load(r io.Reader) (*bytecode.Object, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	obj, err := bytecode.UnmarshalObject(b)
	if err != nil {
		return nil, fmt.Errorf("host: load: %w", err)
	}
	return obj, nil
}

// Dial returns the peer at addr ("127.0.0.1:7000", "node1.example:7000"),
// asking it what it has. One Peer per address is kept and shared: calls
// to one node from this node go through one client, so request ids never
// collide.
func (n *Node) Dial(ctx context.Context, addr string) (*Peer, error) {
	ap, err := ResolveAddr(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("host: dial: %w", err)
	}
	return n.dial(ctx, ap)
}

// ResolveAddr turns "HOST:PORT" into an address: HOST is an IP address,
// or a name it looks up (peer.ResolveAddr).
func ResolveAddr(ctx context.Context, addr string) (netip.AddrPort, error) {
	return peer.ResolveAddr(ctx, addr)
}

// Ready says whether the node serves: nil from Start until Close begins,
// then why not.
func (n *Node) Ready() error {
	select {
	case <-n.closing:
		return fmt.Errorf("host: node %s is shutting down: %w", n.cfg.Name, ErrClosed)
	default:
		return nil
	}
}

func (n *Node) dial(ctx context.Context, ap netip.AddrPort) (*Peer, error) {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	for {
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			return nil, fmt.Errorf("host: dial %v: %w", ap, ErrClosed)
		}
		if p := n.peers[ap]; p != nil {
			n.mu.Unlock()
			return p, nil
		}
		if w := n.dialing[ap]; w != nil {
			n.mu.Unlock()
			select {
			case <-w.done:
				// Another caller's dial ended. Its own deadline is no
				// answer for this one: try again under ctx.
				if w.err != nil && !errors.Is(w.err, context.DeadlineExceeded) && !errors.Is(w.err, context.Canceled) {
					return nil, w.err
				}
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		w := &dialWait{done: make(chan struct{})}
		n.dialing[ap] = w
		n.mu.Unlock()

		p, err := peer.DialConfig(ctx, ap, peer.Config{Node: n.cfg.ID, Tenant: n.tenant, Keys: n.keys, Client: n.cfg.Client, OnClose: n.forget})
		n.mu.Lock()
		delete(n.dialing, ap)
		var late *Peer // dialed after Close began: closed below, not kept
		if err == nil {
			if n.closed {
				err, late = fmt.Errorf("host: dial %v: %w", ap, ErrClosed), p
			} else {
				n.peers[ap] = p
			}
		}
		w.p, w.err = p, err
		close(w.done)
		n.mu.Unlock()
		if late != nil {
			late.Close() // calls n.forget, which takes n.mu
		}
		if err != nil {
			return nil, err
		}
		n.route(p.NodeID(), ap)
		n.log.Debug("peer dialed", "peer", ap.String(), "peer_id", p.NodeID())
		return p, nil
	}
}

// dialStatic dials a configured peer until it answers or the node
// closes.
func (n *Node) dialStatic(ap netip.AddrPort) {
	defer n.bg.Done()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := n.dial(ctx, ap)
		cancel()
		if err == nil || errors.Is(err, ErrClosed) {
			return
		}
		n.log.Debug("static peer not answering yet", "peer", ap.String(), "err", err)
		select {
		case <-n.closing:
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// forget drops a closed peer from the cache, so the next Dial makes a new
// one.
func (n *Node) forget(p *Peer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.peers[p.Addr()] == p {
		delete(n.peers, p.Addr())
	}
}

// Close shuts the node down gracefully: it leaves the cluster, stops
// taking requests, lets the ones accepted finish and answers them, closes
// its peers and stops the NIC.
func (n *Node) Close() error {
	n.closeO.Do(func() {
		close(n.closing)
		n.bg.Wait()
		n.mu.Lock()
		n.closed = true
		peers := make([]*Peer, 0, len(n.peers))
		for _, p := range n.peers {
			peers = append(peers, p)
		}
		n.mu.Unlock()
		var errs []error
		if n.ml != nil {
			errs = append(errs, n.stopMembership())
		}
		errs = append(errs, n.srv.Close(), n.front.close())
		for _, p := range peers {
			errs = append(errs, p.Close())
		}
		errs = append(errs, n.nic.Close())
		n.cerr = errors.Join(errs...)
		n.log.Info("node stopped")
	})
	return n.cerr
}

// Dial connects to the node at addr without running a node of one's own,
// as a tool does (`naam call`): node is the caller's id on the wire (0:
// random), secret the tenant's key (empty: DevSecret). It is peer.Dial: a
// program that only calls links host/peer alone.
func Dial(ctx context.Context, addr string, tenant uint32, secret []byte, node uint32) (*Peer, error) {
	return peer.Dial(ctx, addr, tenant, secret, node)
}
