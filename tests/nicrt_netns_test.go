package tests

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/naam-project/naam/internal/testing/netns"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestNICRTNetns: a responder and 4 callers in two network namespaces
// joined by a veth pair (in 198.18.0.0/15, the benchmarking range of RFC
// 2544), with an nftables rule in each namespace that drops 10% of the
// outgoing UDP datagrams. The FETCH-ADD count stays exact. Both nodes are
// sockets of this process, each opened inside its namespace (setns on a
// locked thread), so the datagrams cross two network stacks and the veth.
// NAAM_NETNS_N sets the number of FETCH-ADDs (default 20,000).
func TestNICRTNetns(t *testing.T) {
	p := netns.New(t)
	for side := range 2 {
		p.DropUDP(t, side, "output")
	}
	n := 20_000
	if s := os.Getenv("NAAM_NETNS_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("NAAM_NETNS_N=%q", s)
		}
	}

	keys := wire.KeyMap{}
	key, err := wire.NewKey([]byte("naam netns test key, 32 bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	keys[1] = key
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	reg, err := nic.Register(1, "counter", 8, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	udp := func(side int) *transport.UDPConn {
		t.Helper()
		var c *transport.UDPConn
		err := p.Run(side, func() error {
			var err error
			c, err = transport.ListenUDP(transport.UDPConfig{Addr: netip.AddrPortFrom(p.Addr[side], 0), ReadBuffer: 1 << 20, WriteBuffer: 1 << 20})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	srvConn := udp(0)
	srv, err := server.Serve(nic, []transport.Conn{srvConn}, server.ServerConfig{Node: 100, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	const clients, inFlight = 4, 8
	var adds []func() (uint64, error)
	for i := range clients {
		cl, err := caller.Dial(udp(1), srvConn.LocalAddr(), caller.ClientConfig{
			Node: uint32(i + 1), Server: 100, Keys: keys, MaxTries: 30, MaxTimeout: 10 * time.Millisecond,
			// A lossy link: recover losses sooner than the defaults,
			// which suit a lossless one.
			Timeout: time.Millisecond, MinTimeout: 200 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		adds = append(adds, func() (uint64, error) { return cl.FetchAdd(context.Background(), 1, reg.Ref(), 0, 1) })
	}
	ok, timeouts, took := netns.CountExact(t, n, inFlight, adds, caller.ErrTimeout)
	counter := atomic.LoadUint64((*uint64)(unsafe.Pointer(&reg.Bytes()[0])))
	if counter != uint64(n) || ok != int64(n) {
		t.Errorf("counter %d after %d FETCH-ADDs (%d replies, %d timeouts)", counter, n, ok, timeouts)
	}
	dropped := p.Dropped(t, 0) + p.Dropped(t, 1)
	if dropped == 0 {
		t.Error("the nftables rules dropped nothing")
	}
	s := srv.Stats()
	t.Logf("%d FETCH-ADDs across the veth in %v; nftables dropped %d datagrams; the server answered %d retransmissions from its cache and dropped %d duplicates of running requests",
		n, took.Round(time.Millisecond), dropped, s.CacheHits, s.DuplicatesRunning)
}
