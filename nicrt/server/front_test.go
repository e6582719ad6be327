package server

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// fakeFront is a Front whose window says what the test set for each id,
// and records what the server tells it.
type fakeFront struct {
	mu       sync.Mutex
	verdicts map[uint64]FrontVerdict // missing: claimed
	noState  bool                    // Claim reports no state for the stream
	cached   map[uint64][]byte
	done     map[uint64][]byte // Complete's datagrams (nil: kept by the server)
	claims   int
}

// set makes the window's verdict on id v, with reply cached.
func (f *fakeFront) set(id uint64, v FrontVerdict, reply []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdicts[id] = v
	if reply != nil {
		f.cached[id] = reply
	}
}

func (f *fakeFront) Claim(_, _ uint32, id uint64) (FrontVerdict, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	if f.noState {
		return 0, false
	}
	if v, ok := f.verdicts[id]; ok {
		return v, true
	}
	return FrontClaimed, true
}

func (f *fakeFront) Cached(dst []byte, _, _ uint32, id uint64) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.cached[id]
	return append(dst, b...), ok
}

func (f *fakeFront) Complete(_, _ uint32, id uint64, dgram []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done[id] = bytes.Clone(dgram)
}

func (f *fakeFront) Installed(*nicrt.Program, *bytecode.Object) {}
func (f *fakeFront) Uninstalling(*nicrt.Program)                {}
func (f *fakeFront) Registered(*nicrt.Region)                   {}
func (f *fakeFront) Unregistering(*nicrt.Region)                {}
func (f *fakeFront) Counters() []nicrt.Counter                  { return []nicrt.Counter{{Name: "xdp.runs", Value: 7}} }

// TestFrontVerdicts: the server judges a caller's requests by the Front's
// window first. A claimed id runs once and its reply goes to the Front; a
// cached one is answered with the Front's datagram and runs nowhere, as
// is one running or too old; one the server answered before runs never
// again, even with its state here gone; a stream the Front keeps no state
// for is the server's own window's.
func TestFrontVerdicts(t *testing.T) {
	front := &fakeFront{verdicts: map[uint64]FrontVerdict{}, cached: map[uint64][]byte{}, done: map[uint64][]byte{}}
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{Front: front})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	p := tn.raw(t)
	faa := wire.AppendFetchAdd(nil, reg.Ref(), 0, 1)
	send := func(id uint64, retransmit bool) [][]byte {
		t.Helper()
		h := wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: nicrt.HandlerFetchAdd, RequestID: id, Src: 5, Dst: serverNode}
		if retransmit {
			h.Flags = wire.FlagRetransmit
		}
		p.send(seal(t, tn.keys, h, faa))
		return p.recv(20 * time.Millisecond)
	}
	codec, err := wire.NewCodec(wire.Config{Keys: tn.keys})
	if err != nil {
		t.Fatal(err)
	}

	// Claimed: runs, and the Front gets the reply it sent.
	got := send(10, false)
	if len(got) != 1 || counter(reg) != 1 {
		t.Fatalf("claimed: %d replies, counter %d", len(got), counter(reg))
	}
	front.mu.Lock()
	if !bytes.Equal(front.done[10], got[0]) {
		t.Fatalf("the Front got %x, the caller %x", front.done[10], got[0])
	}
	front.mu.Unlock()

	// Cached in the Front (answered by the tier): its datagram, as it is
	// to a first try and as a repeat to a retransmission; nothing runs.
	h := wire.Header{Type: wire.TypeReply, Tenant: tenantA, Handler: nicrt.HandlerFetchAdd, RequestID: 11, Src: serverNode, Dst: 5}
	tierReply, err := codec.Encode(nil, &h, []byte{9, 9, 9, 9, 9, 9, 9, 9})
	if err != nil {
		t.Fatal(err)
	}
	front.set(11, FrontCached, tierReply)
	if got := send(11, false); len(got) != 1 || !bytes.Equal(got[0], tierReply) {
		t.Fatalf("cached, first try: %x, want the Front's %x", got, tierReply)
	}
	got = send(11, true)
	if len(got) != 1 {
		t.Fatalf("cached, retransmitted: %d replies", len(got))
	}
	pkt, err := codec.Decode(got[0])
	if err != nil || pkt.Flags&wire.FlagRetransmit == 0 || !bytes.Equal(pkt.Payload, []byte{9, 9, 9, 9, 9, 9, 9, 9}) {
		t.Fatalf("cached, retransmitted: %v %+v", err, pkt)
	}

	// Running, too old, below the floor, contended: dropped.
	for i, v := range []FrontVerdict{FrontRunning, FrontTooOld, FrontBelowFloor, FrontContended} {
		id := uint64(20 + i)
		front.set(id, v, nil)
		if got := send(id, false); len(got) != 0 {
			t.Fatalf("verdict %d: %d replies", v, len(got))
		}
	}

	// Answered by the server (Elsewhere): its own cache answers; and an id
	// its window never saw (its state gone) does not run.
	front.set(10, FrontElsewhere, nil)
	if got := send(10, true); len(got) != 1 {
		t.Fatalf("elsewhere, cached here: %d replies", len(got))
	}
	front.set(30, FrontElsewhere, nil)
	if got := send(30, false); len(got) != 0 {
		t.Fatalf("elsewhere, unknown here: %d replies", len(got))
	}
	if c := counter(reg); c != 1 {
		t.Fatalf("counter %d: one request ran, want 1", c)
	}

	// No state in the Front: the server's window alone.
	front.mu.Lock()
	front.noState = true
	front.mu.Unlock()
	if got := send(40, false); len(got) != 1 || counter(reg) != 2 {
		t.Fatalf("no Front state: %d replies, counter %d", len(got), counter(reg))
	}
	front.mu.Lock()
	_, told := front.done[40]
	front.mu.Unlock()
	if told {
		t.Fatal("the Front was told of a request it keeps no state for")
	}
	st := tn.srv.Stats()
	if st.FrontCacheHits != 2 || st.Requests != 2 {
		t.Fatalf("front cache hits %d, requests %d; want 2, 2", st.FrontCacheHits, st.Requests)
	}
}
