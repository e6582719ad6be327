package xdp

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// goPeers is a PeerTable in ordinary memory, for the Go side alone.
func goPeers(t testing.TB, peers int) *PeerTable {
	t.Helper()
	c, err := Config{Node: 1, Port: 1, MaxPeers: peers, CacheBytes: 128}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	l := newLayout(c)
	words := make([]uint64, peers*l.peerSize/8)
	mem := make([]byte, 0)
	if len(words) > 0 {
		mem = unsafeBytes(words)
	}
	pt, err := newPeerTable(mem, l)
	if err != nil {
		t.Fatal(err)
	}
	return pt
}

// TestClaimModel: in one goroutine, Claim gives wire.Window's verdicts:
// Claimed for IDNew, TooOld for IDTooOld, and for IDDuplicate Running
// until the id completes, Cached (with its datagram) or Elsewhere after.
func TestClaimModel(t *testing.T) {
	pt := goPeers(t, 4)
	p, ok := pt.Peer(3, 9)
	if !ok {
		t.Fatal("no peer state")
	}
	var w wire.Window
	done := map[uint64]int{} // 0 running, 1 cached, 2 elsewhere
	r := rand.New(rand.NewPCG(1, 2))
	base := uint64(1 << 50)
	for i := range 50_000 {
		var id uint64
		switch k := r.IntN(10); {
		case k < 6:
			id = base + uint64(i) + uint64(r.IntN(40)) // mostly in order
		case k < 9:
			id = base + uint64(i) - uint64(r.IntN(2000)) // old: duplicates and too old
		default:
			id = base + uint64(i) + uint64(r.IntN(5000)) // a jump ahead
		}
		v := p.Claim(id)
		var want Verdict
		switch w.Observe(id) {
		case wire.IDNew:
			want = Claimed
		case wire.IDTooOld:
			want = TooOld
		default:
			want = [...]Verdict{Running, Cached, Elsewhere}[done[id]]
		}
		if v != want {
			t.Fatalf("step %d, id %d: Claim %v, wire.Window says %v", i, id, v, want)
		}
		if v == Claimed {
			switch r.IntN(3) {
			case 0:
			case 1:
				d := bytes.Repeat([]byte{byte(id)}, 56+r.IntN(40))
				if !p.Complete(id, d) {
					t.Fatal("Complete of a claimed id failed")
				}
				done[id] = 1
				if got, ok := p.Cached(nil, id); !ok || !bytes.Equal(got, d) {
					t.Fatalf("Cached(%d) = %x, %v; want %x", id, got, ok, d)
				}
			case 2:
				p.CompleteElsewhere(id)
				done[id] = 2
			}
		}
	}
	// A datagram larger than the slot is kept elsewhere.
	id := base + 1<<20
	if p.Claim(id) != Claimed || !p.Complete(id, make([]byte, 200)) || p.Claim(id) != Elsewhere {
		t.Fatal("a datagram larger than the slot is not recorded as kept elsewhere")
	}
	p.SetFloor(id + 10)
	if v := p.Claim(id + 5); v != BelowFloor {
		t.Fatalf("below the floor: %v", v)
	}
	if v := p.Claim(^uint64(0)); v != TooOld {
		t.Fatalf("id 2^64-1: %v", v)
	}
}

// TestClaimRace: goroutines claiming the same ids: each id is claimed
// once (go test -race).
func TestClaimRace(t *testing.T) {
	pt := goPeers(t, 2)
	const ids, workers = 20_000, 4
	var claimed [ids]atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			p, ok := pt.Peer(1, 1)
			if !ok {
				t.Error("no peer state")
				return
			}
			for id := range uint64(ids) {
				if p.Claim(id+1) == Claimed {
					claimed[id].Add(1)
					p.Complete(id+1, make([]byte, 64))
				}
			}
		})
	}
	wg.Wait()
	for id := range claimed {
		if n := claimed[id].Load(); n > 1 {
			t.Fatalf("id %d claimed %d times", id+1, n)
		}
	}
}

// TestPeerTableProbes: pairs take states from their home on, and a pair
// whose probe sequence is full gets none.
func TestPeerTableProbes(t *testing.T) {
	pt := goPeers(t, 16)
	seen := map[int]bool{}
	for src := range uint32(16) {
		p, ok := pt.Peer(1, src)
		if !ok {
			continue
		}
		if seen[p.Index] {
			t.Fatalf("two pairs share state %d", p.Index)
		}
		seen[p.Index] = true
		if again, _ := pt.Peer(1, src); again.Index != p.Index {
			t.Fatalf("pair (1, %d) moved from %d to %d", src, p.Index, again.Index)
		}
	}
	if len(seen) < 8 {
		t.Fatalf("16 pairs in 16 states took only %d", len(seen))
	}
	if _, ok := pt.Peer(^uint32(0), ^uint32(0)); ok {
		t.Fatal("the pair whose key is 0 got a state")
	}
}

// TestSharedState: the XDP program and the host process run one
// protocol over one table (spec/xdp.md, Shared state).
func TestSharedState(t *testing.T) {
	p, c := faaPair(t)
	faa := wire.AppendFetchAdd(nil, c.nic.Ref(), 0, 1)
	peer, ok := p.tier.Peers().Peer(testTenant, testClient)
	if !ok {
		t.Fatal("no peer state")
	}
	run := func(id uint64) (int, []byte) {
		act, out, err := p.tier.Run(p.sealed(faaHeader(id), faa))
		if err != nil {
			t.Fatal(err)
		}
		if act == xdpTx {
			return act, append([]byte(nil), datagramOf(t, out)...)
		}
		return act, nil
	}
	// The host claims 500: XDP drops the request as running.
	if v := peer.Claim(500); v != Claimed {
		t.Fatalf("host claim: %v", v)
	}
	if act, _ := run(500); act != xdpDrop || counterOf(t, p.tier, "drop.duplicate_running") != 1 {
		t.Fatalf("a request the host runs: action %d", act)
	}
	// The host answers it: XDP resends the host's datagram.
	h := wire.Header{Type: wire.TypeReply, Tenant: testTenant, Handler: nicrt.HandlerFetchAdd, RequestID: 500, Src: testNode, Dst: testClient, Credits: 9}
	hostReply, err := p.codec.Encode(nil, &h, u64(12345))
	if err != nil {
		t.Fatal(err)
	}
	peer.Complete(500, hostReply)
	if act, got := run(500); act != xdpTx || !bytes.Equal(got, repeatOf(t, p.codec, hostReply)) {
		t.Fatalf("retransmission of a request the host answered: action %d, %x, want %x as a repeat", act, got, hostReply)
	}
	// XDP answers 501: the host sees it cached, with XDP's datagram.
	act, xdpReply := run(501)
	if act != xdpTx {
		t.Fatalf("501: action %d", act)
	}
	if v := peer.Claim(501); v != Cached {
		t.Fatalf("the host's claim of an id XDP answered: %v", v)
	}
	if got, ok := peer.Cached(nil, 501); !ok || !bytes.Equal(got, xdpReply) {
		t.Fatalf("the host reads %x, %v from the cache; XDP sent %x", got, ok, xdpReply)
	}
	// The host keeps 502's reply itself: XDP passes its duplicates up.
	peer.Claim(502)
	peer.CompleteElsewhere(502)
	if act, _ := run(502); act != xdpPass || counterOf(t, p.tier, "pass.cached_elsewhere") != 1 {
		t.Fatalf("a reply the host keeps: action %d", act)
	}
	// A floor from the host stops XDP too.
	peer.SetFloor(2000)
	if act, _ := run(1500); act != xdpDrop || counterOf(t, p.tier, "drop.replay_evicted") != 1 {
		t.Fatalf("below the host's floor: action %d", act)
	}
	if v := peer.Claim(2001); v != Claimed {
		t.Fatalf("above the floor: %v", v)
	}
	// One FETCH-ADD ran in XDP (501), none for the others.
	if v := c.xdp.Bytes()[0]; v != 1 {
		t.Fatalf("counter %d, want 1", v)
	}
}
