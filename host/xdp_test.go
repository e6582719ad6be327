//go:build linux

package host_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/naam-project/naam/examples/chase"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/internal/testing/netns"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/xdp"
)

const xdpTenant = 1

// xdpNodeID has its high bit set: the tier compares 32-bit fields as such.
const xdpNodeID = 0x9000_0064

var xdpSecret = []byte("naam xdp integration test secret")

// xdpNodes is a namespace pair with two nodes on side 0, one with the XDP
// tier on the veth end (port 7300) and one without (7301), and a raw
// caller socket on side 1 that sends both the same requests.
type xdpNodes struct {
	t      *testing.T
	pair   *netns.Pair
	kernel *host.Node // with the tier
	user   *host.Node // user space alone
	conn   *net.UDPConn
	codec  *wire.Codec
	id     uint64
}

func newXDPNodes(t *testing.T) *xdpNodes {
	t.Helper()
	if err := xdp.Probe(); err != nil {
		t.Skip(err)
	}
	p := netns.New(t)
	x := &xdpNodes{t: t, pair: p, id: 1 << 30}
	start := func(port int, iface string) *host.Node {
		var n *host.Node
		err := p.Run(0, func() error {
			var err error
			n, err = host.Start(host.Config{Listen: netip.AddrPortFrom(p.Addr[0], uint16(port)).String(), ID: xdpNodeID,
				Secret: xdpSecret, MAC: wire.MACSipHash128, XDP: iface})
			return err
		})
		if err != nil {
			t.Skipf("node with XDP on %q: %v", iface, err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	x.kernel = start(7300, p.Dev[0])
	x.user = start(7301, "")
	// veth takes frames sent with XDP_TX only when its peer runs XDP.
	idx, err := p.Ifindex(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(1, func() error {
		l, err := xdp.AttachPass(idx)
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(1, func() error {
		var err error
		x.conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.Addr[1], 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.conn.Close() })
	key, err := wire.NewKeyAlg(wire.MACSipHash128, xdpSecret)
	if err != nil {
		t.Fatal(err)
	}
	if x.codec, err = wire.NewCodec(wire.Config{Keys: wire.KeyMap{xdpTenant: key}}); err != nil {
		t.Fatal(err)
	}
	return x
}

// send sends one request (id, retransmit flag) to n and returns the
// decoded reply.
func (x *xdpNodes) send(n *host.Node, handler uint32, id uint64, retransmit bool, payload []byte) wire.Packet {
	x.t.Helper()
	h := wire.Header{Type: wire.TypeRequest, Tenant: xdpTenant, Handler: handler, RequestID: id, Src: 7, Dst: xdpNodeID}
	if retransmit {
		h.Flags = wire.FlagRetransmit
	}
	b, err := x.codec.Encode(nil, &h, payload)
	if err != nil {
		x.t.Fatal(err)
	}
	buf := make([]byte, 2048)
	for try := range 5 {
		if _, err := x.conn.WriteToUDPAddrPort(b, n.Addr()); err != nil {
			x.t.Fatal(err)
		}
		x.conn.SetReadDeadline(time.Now().Add(time.Duration(200<<try) * time.Millisecond))
		for {
			k, _, err := x.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				break // timed out: send again
			}
			pkt, err := x.codec.Decode(buf[:k])
			if err != nil {
				x.t.Fatalf("reply does not open: %v", err)
			}
			if pkt.RequestID == id {
				pkt.Payload = append([]byte(nil), pkt.Payload...)
				return pkt
			}
		}
		h.Flags = wire.FlagRetransmit
		if b, err = x.codec.Encode(nil, &h, payload); err != nil {
			x.t.Fatal(err)
		}
	}
	var seen []string
	for _, c := range append(n.XDPCounters(), n.Server().Stats().Counters()...) {
		if c.Value != 0 {
			seen = append(seen, fmt.Sprintf("%s=%d", c.Name, c.Value))
		}
	}
	x.t.Fatalf("no reply from %v to request %d for handler %d; counters %v", n.Addr(), id, handler, seen)
	return wire.Packet{}
}

// withPeer runs f with a peer of the node n dialed from side 1 as caller
// node.
func (x *xdpNodes) withPeer(n *host.Node, node uint32, f func(context.Context, *peer.Peer) error) {
	x.t.Helper()
	key, err := wire.NewKeyAlg(wire.MACSipHash128, xdpSecret)
	if err != nil {
		x.t.Fatal(err)
	}
	if err := x.pair.Run(1, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := peer.DialConfig(ctx, n.Addr(), peer.Config{Node: node, Tenant: xdpTenant, Keys: wire.KeyMap{xdpTenant: key}})
		if err != nil {
			return err
		}
		defer p.Close()
		return f(ctx, p)
	}); err != nil {
		x.t.Fatal(err)
	}
}

func counter(cs []nicrt.Counter, name string) uint64 {
	for _, c := range cs {
		if c.Name == name {
			return c.Value
		}
	}
	return 0
}

func serverCounter(n *host.Node, name string) uint64 {
	return counter(n.Server().Stats().Counters(), name)
}

// TestXDPNodeDifferential: the same request stream (KV get and put, a
// pointer chase, FETCH-ADD) to a node answering in XDP and to one in user
// space gives the same replies and leaves the same region bytes; the XDP
// node ran them in the kernel.
func TestXDPNodeDifferential(t *testing.T) {
	x := newXDPNodes(t)
	kcfg := kv.Config{Region: "kv", Buckets: 256, Probes: 16, ValueSize: 64}
	kobj, err := kvnode.Compile(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	ccfg := chase.DefaultConfig()
	cobj, err := chase.Compile(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	list := make([]byte, ccfg.RegionSize())
	perm := r.Perm(int(ccfg.Nodes))
	for i, n := range perm {
		next := uint32(chase.NIL)
		if i+1 < len(perm) {
			next = uint32(perm[i+1])
		}
		chase.SetNode(list, uint32(n), chase.Node{Key: uint64(i), Value: r.Uint64(), Next: next})
	}
	type node struct {
		n                 *host.Node
		kv, list, counter *host.Region
		get, put, walk    uint32
	}
	var nodes [2]node
	for i, n := range []*host.Node{x.kernel, x.user} {
		nd := node{n: n}
		if nd.kv, err = n.Register("kv", kcfg.RegionSize(), host.RegionOptions{Writable: true}); err != nil {
			t.Fatal(err)
		}
		if nd.list, err = n.Register("chase", ccfg.RegionSize(), host.RegionOptions{}); err != nil {
			t.Fatal(err)
		}
		copy(nd.list.Bytes(), list)
		if nd.counter, err = n.Register("counter", 64, host.RegionOptions{Writable: true}); err != nil {
			t.Fatal(err)
		}
		kp, err := n.Install(kobj)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := n.InstallWith(cobj, ccfg.InstallOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range kp.Handlers() {
			switch h.Name {
			case kv.HandlerGet:
				nd.get = h.ID
			case kv.HandlerPut:
				nd.put = h.ID
			}
		}
		for _, h := range cp.Handlers() {
			if h.Name == chase.HandlerWalk {
				nd.walk = h.ID
			}
		}
		nodes[i] = nd
	}
	if ns := x.kernel.XDPNotServed(); len(ns) != 0 {
		t.Fatalf("handlers not served in XDP: %v", ns)
	}
	key := func() kv.Key {
		var k kv.Key
		copy(k[:], fmt.Sprintf("user%012d", r.IntN(100)))
		return k
	}
	n := 600
	if testing.Short() {
		n = 150
	}
	ref := func(rg *host.Region, nd node) wire.RegionRef {
		for _, reg := range nd.n.NIC().Regions(xdpTenant) {
			if reg.Name == rg.Name() {
				return reg.Ref()
			}
		}
		t.Fatal("no region", rg.Name())
		return wire.RegionRef{}
	}
	for range n {
		x.id++
		op := r.IntN(10)
		var k kv.Key
		var v []byte
		switch {
		case op < 4:
			k = key()
		case op < 7:
			k = key()
			v = make([]byte, r.IntN(65))
			for i := range v {
				v[i] = byte(r.Uint32())
			}
		}
		hops := uint32(1 + r.IntN(60))
		head := uint32(perm[r.IntN(len(perm))])
		var got [2]wire.Packet
		for i, nd := range nodes {
			var handler uint32
			var payload []byte
			switch {
			case op < 4:
				handler, payload = nd.get, kv.AppendGet(nil, k)
			case op < 7:
				handler = nd.put
				if payload, err = kcfg.AppendPut(nil, k, v); err != nil {
					t.Fatal(err)
				}
			case op < 9:
				handler = nd.walk
				payload = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, head), hops)
			default:
				handler, payload = nicrt.HandlerFetchAdd, wire.AppendFetchAdd(nil, ref(nd.counter, nd), 8, 3)
			}
			got[i] = x.send(nd.n, handler, x.id, false, payload)
		}
		// An error reply's payload is text for people (the failing site),
		// which the tier does not send (spec/xdp.md, Replies).
		if got[0].Type != got[1].Type || got[0].Status != got[1].Status ||
			got[0].Type == wire.TypeReply && !bytes.Equal(got[0].Payload, got[1].Payload) {
			t.Fatalf("request %d (op %d): XDP node %v %d %x, user-space node %v %d %x", x.id, op,
				got[0].Type, got[0].Status, got[0].Payload, got[1].Type, got[1].Status, got[1].Payload)
		}
	}
	runs := counter(x.kernel.XDPCounters(), "xdp.runs")
	t.Logf("XDP node: xdp.runs %d, xdp.replies %d, xdp.pass.tailroom %d, server.requests %d, server.front_cache_hits %d", runs,
		counter(x.kernel.XDPCounters(), "xdp.replies"), counter(x.kernel.XDPCounters(), "xdp.pass.tailroom"),
		serverCounter(x.kernel, "server.requests"), serverCounter(x.kernel, "server.front_cache_hits"))
	if runs < uint64(n)*9/10 || serverCounter(x.kernel, "server.requests") > uint64(n)/10 {
		t.Errorf("XDP node: %d runs in XDP, %d requests in user space, of %d", runs, serverCounter(x.kernel, "server.requests"), n)
	}
	// Closed, the nodes' cores' writes are ordered before the reads (for
	// the race detector; the kernel's are outside its view).
	x.kernel.Close()
	x.user.Close()
	for _, name := range []string{"kv", "chase", "counter"} {
		var b [2][]byte
		for i, nd := range nodes {
			for _, rg := range []*host.Region{nd.kv, nd.list, nd.counter} {
				if rg.Name() == name {
					b[i] = rg.Bytes()
				}
			}
		}
		if !bytes.Equal(b[0], b[1]) {
			t.Errorf("region %s differs between the XDP node and the user-space node", name)
		}
	}
}

// TestXDPNodeOneWindow: the XDP tier and the user-space node judge a
// caller's ids by one window and one reply cache. A request id answered
// in XDP, sent again for a handler the tier passes up, is answered from
// the tier's cache by the user-space node and runs nowhere; one answered
// in user space, sent again for a verb the tier answers, is answered by
// the tier with the node's reply and runs nowhere.
func TestXDPNodeOneWindow(t *testing.T) {
	x := newXDPNodes(t)
	n := x.kernel
	ctr, err := n.Register("counter", 64, host.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	var ref wire.RegionRef
	for _, reg := range n.NIC().Regions(xdpTenant) {
		if reg.Name == "counter" {
			ref = reg.Ref()
		}
	}
	p, err := n.Install(testprog.CompileFile(t, "../tests/testdata/corpus/results.naam"))
	if err != nil {
		t.Fatal(err)
	}
	var none uint32 // a reply buffer over the cache slot: passed up
	for _, h := range p.Handlers() {
		if h.Name == "none" {
			none = h.ID
		}
	}
	if why := n.XDPNotServed()[none]; why == "" {
		t.Fatalf("handler none is served in XDP; the test needs one passed up (%v)", n.XDPNotServed())
	}
	faa := wire.AppendFetchAdd(nil, ref, 0, 1)
	arg := binary.LittleEndian.AppendUint32(nil, 5)

	// Answered in XDP, then the same id for a handler XDP passes up.
	first := x.send(n, nicrt.HandlerFetchAdd, 500, false, faa)
	requests := serverCounter(n, "server.requests")
	again := x.send(n, none, 500, true, arg)
	if again.Handler != nicrt.HandlerFetchAdd || !bytes.Equal(again.Payload, first.Payload) || again.Flags&wire.FlagRetransmit == 0 {
		t.Fatalf("id 500 again: handler %d %x flags %v; XDP answered handler %d %x", again.Handler, again.Payload, again.Flags, first.Handler, first.Payload)
	}
	if got := serverCounter(n, "server.requests"); got != requests {
		t.Fatalf("the user-space node ran a request XDP answered (%d requests, %d before)", got, requests)
	}
	if serverCounter(n, "server.front_cache_hits") != 1 {
		t.Fatalf("server.front_cache_hits %d, want 1", serverCounter(n, "server.front_cache_hits"))
	}

	// Answered in user space, then the same id for a verb XDP answers.
	hits := counter(n.XDPCounters(), "xdp.cache_hits")
	mine := x.send(n, none, 501, false, arg)
	if mine.Handler != none {
		t.Fatalf("501: handler %d", mine.Handler)
	}
	if got := serverCounter(n, "server.requests"); got != requests+1 {
		t.Fatalf("user-space requests %d, want %d", got, requests+1)
	}
	dup := x.send(n, nicrt.HandlerFetchAdd, 501, true, faa)
	if dup.Handler != none || !bytes.Equal(dup.Payload, mine.Payload) {
		t.Fatalf("id 501 again: handler %d %x; the node answered handler %d %x", dup.Handler, dup.Payload, mine.Handler, mine.Payload)
	}
	if got := counter(n.XDPCounters(), "xdp.cache_hits"); got != hits+1 {
		t.Fatalf("xdp.cache_hits %d, want %d", got, hits+1)
	}
	if v := binary.LittleEndian.Uint64(ctr.Bytes()); v != 1 {
		t.Fatalf("counter %d: one FETCH-ADD ran, want 1", v)
	}
	if got := serverCounter(n, "server.requests"); got != requests+1 {
		t.Fatalf("user-space requests %d after the duplicate, want %d", got, requests+1)
	}

	// The stats op (naam stats) shows the tier's counters.
	var cs []nicrt.Counter
	x.withPeer(n, 8, func(ctx context.Context, p *peer.Peer) error {
		var err error
		cs, err = p.Stats(ctx, "xdp.")
		return err
	})
	if counter(cs, "xdp.runs") == 0 || counter(cs, "xdp.pass.handler") == 0 || counter(cs, "xdp.handlers") == 0 {
		t.Fatalf("stats op: xdp counters %v", cs)
	}
}

// TestXDPUnavailable: a node asked for the tier where it cannot run does
// not start, and says why.
func TestXDPUnavailable(t *testing.T) {
	_, err := host.Start(host.Config{XDP: "naam-no-such-interface0"})
	if !errors.Is(err, host.ErrXDPUnavailable) {
		t.Fatalf("Start with XDP on a missing interface: %v, want ErrXDPUnavailable", err)
	}
	t.Log(err)
}

// TestXDPWithoutPrivilege: without the capabilities BPF and XDP need (a
// thread of this root process that dropped them all), Start fails and
// says so.
func TestXDPWithoutPrivilege(t *testing.T) {
	if os.Geteuid() != 0 {
		_, err := host.Start(host.Config{XDP: "lo"})
		if !errors.Is(err, host.ErrXDPUnavailable) {
			t.Fatalf("Start with XDP without root: %v, want ErrXDPUnavailable", err)
		}
		return
	}
	errc := make(chan error, 1)
	go func() {
		// The thread ends with the goroutine, locked: its lost
		// capabilities never serve another.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var none [2]unix.CapUserData
		if err := unix.Capset(&hdr, &none[0]); err != nil {
			errc <- fmt.Errorf("capset: %w", err)
			return
		}
		n, err := host.Start(host.Config{XDP: "lo"})
		if err == nil {
			n.Close()
			errc <- errors.New("Start with XDP and no capabilities started")
			return
		}
		if !errors.Is(err, host.ErrXDPUnavailable) {
			errc <- fmt.Errorf("Start with XDP and no capabilities: %w, want ErrXDPUnavailable", err)
			return
		}
		t.Log(err)
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestXDPNodeWireInstall: a region registered and a program installed
// over the wire at a node with the tier are served in XDP at once; an
// uninstall takes the handlers out of it.
func TestXDPNodeWireInstall(t *testing.T) {
	x := newXDPNodes(t)
	n := x.kernel
	obj := testprog.CompileFile(t, "../tests/testdata/corpus/results.naam")
	var single uint32
	var prog uint64
	x.withPeer(n, 8, func(ctx context.Context, p *peer.Peer) error {
		if err := p.Register(ctx, "wire-counter", 64, wire.RegionOptions{Writable: true}); err != nil {
			return err
		}
		pr, err := p.Install(ctx, obj)
		if err != nil {
			return err
		}
		prog = pr.ID
		for _, h := range pr.Handlers {
			if h.Name == "single" {
				single = h.ID
			}
		}
		return nil
	})
	requests, runs := serverCounter(n, "server.requests"), counter(n.XDPCounters(), "xdp.runs")
	got := x.send(n, single, 900, false, binary.LittleEndian.AppendUint32(nil, 20))
	if got.Type != wire.TypeReply || binary.LittleEndian.Uint32(got.Payload) != 41 {
		t.Fatalf("single(20): %v %x", got.Type, got.Payload)
	}
	if serverCounter(n, "server.requests") != requests || counter(n.XDPCounters(), "xdp.runs") != runs+1 {
		t.Fatalf("a handler installed over the wire ran in user space (requests %d → %d, xdp runs %d → %d)",
			requests, serverCounter(n, "server.requests"), runs, counter(n.XDPCounters(), "xdp.runs"))
	}
	var ref wire.RegionRef
	for _, reg := range n.NIC().Regions(xdpTenant) {
		if reg.Name == "wire-counter" {
			ref = reg.Ref()
		}
	}
	if got := x.send(n, nicrt.HandlerFetchAdd, 901, false, wire.AppendFetchAdd(nil, ref, 0, 1)); got.Type != wire.TypeReply {
		t.Fatalf("FETCH-ADD on a region registered over the wire: %v %d", got.Type, got.Status)
	}
	if serverCounter(n, "server.requests") != requests || counter(n.XDPCounters(), "xdp.runs") != runs+2 {
		t.Fatal("a verb on a region registered over the wire ran in user space")
	}
	x.withPeer(n, 9, func(ctx context.Context, p *peer.Peer) error { return p.Uninstall(ctx, prog) })
	if got := x.send(n, single, 902, false, binary.LittleEndian.AppendUint32(nil, 20)); got.Type != wire.TypeErrorReply {
		t.Fatalf("single after uninstall: %v", got.Type)
	}
	if counter(n.XDPCounters(), "xdp.runs") != runs+2 {
		t.Fatal("an uninstalled handler ran in XDP")
	}
}
