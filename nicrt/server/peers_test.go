package server

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// Peer-state memory (spec/nic.md, Peer state): the figures the spec
// states, checked after a flood of distinct senders.
const (
	peerStateBytes = 4 << 10 // a state that answered one request, its reply included
	peerFloorBytes = 96      // the floor an evicted state leaves: a map entry, 24 bytes and the map's room to grow
)

// manualServer is a NIC served on an in-memory network without the
// server's activity ticker: the test ends the activity periods itself
// (countActiveOnce), so that none ends between its steps.
func manualServer(t testing.TB, scfg ServerConfig) *testNet {
	t.Helper()
	tn := &testNet{net: transporttest.NewNetwork(transporttest.MemConfig{}), keys: testKeys(t), nic: newNIC(t, nicrt.Config{})}
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	tn.addr = conn.LocalAddr()
	scfg.Node, scfg.Keys = serverNode, tn.keys
	if tn.srv, err = newServer(tn.nic, []transport.Conn{conn}, scfg); err != nil {
		t.Fatal(err)
	}
	for _, q := range tn.srv.queues {
		tn.srv.rxDone.Go(q.loop)
	}
	t.Cleanup(func() { tn.srv.Close() })
	return tn
}

// peerFlood sends requests from many distinct senders to tn's server, as
// a holder of tenantA's key may: each sender is a src id of its own.
type peerFlood struct {
	tn    *testNet
	conn  *transporttest.MemConn
	codec *wire.Codec
	req   []byte
	sent  uint64
	got   atomic.Uint64 // replies read back
}

func newPeerFlood(t testing.TB, tn *testNet) *peerFlood {
	t.Helper()
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := wire.NewCodec(wire.Config{Keys: tn.keys})
	if err != nil {
		t.Fatal(err)
	}
	reg := register(t, tn.nic, tenantA, "flood", 64, nicrt.RegionOptions{})
	f := &peerFlood{tn: tn, conn: conn, codec: codec, req: wire.AppendRead(nil, reg.Ref(), 0, 8)}
	done := make(chan struct{})
	go func() { // read the replies, so that the sender's queue never fills
		defer close(done)
		ps := make([]transport.Packet, 64)
		for i := range ps {
			ps[i].Buf = make([]byte, 2048)
		}
		for {
			n, err := conn.ReadBatch(ps)
			if err != nil {
				return
			}
			f.got.Add(uint64(n))
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return f
}

// send sends one READ from each src in [first, first+n), in batches that
// the server's queue holds, ending an activity period every period
// senders (as if 100 ms had passed, so that idle states may be evicted),
// and waits until the server has run (or refused) every one.
func (f *peerFlood) send(t testing.TB, first, n uint32, period uint32) {
	f.sendIDs(t, first, n, period, 1)
}

// sendIDs is send with ids requests from each sender, ids 1000 on.
func (f *peerFlood) sendIDs(t testing.TB, first, n uint32, period uint32, ids int) {
	t.Helper()
	const batch = 256
	srv := f.tn.srv
	ps := make([]transport.Packet, 0, batch)
	flush := func() {
		if _, err := f.conn.WriteBatch(ps); err != nil {
			t.Fatal(err)
		}
		f.sent += uint64(len(ps))
		// Every datagram run, or refused for want of a state.
		deadline := time.Now().Add(10 * time.Second)
		for srv.ctr.requests.Load()+srv.ctr.peersFull.Load() < f.sent {
			if time.Now().After(deadline) {
				t.Fatalf("the server read %d of %d datagrams and ran %d", srv.ctr.rxPackets.Load(), f.sent, srv.ctr.requests.Load())
			}
			time.Sleep(50 * time.Microsecond)
		}
		ps = ps[:0]
	}
	for i := range n {
		if i > 0 && i%period == 0 {
			flush()
			srv.countActiveOnce()
		}
		for id := range uint64(ids) {
			h := wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: nicrt.HandlerRead, RequestID: 1000 + id, Src: first + i, Dst: serverNode}
			b, err := f.codec.Encode(nil, &h, f.req)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, transport.Packet{Addr: f.tn.addr, Buf: b, N: len(b)})
			if len(ps) == batch {
				flush()
			}
		}
	}
	if len(ps) > 0 {
		flush()
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// peerMemory floods the default MaxPeers (4,096) and then senders more
// distinct senders in all, and returns the live heap each state and each
// floor costs, and the total the flood added.
func peerMemory(t testing.TB, senders uint32) (perState, perFloor, total float64, st ServerStats) {
	tn := manualServer(t, ServerConfig{})
	f := newPeerFlood(t, tn)
	maxPeers := uint32(tn.srv.cfg.MaxPeers)
	f.send(t, 1, 64, 64) // warm up: pools, the codec, the NIC's cores
	base := heapAfterGC()
	f.send(t, 1000, maxPeers-64, maxPeers) // one period: no eviction
	full := heapAfterGC()
	if st := tn.srv.Stats(); st.Peers != int(maxPeers) || st.PeersFull != 0 {
		t.Fatalf("%d peers (%d refused), want %d", st.Peers, st.PeersFull, maxPeers)
	}
	// The rest, a period every half of MaxPeers: each new state evicts an
	// idle one, which leaves its floor.
	tn.srv.countActiveOnce()
	f.send(t, 1000+maxPeers, senders-maxPeers, maxPeers/2)
	end := heapAfterGC()
	st = tn.srv.Stats()
	if st.PeersFull != 0 || st.Requests != uint64(senders) {
		t.Fatalf("%d requests run, %d refused for want of a peer state, of %d", st.Requests, st.PeersFull, senders)
	}
	perState = float64(full-base) / float64(maxPeers-64)
	// Eviction frees MaxPeers/16 states at a time: fewer may be left.
	perFloor = (float64(end) - float64(full) - float64(st.Peers-int(maxPeers))*perState) / float64(max(st.Floors, 1))
	return perState, perFloor, float64(end) - float64(base) + 64*perState, st
}

// TestNetPeerMemory floods a server with 100,000 distinct senders (20,000
// with -short) of one tenant, each sending one request: the server keeps
// at most MaxPeers states, each within peerStateBytes, and a floor of at
// most peerFloorBytes for every state it evicted.
func TestNetPeerMemory(t *testing.T) {
	senders := uint32(100_000)
	if testing.Short() {
		senders = 20_000
	}
	perState, perFloor, total, st := peerMemory(t, senders)
	t.Logf("%d senders: %d states (%.0f B each), %d floors (%.0f B each), %.1f MB in all",
		senders, st.Peers, perState, st.Floors, perFloor, total/1e6)
	if st.Peers > 4096 || st.Peers+st.Floors != int(senders) || st.PeersEvicted != uint64(st.Floors) {
		t.Errorf("%d states, %d floors, %d evicted: want at most 4096 states, and a state or a floor for each of the %d senders", st.Peers, st.Floors, st.PeersEvicted, senders)
	}
	if perState > peerStateBytes {
		t.Errorf("a peer state holds %.0f bytes, the spec says at most %d", perState, peerStateBytes)
	}
	if perFloor > peerFloorBytes {
		t.Errorf("a floor holds %.0f bytes, the spec says at most %d", perFloor, peerFloorBytes)
	}
}

// BenchmarkPeerMemory reports the figures of TestNetPeerMemory, and the
// memory of a state whose window is full (WindowSize requests answered,
// their 64-byte replies kept) (spec/nic.md, Peer state):
//
//	go test ./nicrt/server -run '^$' -bench PeerMemory -benchtime 1x
func BenchmarkPeerMemory(b *testing.B) {
	for b.Loop() {
		perState, perFloor, total, _ := peerMemory(b, 100_000)
		b.ReportMetric(perState, "B/state")
		b.ReportMetric(perFloor, "B/floor")
		b.ReportMetric(total/1e6, "MB-total")

		const senders = 256
		tn := manualServer(b, ServerConfig{})
		f := newPeerFlood(b, tn)
		f.send(b, 1, 64, 64)
		base, cache0 := heapAfterGC(), tn.srv.Stats().CacheBytes
		f.sendIDs(b, 1000, senders, senders, wire.WindowSize)
		full := heapAfterGC()
		st := tn.srv.Stats()
		if st.Requests != 64+senders*wire.WindowSize {
			b.Fatalf("%d requests run", st.Requests)
		}
		b.ReportMetric(float64(full-base)/senders, "B/full-state")
		b.ReportMetric(float64(st.CacheBytes-cache0)/senders, "cache-B/full-state")
	}
}

// TestNetReplyCacheBytes: the reply caches hold at most
// MaxTenantReplyCacheBytes of one tenant's replies and MaxReplyCacheBytes
// of all; a reply past them is sent but not kept, and a duplicate of its
// request is dropped, never run again. An evicted state gives its bytes
// back.
func TestNetReplyCacheBytes(t *testing.T) {
	const reply = 1000 + wire.HeaderSize // a READ of 1000 bytes
	tn := manualServer(t, ServerConfig{MaxTenantReplyCacheBytes: 10 * reply, MaxReplyCacheBytes: 15 * reply, MaxPeers: 2})
	regA := register(t, tn.nic, tenantA, "r", 1000, nicrt.RegionOptions{})
	regB := register(t, tn.nic, tenantB, "r", 1000, nicrt.RegionOptions{})
	p := tn.raw(t)
	read := func(tenant uint32, ref nicrt.RegionRef, src uint32, id uint64) []byte {
		return seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Tenant: tenant, Handler: nicrt.HandlerRead, RequestID: id, Src: src, Dst: serverNode},
			wire.AppendRead(nil, ref, 0, 1000))
	}
	ps := []transport.Packet{{Buf: make([]byte, 2048)}}
	exchange := func(b []byte) { // sends b and waits for its reply
		t.Helper()
		p.send(b)
		p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := p.conn.ReadBatch(ps); err != nil {
			t.Fatalf("no reply: %v", err)
		}
	}
	for id := uint64(1); id <= 12; id++ {
		exchange(read(tenantA, regA.Ref(), 5, id))
	}
	st := tn.srv.Stats()
	if st.CacheBytes != 10*reply || st.NotCached != 2 {
		t.Errorf("after 12 of tenant A's replies: %d bytes kept, %d not; want %d, 2", st.CacheBytes, st.NotCached, 10*reply)
	}
	// Duplicates: the first reply comes again from the cache, the twelfth
	// was not kept (and the request does not run again).
	exchange(read(tenantA, regA.Ref(), 5, 1))
	p.send(read(tenantA, regA.Ref(), 5, 12))
	waitFor(t, "the duplicate dropped", func() bool { return tn.srv.Stats().DuplicatesNotCached == 1 })
	for id := uint64(1); id <= 7; id++ {
		exchange(read(tenantB, regB.Ref(), 6, id))
	}
	st = tn.srv.Stats()
	if st.CacheBytes != 15*reply || st.NotCached != 4 || st.DuplicatesNotCached != 1 || st.CacheHits != 1 || st.Requests != 19 {
		t.Errorf("after tenant B's: %d bytes kept, %d not, %d duplicates dropped, %d cache hits, %d run; want %d, 4, 1, 1, 19",
			st.CacheBytes, st.NotCached, st.DuplicatesNotCached, st.CacheHits, st.Requests, 15*reply)
	}
	tn.srv.peersMu.RLock()
	a, b := tn.srv.tenantCache[tenantA].Load(), tn.srv.tenantCache[tenantB].Load()
	tn.srv.peersMu.RUnlock()
	if a != 10*reply || b != 5*reply {
		t.Errorf("by tenant: A %d bytes, B %d; want %d, %d", a, b, 10*reply, 5*reply)
	}
	// Tenant A's state idle for two periods, B's for one: a new peer
	// evicts A's, whose bytes come back; B's 5 kept replies and the new
	// peer's are what the cache holds then.
	tn.srv.countActiveOnce()
	exchange(read(tenantB, regB.Ref(), 6, 8)) // not kept: the node is at its limit
	tn.srv.countActiveOnce()
	exchange(read(tenantB, regB.Ref(), 7, 1))
	if st := tn.srv.Stats(); st.PeersEvicted != 1 || st.CacheBytes != 6*reply || st.NotCached != 5 {
		t.Errorf("after evicting tenant A's state: %d evicted, %d bytes kept, %d not; want 1, %d, 5", st.PeersEvicted, st.CacheBytes, st.NotCached, 6*reply)
	}
}
