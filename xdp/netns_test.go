package xdp

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/netns"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// vethNode is a node on side 0 of a namespace pair: the tier attached in
// native mode to its veth end, and a socket on the node's port for what
// passes up. Side 1's veth end runs an XDP program that passes
// everything, which veth needs to take frames sent with XDP_TX.
type vethNode struct {
	pair   *netns.Pair
	tier   *Tier
	addr   netip.AddrPort
	socket *net.UDPConn
	passed atomic.Int64 // datagrams the node's socket read
}

const vethPort = 7100

func newVethNode(t testing.TB, cfg Config) *vethNode {
	n := newVethNodeNoSocket(t, cfg)
	if err := n.pair.Run(0, func() error {
		var err error
		n.socket, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(n.addr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.socket.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := n.socket.ReadFromUDP(buf); err != nil {
				return
			}
			n.passed.Add(1)
		}
	}()
	return n
}

// newVethNodeNoSocket is newVethNode without the node's socket: the
// caller binds the port.
func newVethNodeNoSocket(t testing.TB, cfg Config) *vethNode {
	t.Helper()
	needKernel(t)
	p := netns.New(t)
	cfg.Node, cfg.Port, cfg.IP = 100, vethPort, p.Addr[0].As4()
	tier, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tier.Close() })
	if err := tier.SetKey(testTenant, testKey(t)); err != nil {
		t.Fatal(err)
	}
	n := &vethNode{pair: p, tier: tier, addr: netip.AddrPortFrom(p.Addr[0], vethPort)}
	if err := n.attach(); err != nil {
		t.Skipf("native XDP on veth unavailable: %v", err)
	}
	peer, err := p.Ifindex(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(1, func() error {
		l, err := AttachPass(peer)
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
		return err
	}); err != nil {
		t.Fatalf("XDP on the peer veth: %v", err)
	}
	return n
}

// attach attaches the tier to side 0's veth end, in native mode.
func (n *vethNode) attach() error {
	idx, err := n.pair.Ifindex(0)
	if err != nil {
		return err
	}
	return n.pair.Run(0, func() error { return n.tier.Attach(idx, false) })
}

// client dials the node from side 1.
func (n *vethNode) client(t testing.TB, node uint32, cfg caller.ClientConfig) *caller.Client {
	t.Helper()
	var conn *transport.UDPConn
	if err := n.pair.Run(1, func() error {
		var err error
		conn, err = transport.ListenUDP(transport.UDPConfig{Addr: netip.AddrPortFrom(n.pair.Addr[1], 0), ReadBuffer: 1 << 20, WriteBuffer: 1 << 20})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cfg.Node, cfg.Server, cfg.Keys = node, 100, wire.KeyMap{testTenant: testKey(t)}
	c, err := caller.Dial(conn, n.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestNetnsFetchAdd: FETCH-ADDs answered by the tier in native XDP on a
// veth, from 4 callers in another namespace whose nftables rules drop
// 10% of their outgoing and 10% of their incoming UDP datagrams: the
// counter is exact and every old value comes back once. NAAM_NETNS_N sets
// the number (default 20,000).
func TestNetnsFetchAdd(t *testing.T) {
	n := newVethNode(t, Config{})
	count := 20_000
	if s := os.Getenv("NAAM_NETNS_N"); s != "" {
		var err error
		if count, err = strconv.Atoi(s); err != nil || count < 1 {
			t.Fatalf("NAAM_NETNS_N=%q", s)
		}
	} else if testing.Short() {
		count = 4000
	}
	region, err := NewRegion(64)
	if err != nil {
		t.Fatal(err)
	}
	defer region.Close()
	ref := nicrt.RegionRef{ID: 1, Key: 0x5eed_1234_5678_9abc}
	if err := n.tier.AddRegion(VerbRegion{ID: ref.ID, Tenant: testTenant, Key: ref.Key, Writable: true}, region); err != nil {
		t.Fatal(err)
	}
	if err := n.tier.EnableVerbs(); err != nil {
		t.Fatal(err)
	}
	n.pair.DropUDP(t, 1, "output", "input")
	const clients, inFlight = 4, 8
	var adds []func() (uint64, error)
	for i := range clients {
		cl := n.client(t, uint32(i+1), caller.ClientConfig{MaxTries: 30, MaxTimeout: 10 * time.Millisecond})
		adds = append(adds, func() (uint64, error) { return cl.FetchAdd(context.Background(), testTenant, ref, 0, 1) })
	}
	ok, timeouts, took := netns.CountExact(t, count, inFlight, adds, caller.ErrTimeout)
	counter := binary.LittleEndian.Uint64(region.Bytes())
	if counter != uint64(count) || ok != int64(count) {
		t.Errorf("counter %d after %d FETCH-ADDs (%d replies, %d timeouts)", counter, count, ok, timeouts)
	}
	dropped := n.pair.Dropped(t, 1)
	if dropped == 0 {
		t.Error("the nftables rules dropped nothing")
	}
	hits := counterOf(t, n.tier, "cache_hits")
	if hits == 0 {
		t.Error("no retransmission was answered from the reply cache")
	}
	t.Logf("%d FETCH-ADDs answered in XDP across the veth in %v; nftables dropped %d datagrams; %d retransmissions answered from the cache, %d duplicates of running requests dropped; %d datagrams passed up to the node's socket",
		count, took.Round(time.Millisecond), dropped, hits, counterOf(t, n.tier, "drop.duplicate_running"), n.passed.Load())
	if n.passed.Load() != 0 {
		t.Errorf("%d datagrams passed up: the tier should have answered every one; counters %v", n.passed.Load(), fmt.Sprint(nonzero(must(n.tier.Counters()))))
	}
}
