package server

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// routeSrc is the program of the send and forward tests, installed on
// every node of a cluster: add is the FETCH-ADD-like handler the others
// reach, hop forwards to add on n2, hop2 to hop on n1 (so add runs on n2
// after two forwards), hop_id forwards to a handler given by its id, and
// notify sends bump, a one-way message, to n1.
const routeSrc = `
region counters: [u64; 4] rw

handler add(n1: u64, n2: u64, by: u64) -> u64 {
    return atomic_add(&counters[0], by)
}

handler hop(n1: u64, n2: u64, by: u64) -> u64 {
    forward(n2, add)
}

handler hop2(n1: u64, n2: u64, by: u64) -> u64 {
    forward(n1, hop)
}

handler hop_id(n1: u64, n2: u64, id: u64) -> u64 {
    forward(n2, id as u32)
}

handler bump(by: u64) {
    atomic_add(&counters[1], by)
}

handler notify(n1: u64, n2: u64, by: u64) -> bool {
    return send(n1, bump, by)
}
`

func routeObject(t testing.TB) *bytecode.Object {
	t.Helper()
	obj, err := compiler.Compile(lang.NewFileSet(), "route.naam", []byte(routeSrc))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// routeReq is the request of add, hop, hop2, hop_id and notify.
func routeReq(n1, n2, by uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, n1)
	b = binary.LittleEndian.AppendUint64(b, n2)
	return binary.LittleEndian.AppendUint64(b, by)
}

// cluster is a few nodes that know each other's addresses, each serving
// its NIC with routeSrc installed for tenantA.
type cluster struct {
	keys  wire.KeyMap
	nodes []*clusterNode
	// listen opens a conn for a node (i) or a client (i < 0).
	listen func(i int) transport.Conn
}

type clusterNode struct {
	id   uint32
	nic  *nicrt.NIC
	srv  *Server
	addr transport.Addr
	reg  *nicrt.Region
	prog *nicrt.Program
}

const firstClusterNode = 101

func newCluster(t testing.TB, n int, listen func(i int) transport.Conn) *cluster {
	t.Helper()
	c := &cluster{keys: testKeys(t), listen: listen}
	obj := routeObject(t)
	for i := range n {
		nd := &clusterNode{id: uint32(firstClusterNode + i), nic: newNIC(t, nicrt.Config{})}
		nd.reg = register(t, nd.nic, tenantA, "counters", 32, nicrt.RegionOptions{Writable: true})
		nd.prog = install(t, nd.nic, tenantA, obj)
		conn := listen(i)
		srv, err := Serve(nd.nic, []transport.Conn{conn}, ServerConfig{Node: nd.id, Keys: c.keys})
		if err != nil {
			t.Fatal(err)
		}
		nd.srv, nd.addr = srv, conn.LocalAddr()
		t.Cleanup(func() { srv.Close() })
		c.nodes = append(c.nodes, nd)
	}
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			if err := a.srv.SetPeer(b.id, b.addr); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}

func memCluster(t testing.TB, n int, f transporttest.Faults) *cluster {
	net := transporttest.NewNetwork(transporttest.MemConfig{})
	seed := uint64(0)
	return newCluster(t, n, func(i int) transport.Conn {
		conn, err := net.Listen(transport.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		if f == (transporttest.Faults{}) {
			return conn
		}
		seed++
		l, err := transporttest.NewLossy(conn, transporttest.LossyConfig{Seed: seed, Send: f, Recv: f})
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func udpCluster(t testing.TB, n int) *cluster {
	return newCluster(t, n, func(int) transport.Conn {
		conn, err := transport.ListenUDP(transport.UDPConfig{ReadBuffer: 4 << 20, WriteBuffer: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	})
}

// client dials node i of the cluster as caller node.
func (c *cluster) client(t testing.TB, i int, node uint32, cfg caller.ClientConfig) *caller.Client {
	t.Helper()
	cfg.Keys, cfg.Node, cfg.Server = c.keys, node, c.nodes[i].id
	cl, err := caller.Dial(c.listen(-1), c.nodes[i].addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func (c *cluster) handler(t testing.TB, name string) uint32 { return id(t, c.nodes[0].prog, name) }

// waitFor polls cond for up to 5 s: a one-way message has no reply to
// wait for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func word(r *nicrt.Region, i int) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.Bytes()[8*i])))
}

// TestNetForward: forward and send over the wire between three nodes, on
// the in-memory network and on loopback UDP.
func TestNetForward(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t testing.TB, n int) *cluster
	}{
		{"mem", func(t testing.TB, n int) *cluster { return memCluster(t, n, transporttest.Faults{}) }},
		{"udp", udpCluster},
	} {
		t.Run(tc.name, func(t *testing.T) { testForward(t, tc.make(t, 3)) })
	}
}

func testForward(t *testing.T, c *cluster) {
	a, b, cc := c.nodes[0], c.nodes[1], c.nodes[2]
	cl := c.client(t, 0, 1, caller.ClientConfig{})
	ctx := context.Background()
	call := func(name string, n1, n2, by uint64) ([]byte, error) {
		return cl.Call(ctx, tenantA, c.handler(t, name), routeReq(n1, n2, by))
	}

	// A forwards to add on B, which answers the caller directly.
	for i := range uint64(3) {
		got, err := call("hop", 0, uint64(b.id), 5)
		if err != nil || len(got) != 8 || u64(got) != 5*i {
			t.Fatalf("hop %d: %x %v", i, got, err)
		}
	}
	if word(b.reg, 0) != 15 || word(a.reg, 0) != 0 {
		t.Errorf("counters: A %d, B %d; want 0, 15", word(a.reg, 0), word(b.reg, 0))
	}
	// A → B (hop) → C (add): two forwards, C answers.
	if got, err := call("hop2", uint64(b.id), uint64(cc.id), 7); err != nil || u64(got) != 0 {
		t.Fatalf("hop2: %x %v", got, err)
	}
	if word(cc.reg, 0) != 7 || word(b.reg, 0) != 15 {
		t.Errorf("after hop2: B %d, C %d", word(b.reg, 0), word(cc.reg, 0))
	}
	if st := cl.Stats(); st.OtherNode != 4 || st.Replies != 4 {
		t.Errorf("client: %d replies, %d from other nodes; want 4, 4", st.Replies, st.OtherNode)
	}
	if sa, sb := a.srv.Stats(), b.srv.Stats(); sa.Forwards != 4 || sa.Forwarded != 4 || sb.Forwards != 1 || sb.Replies != 3 || sa.Replies != 0 {
		t.Errorf("A forwards %d forwarded %d replies %d; B forwards %d replies %d", sa.Forwards, sa.Forwarded, sa.Replies, sb.Forwards, sb.Replies)
	}

	// send: one-way, no reply; bump runs on B.
	if got, err := call("notify", uint64(b.id), 0, 3); err != nil || len(got) != 1 || got[0] != 1 {
		t.Fatalf("notify: %x %v", got, err)
	}
	waitFor(t, "bump on B", func() bool { return word(b.reg, 1) == 3 })
	if sa, sb := a.srv.Stats(), b.srv.Stats(); sa.Sends != 1 || sb.OneWay != 1 || sb.OneWayFailed != 0 {
		t.Errorf("sends %d, one-way received %d (failed %d)", sa.Sends, sb.OneWay, sb.OneWayFailed)
	}

	// Unknown node: send returns false, forward fails with FailForward;
	// both counted.
	if got, err := call("notify", 999, 0, 1); err != nil || len(got) != 1 || got[0] != 0 {
		t.Errorf("notify to an unknown node: %x %v", got, err)
	}
	var he *caller.HandlerError
	if _, err := call("hop", 0, 999, 1); !errors.As(err, &he) || he.Code != bytecode.FailForward {
		t.Errorf("hop to an unknown node: %v", err)
	}
	if _, err := call("hop", 0, 1<<40, 1); !errors.As(err, &he) || he.Code != bytecode.FailForward {
		t.Errorf("hop to a node id over 32 bits: %v", err)
	}
	if sa := a.srv.Stats(); sa.SendsRefused != 1 || sa.ForwardsRefused != 2 || sa.UnknownNode != 3 {
		t.Errorf("refused: sends %d forwards %d unknown node %d", sa.SendsRefused, sa.ForwardsRefused, sa.UnknownNode)
	}
	// A handler index the program does not have: B answers the caller
	// "unknown handler".
	if _, err := call("hop_id", 0, uint64(b.id), 77); !errors.Is(err, nicrt.ErrUnknownHandler) {
		t.Errorf("forward to handler 77: %v", err)
	}
	if sb := b.srv.Stats(); sb.UnknownProgram != 1 {
		t.Errorf("B unknown program: %d", sb.UnknownProgram)
	}
	// A forward from a message that did not come over the wire is refused.
	r := a.nic.Call(&nicrt.Message{Tenant: tenantA, Handler: c.handler(t, "hop"), RequestID: 1, SrcNode: 1, Payload: routeReq(0, uint64(b.id), 1)})
	if r.Status != nicrt.StatusError || uint32(r.Code) != bytecode.FailForward {
		t.Errorf("local forward: %v %d", r.Status, r.Code)
	}
	// The program is gone from C: C answers the caller "unknown handler",
	// and a one-way message to it is counted as failed.
	if err := cc.nic.Uninstall(cc.prog); err != nil {
		t.Fatal(err)
	}
	if _, err := call("hop", 0, uint64(cc.id), 1); !errors.Is(err, nicrt.ErrUnknownHandler) {
		t.Errorf("forward to a node without the program: %v", err)
	}
	if got, err := call("notify", uint64(cc.id), 0, 1); err != nil || got[0] != 1 {
		t.Errorf("notify C: %x %v", got, err)
	}
	waitFor(t, "C's one-way failure", func() bool { return cc.srv.Stats().OneWayFailed == 1 })
	if sc := cc.srv.Stats(); sc.UnknownProgram != 2 || sc.OneWay != 1 {
		t.Errorf("C: unknown program %d, one-way %d", sc.UnknownProgram, sc.OneWay)
	}
	// RemovePeer: B is unknown to A from now on.
	a.srv.RemovePeer(b.id)
	if _, ok := a.srv.Peer(b.id); ok {
		t.Error("B still known")
	}
	if _, err := call("hop", 0, uint64(b.id), 1); !errors.As(err, &he) || he.Code != bytecode.FailForward {
		t.Errorf("hop to a removed peer: %v", err)
	}
	if err := a.srv.SetPeer(5, transport.Addr{}); err == nil {
		t.Error("SetPeer took an invalid address")
	}
}

// TestNetForwardRetransmit: the caller's first request reaches A, whose
// forward reaches B, but B's reply is lost: the caller retransmits to A,
// which forwards again unchanged; B answers from its reply cache. add ran
// once.
func TestNetForwardRetransmit(t *testing.T) {
	c := memCluster(t, 2, transporttest.Faults{})
	a, b := c.nodes[0], c.nodes[1]
	dropped := atomic.Int64{}
	cfg := caller.ClientConfig{Keys: c.keys, Node: 1, Server: a.id, Timeout: 20 * time.Millisecond}
	conn := &dropConn{Conn: c.listen(-1), drop: func(p []byte) bool {
		return dropped.Load() == 0 && dropped.Add(1) == 1 // the first reply
	}}
	cl, err := caller.Dial(conn, a.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, err := cl.Call(context.Background(), tenantA, c.handler(t, "hop"), routeReq(0, uint64(b.id), 9))
	if err != nil || u64(got) != 0 {
		t.Fatalf("hop: %x %v", got, err)
	}
	if word(b.reg, 0) != 9 {
		t.Errorf("B's counter %d, want 9 (add ran once)", word(b.reg, 0))
	}
	sa, sb := a.srv.Stats(), b.srv.Stats()
	if cl.Stats().Retransmits != 1 || sa.Reforwarded != 1 || sa.Forwards != 1 || sb.CacheHits != 1 || sb.Requests != 1 {
		t.Errorf("retransmits %d, A reforwarded %d forwards %d, B cache hits %d requests %d",
			cl.Stats().Retransmits, sa.Reforwarded, sa.Forwards, sb.CacheHits, sb.Requests)
	}
}

// TestNetForwardLossy: FETCH-ADD-like calls forwarded A → B through lossy
// links everywhere (loss, duplication, reordering on every node's and
// caller's conn) leave B's counter exactly at the number of calls, every
// old value seen once.
func TestNetForwardLossy(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	c := memCluster(t, 2, transporttest.Faults{Drop: 0.1, Duplicate: 0.05, Reorder: 0.05})
	a, b := c.nodes[0], c.nodes[1]
	seen := make([]atomic.Bool, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range 2 {
		cl := c.client(t, 0, uint32(1+i), lossyLink(caller.ClientConfig{MaxTries: 30}))
		for range 4 {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					got, err := cl.Call(context.Background(), tenantA, c.handler(t, "hop"), routeReq(0, uint64(b.id), 1))
					switch {
					case err != nil:
						t.Errorf("hop: %v", err)
						return
					case u64(got) >= uint64(n) || seen[u64(got)].Swap(true):
						t.Errorf("old value %d twice or out of range", u64(got))
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if got := word(b.reg, 0); got != uint64(n) {
		t.Errorf("B's counter %d after %d calls", got, n)
	}
	sa, sb := a.srv.Stats(), b.srv.Stats()
	t.Logf("A: requests %d forwards %d reforwarded %d; B: requests %d cache hits %d dup-running %d",
		sa.Requests, sa.Forwards, sa.Reforwarded, sb.Requests, sb.CacheHits, sb.DuplicatesRunning)
	if sb.Requests != uint64(n) || sa.Forwards != uint64(n) {
		t.Errorf("B ran %d, A forwarded %d, want %d each", sb.Requests, sa.Forwards, n)
	}
}

// TestNetPeerEviction: with MaxPeers 4, a fifth peer evicts the state idle
// longest; the evicted peer's old ids (a replay of one that ran, and an
// older one that never came) are refused, its newer ids run; while every
// state was used in the current activity period a new peer is dropped.
func TestNetPeerEviction(t *testing.T) {
	// The server without its activity ticker: the test ends the periods
	// (countActiveOnce), so that a tick cannot land between its steps.
	tn := &testNet{net: transporttest.NewNetwork(transporttest.MemConfig{}), keys: testKeys(t), nic: newNIC(t, nicrt.Config{})}
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	tn.addr = conn.LocalAddr()
	if tn.srv, err = newServer(tn.nic, []transport.Conn{conn}, ServerConfig{Node: serverNode, Keys: tn.keys, MaxPeers: 4}); err != nil {
		t.Fatal(err)
	}
	for _, q := range tn.srv.queues {
		tn.srv.rxDone.Go(q.loop)
	}
	t.Cleanup(func() { tn.srv.Close() })
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	p := tn.raw(t)
	fetchAdd := func(src uint32, id uint64) []byte {
		return seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: nicrt.HandlerFetchAdd,
			RequestID: id, Src: src, Dst: serverNode}, wire.AppendFetchAdd(nil, reg.Ref(), 0, 1))
	}
	// exchange sends b and waits for its reply.
	exchange := func(b []byte) {
		t.Helper()
		p.send(b)
		ps := make([]transport.Packet, 1)
		ps[0].Buf = make([]byte, 2048)
		p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := p.conn.ReadBatch(ps); err != nil {
			t.Fatalf("no reply: %v", err)
		}
	}
	for src := uint32(1); src <= 4; src++ {
		exchange(fetchAdd(src, 1000))
	}
	// Every state was used in this period: a fifth peer cannot get one.
	p.send(fetchAdd(5, 1000))
	waitFor(t, "peers full", func() bool { return tn.srv.Stats().PeersFull == 1 })
	// Peer 1 stays idle for two periods, the others for one.
	tn.srv.countActiveOnce()
	for src := uint32(2); src <= 4; src++ {
		exchange(fetchAdd(src, 1001))
	}
	tn.srv.countActiveOnce()
	exchange(fetchAdd(5, 1000)) // evicts peer 1
	st := tn.srv.Stats()
	if st.PeersEvicted != 1 || st.Floors != 1 || st.Peers != 4 || counter(reg) != 8 {
		t.Fatalf("evicted %d, floors %d, peers %d, counter %d", st.PeersEvicted, st.Floors, st.Peers, counter(reg))
	}
	// Peer 1 again: a replay of id 1000 and an id below it that never came
	// are refused (no reply, the FETCH-ADD does not run); 1001 runs.
	tn.srv.countActiveOnce() // so that peer 1's return may evict another
	p.send(fetchAdd(1, 1000))
	p.send(fetchAdd(1, 999))
	waitFor(t, "replays refused", func() bool { return tn.srv.Stats().ReplaysEvicted == 2 })
	exchange(fetchAdd(1, 1001))
	if got := counter(reg); got != 9 {
		t.Errorf("counter %d, want 9", got)
	}
	if st := tn.srv.Stats(); st.PeersEvicted != 2 || st.Peers != 4 {
		t.Errorf("evicted %d, peers %d", st.PeersEvicted, st.Peers)
	}
}

// TestNetNoReflection: a request never makes a node send to an address
// it has not authenticated as a peer (spec/wire.md, Routing: no
// reflection). A forwarded request's reply goes to the reply address in
// its prefix only if that is the caller's own address in the target's
// address book; otherwise the forwarding node relays it. A stranger named
// as the reply address of forged forwards and relayed replies never
// receives a datagram.
func TestNetNoReflection(t *testing.T) {
	t.Run("mem", func(t *testing.T) { testNoReflection(t, memCluster(t, 3, transporttest.Faults{})) })
	t.Run("udp", func(t *testing.T) { testNoReflection(t, udpCluster(t, 3)) })
}

func testNoReflection(t *testing.T, c *cluster) {
	a, b, cc := c.nodes[0], c.nodes[1], c.nodes[2]
	stranger := c.listen(-1)
	ctx := context.Background()
	hop, hop2 := c.handler(t, "hop"), c.handler(t, "hop2")

	// A caller the nodes do not know: B answers through A, which relays.
	// Both callers' first ids are set, so that forged packets below can
	// name their requests.
	const clFirst, kclFirst = 1 << 40, 1 << 41
	cl := c.client(t, 0, 1, caller.ClientConfig{FirstID: clFirst})
	if got, err := cl.Call(ctx, tenantA, hop, routeReq(0, uint64(b.id), 1)); err != nil || u64(got) != 0 {
		t.Fatalf("hop: %x %v", got, err)
	}
	if sa, sb := a.srv.Stats(), b.srv.Stats(); sa.Relayed != 1 || sb.Replies != 1 || cl.Stats().OtherNode != 1 {
		t.Errorf("A relayed %d, B replied %d, the caller got %d replies from B; want 1 each", sa.Relayed, sb.Replies, cl.Stats().OtherNode)
	}
	// A → B → C with that caller: C answers through B, B through A.
	if got, err := cl.Call(ctx, tenantA, hop2, routeReq(uint64(b.id), uint64(cc.id), 1)); err != nil || u64(got) != 0 {
		t.Fatalf("hop2: %x %v", got, err)
	}
	if sa, sb := a.srv.Stats(), b.srv.Stats(); sa.Relayed != 2 || sb.Relayed != 1 {
		t.Errorf("after hop2: A relayed %d, B %d; want 2, 1", sa.Relayed, sb.Relayed)
	}
	// A caller whose address is its node's in B's book: B answers it
	// directly.
	known := c.listen(-1)
	if err := b.srv.SetPeer(2, known.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	kcl, err := caller.Dial(known, a.addr, caller.ClientConfig{Keys: c.keys, Node: 2, Server: a.id, FirstID: kclFirst})
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	if got, err := kcl.Call(ctx, tenantA, hop, routeReq(0, uint64(b.id), 1)); err != nil || u64(got) != 1 {
		t.Fatalf("hop from a known node: %x %v", got, err)
	}
	if sa := a.srv.Stats(); sa.Relayed != 2 {
		t.Errorf("A relayed %d; B should have answered the known caller itself", sa.Relayed)
	}

	// Forged: what the tenant's key lets anyone seal, with the stranger's
	// address as the reply address, sent to B from the forger's own.
	before := word(b.reg, 0)
	forward := func(src, via uint32, id uint64) []byte {
		route := wire.Route{Forwarded: true, Via: via, ReplyTo: stranger.LocalAddr(), HasProgram: true, Program: b.prog.Digest}
		payload := append(wire.AppendRoute(nil, &route), routeReq(0, 0, 1)...)
		return seal(t, c.keys, wire.Header{Type: wire.TypeRequest, Flags: wire.RouteFlags(&route), Tenant: tenantA,
			Handler: 0, RequestID: id, Src: src, Dst: b.id}, payload) // object handler 0: add
	}
	forger := c.listen(-1)
	send := func(to transport.Addr, dgrams ...[]byte) {
		for _, d := range dgrams {
			if _, err := forger.WriteBatch([]transport.Packet{{Addr: to, Buf: d, N: len(d)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(b.addr,
		forward(77, a.id, 5000),        // as from A, for a caller nobody knows
		forward(1, a.id, clFirst+100),  // as the unknown caller above
		forward(2, a.id, kclFirst+100), // as the known caller, from another address
		forward(78, 999, 5003),         // as from a node B does not know
	)
	// Each ran, and its reply went back to the forger, who sent it.
	ps := make([]transport.Packet, 8)
	for i := range ps {
		ps[i].Buf = make([]byte, 2048)
	}
	for got := 0; got < 4; {
		forger.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := forger.ReadBatch(ps)
		if err != nil {
			t.Fatalf("the forger got %d replies of 4: %v", got, err)
		}
		for _, p := range ps[:n] {
			if p.Addr != b.addr {
				t.Errorf("the forger got a datagram from %v", p.Addr)
			}
		}
		got += n
	}
	if got := word(b.reg, 0) - before; got != 4 {
		t.Errorf("B ran %d forged forwards, want 4", got)
	}
	// Relayed replies, forged, sent to A: one for the call A did forward
	// (its id is the caller's first) goes to that caller, not to the
	// forger; one for an id A never forwarded goes nowhere.
	relayed := func(id uint64) []byte {
		return seal(t, c.keys, wire.Header{Type: wire.TypeReply, Flags: wire.FlagForwarded, Tenant: tenantA,
			Handler: hop, RequestID: id, Src: b.id, Dst: 1}, make([]byte, 8))
	}
	send(a.addr, relayed(clFirst), relayed(clFirst+50))
	waitFor(t, "relays", func() bool { sa := a.srv.Stats(); return sa.Relayed == 3 && sa.RelayUnmatched == 1 })
	forger.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if n, err := forger.ReadBatch(ps); err == nil {
		t.Errorf("the forger received %d relayed datagrams", n)
	}
	// Nothing reached the stranger.
	stranger.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := stranger.ReadBatch(ps); err == nil {
		t.Errorf("the stranger received %d datagrams, the first from %v", n, ps[0].Addr)
	}
}

// TestNetRelayChain: the replies of a chain of forwards find their way
// back through nodes that know only the next hop (static peers in a
// line): the node in the middle relays a reply for a forward from a node
// not in its address book, which it heard the forward from.
func TestNetRelayChain(t *testing.T) {
	t.Run("mem", func(t *testing.T) { testRelayChain(t, memCluster(t, 3, transporttest.Faults{})) })
	t.Run("udp", func(t *testing.T) { testRelayChain(t, udpCluster(t, 3)) })
}

func testRelayChain(t *testing.T, c *cluster) {
	a, b, cc := c.nodes[0], c.nodes[1], c.nodes[2]
	// A knows B, B knows C, C knows nobody.
	a.srv.RemovePeer(cc.id)
	b.srv.RemovePeer(a.id)
	cc.srv.RemovePeer(a.id)
	cc.srv.RemovePeer(b.id)
	cl := c.client(t, 0, 1, caller.ClientConfig{})
	ctx := context.Background()
	hop2 := c.handler(t, "hop2")
	for i := range 3 {
		got, err := cl.Call(ctx, tenantA, hop2, routeReq(uint64(b.id), uint64(cc.id), 1))
		if err != nil || u64(got) != uint64(i) {
			t.Fatalf("call %d: A → B → C: %x %v", i, got, err)
		}
	}
	sa, sb, sc := a.srv.Stats(), b.srv.Stats(), cc.srv.Stats()
	if sb.Relayed != 3 || sa.Relayed != 3 || sc.Replies != 3 || sb.RelayUnmatched != 0 || sa.RelayUnmatched != 0 {
		t.Errorf("C replied %d; B relayed %d (unmatched %d), A %d (unmatched %d); want 3, 3 (0), 3 (0)",
			sc.Replies, sb.Relayed, sb.RelayUnmatched, sa.Relayed, sa.RelayUnmatched)
	}
	// B keeps one forwarded state, A's for the caller, and its index
	// entry goes with it when it is evicted.
	vk := viaKey{src: 1, tenant: tenantA}
	if vs := b.srv.forwarders(1, tenantA); len(vs) != 1 || vs[0] != a.id {
		t.Fatalf("B's forwarders of the caller: %v, want [%d]", vs, a.id)
	}
	b.srv.peersMu.Lock()
	for _, pr := range b.srv.peers {
		pr.seen.Store(false)
	}
	for len(b.srv.peers) > 0 && b.srv.evictLocked() {
	}
	_, left := b.srv.vias[vk]
	b.srv.peersMu.Unlock()
	if left {
		t.Errorf("B's forwarders of the caller outlived their states")
	}
}
