package peer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// placedNode starts a node with testdata/placed.naam installed and its
// region filled with counters[i] = 100·i.
func placedNode(t testing.TB) (*host.Node, *host.Region, *bytecode.Object) {
	t.Helper()
	n, err := host.Start(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	r, err := n.Register("counters", 16*8, host.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		binary.LittleEndian.PutUint64(r.Bytes()[8*i:], uint64(100*i))
	}
	src, err := os.ReadFile("testdata/placed.naam")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "placed.naam", src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Install(obj); err != nil {
		t.Fatal(err)
	}
	return n, r, obj
}

func dialPlaced(t testing.TB, n *host.Node, obj *bytecode.Object, cfg peer.Config) *peer.Peer {
	t.Helper()
	key, err := wire.NewKey(peer.DevSecret)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node, cfg.Tenant, cfg.Keys = 77, 1, wire.KeyMap{1: key}
	p, err := peer.DialConfig(testContext(t), n.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if obj != nil {
		if err := p.AddObject(obj, wire.InstallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// regionBytes reads the node's counters with a READ, which orders it
// after the handlers' runs.
func regionBytes(t *testing.T, n *host.Node) []byte {
	t.Helper()
	p := dialPlaced(t, n, nil, peer.Config{})
	b, err := p.Read(testContext(t), "counters", 0, 16*8)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestObjectDigest: the peer's digest of an object is the node's.
func TestObjectDigest(t *testing.T) {
	_, _, obj := placedNode(t)
	want, err := nicrt.ProgramDigest(obj)
	if err != nil {
		t.Fatal(err)
	}
	if have := peer.ObjectDigest(obj); have != want {
		t.Fatalf("digest %x, the node's %x", have, want)
	}
}

// TestClientEligibility: the node's description says which handlers may
// run at the client, and only those whose object the caller holds can.
func TestClientEligibility(t *testing.T) {
	n, _, obj := placedNode(t)
	bare := dialPlaced(t, n, nil, peer.Config{})
	p := dialPlaced(t, n, obj, peer.Config{})
	for _, tc := range []struct {
		name     string
		eligible bool
	}{{"get", true}, {"bump", true}, {"swap", true}, {"set", false}} {
		h, err := p.Handler(testContext(t), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := bare.Handler(testContext(t), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if h.ClientEligible != tc.eligible || h.CanRunAtClient() != tc.eligible || (tc.eligible && h.MaxInsns == 0) {
			t.Errorf("%s: eligible %v, can run at the client %v, bound %d; want %v", tc.name, h.ClientEligible, h.CanRunAtClient(), h.MaxInsns, tc.eligible)
		}
		if hb.ClientEligible != tc.eligible || hb.CanRunAtClient() {
			t.Errorf("%s without the object: eligible %v, can run at the client %v", tc.name, hb.ClientEligible, hb.CanRunAtClient())
		}
	}
}

type placedOp struct {
	handler string
	args    any
}

type slotArgs struct{ Slot uint64 }
type bumpArgs struct{ Slot, By uint64 }
type swapArgs struct{ Slot, Old, New uint64 }
type setArgs struct{ Slot, V uint64 }

func placedOps() []placedOp {
	var ops []placedOp
	for i := range uint64(18) {
		ops = append(ops,
			placedOp{"get", slotArgs{i}},
			placedOp{"bump", bumpArgs{i, i + 1}},
			placedOp{"swap", swapArgs{i, 100*i + i + 1, 7}},
			placedOp{"swap", swapArgs{i, 1, 2}},
			placedOp{"get", slotArgs{i}},
			placedOp{"set", setArgs{i, 3 * i}},
			placedOp{"bump", bumpArgs{i, 1 << 40}},
			placedOp{"get", slotArgs{i}},
		)
	}
	return ops
}

type outcome struct {
	value uint64
	code  uint32
	pos   string
	err   string
}

func runOps(t *testing.T, p *peer.Peer, pl peer.Placement) []outcome {
	t.Helper()
	ctx := testContext(t)
	var out []outcome
	for _, op := range placedOps() {
		h, err := p.Handler(ctx, op.handler)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := h.Encode(nil, op.args)
		if err != nil {
			t.Fatal(err)
		}
		reply, info, err := p.CallPlaced(ctx, h, payload, pl)
		want := peer.AtNode
		if pl == peer.AtClient && h.CanRunAtClient() {
			want = peer.AtClient
		}
		if info.Placement != want {
			t.Fatalf("%s %+v ran at %v, want %v", op.handler, op.args, info.Placement, want)
		}
		var o outcome
		var he *peer.HandlerError
		switch {
		case errors.As(err, &he):
			o.code, o.pos = he.Code, he.Pos
		case err != nil:
			o.err = err.Error()
		default:
			if err := h.Decode(reply, &o.value); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, o)
	}
	return out
}

// TestPlacementDifferential runs the same calls on two nodes that start
// alike, at the node on one and at the client (where the handler can run
// there) on the other, over loopback: every reply, handler error (code
// and source position) and the regions' bytes afterwards are the same.
func TestPlacementDifferential(t *testing.T) {
	nn, _, obj := placedNode(t)
	cn, _, _ := placedNode(t)
	atNode := runOps(t, dialPlaced(t, nn, obj, peer.Config{}), peer.AtNode)
	pc := dialPlaced(t, cn, obj, peer.Config{})
	atClient := runOps(t, pc, peer.AtClient)
	for i, op := range placedOps() {
		if atNode[i] != atClient[i] {
			t.Errorf("op %d %s %+v: at the node %+v, at the client %+v", i, op.handler, op.args, atNode[i], atClient[i])
		}
	}
	if bn, bc := regionBytes(t, nn), regionBytes(t, cn); !bytes.Equal(bn, bc) {
		t.Errorf("regions differ:\nnode   %x\nclient %x", bn, bc)
	}
	if atNode[1].code != 0 || atNode[len(atNode)-1].code != 7 || atNode[len(atNode)-1].pos == "" {
		t.Errorf("the ops did not do what they test: %+v … %+v", atNode[1], atNode[len(atNode)-1])
	}
	for _, s := range pc.PlacementStats() {
		switch s.Handler {
		case "placed.set":
			if s.Client != 0 || s.Node != 18 || s.NotAtClient != 18 {
				t.Errorf("%+v", s)
			}
		case "placed.get":
			if s.Client != 54 || s.Node != 0 || s.ClientRoundTrips < 48 {
				t.Errorf("%+v", s)
			}
		}
	}
}

// TestPlacementAuto: Auto measures both options and counts each
// decision; probes (at most one call in 64) keep the option it did not
// choose measured.
func TestPlacementAuto(t *testing.T) {
	n, _, obj := placedNode(t)
	p := dialPlaced(t, n, obj, peer.Config{Placement: peer.Auto})
	ctx := testContext(t)
	const calls = 3000
	for i := range calls {
		var v uint64
		if err := p.Call(ctx, "get", uint64(i%16), &v); err != nil {
			t.Fatal(err)
		}
		if v != uint64(100*(i%16)) {
			t.Fatalf("get %d = %d", i%16, v)
		}
	}
	h, _ := p.Handler(ctx, "get")
	s := h.PlacementStats()
	if s.Node+s.Client != calls || s.Auto != calls || s.Probes == 0 || s.Probes > calls/256 || s.Node == 0 || s.Client == 0 ||
		s.NodeTime <= 0 || s.ClientTime <= 0 || s.Choice == "" {
		t.Fatalf("%+v", s)
	}
	t.Logf("%+v", s)
}

// TestPlacementExactlyOnce flips the placement of FETCH-ADD calls between
// the node and the client while they are in flight, over a link that
// loses, duplicates and reorders packets both ways: every call adds once
// (the counter ends at the number of calls, and the values the calls saw
// are all different).
func TestPlacementExactlyOnce(t *testing.T) {
	n, _, obj := placedNode(t)
	var mu sync.Mutex
	var lossy []*transporttest.Lossy
	faults := transporttest.Faults{Drop: 0.1, Duplicate: 0.1, Reorder: 0.1}
	p := dialPlaced(t, n, obj, peer.Config{
		WrapConn: func(c transport.Conn) transport.Conn {
			l, err := transporttest.NewLossy(c, transporttest.LossyConfig{Seed: 7, Send: faults, Recv: faults})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			lossy = append(lossy, l)
			mu.Unlock()
			return l
		},
	})
	ctx := testContext(t)
	const workers, each = 8, 60
	seen := make(chan uint64, workers*each)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	flips := 0
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for pl := peer.AtClient; ; pl ^= peer.AtClient ^ peer.AtNode {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			p.SetPlacement(pl)
			flips++
		}
	}()
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				var old uint64
				if err := p.Call(ctx, "bump", bumpArgs{Slot: 3, By: 1}, &old); err != nil {
					errs <- err
					return
				}
				seen <- old
			}
		})
	}
	wg.Wait()
	close(stop)
	<-flipped
	close(seen)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for v := range seen {
		if got[v] {
			t.Errorf("two calls saw %d", v)
		}
		got[v] = true
	}
	if v := binary.LittleEndian.Uint64(regionBytes(t, n)[3*8:]); v != 300+workers*each {
		t.Errorf("counter %d, want %d", v, 300+workers*each)
	}
	h, _ := p.Handler(ctx, "bump")
	s := h.PlacementStats()
	mu.Lock()
	ls := lossy[0].Stats()
	mu.Unlock()
	if s.Node == 0 || s.Client == 0 || s.Node+s.Client != workers*each || ls.Send.Dropped == 0 || ls.Recv.Duplicated == 0 {
		t.Errorf("the test did not test: %d flips, %+v, %+v", flips, s, ls)
	}
	if cs := p.ClientStats(); cs.Retransmits == 0 {
		t.Errorf("no retransmissions: %+v", cs)
	}
}

// TestPlacementGo: asynchronous calls run at the client too, each once.
func TestPlacementGo(t *testing.T) {
	n, _, obj := placedNode(t)
	p := dialPlaced(t, n, obj, peer.Config{Placement: peer.AtClient})
	ctx := testContext(t)
	const calls = 200
	done := make(chan *peer.Call, calls)
	olds := make([]uint64, calls)
	for i := range calls {
		p.Go(ctx, "bump", bumpArgs{Slot: 5, By: 1}, &olds[i], done)
	}
	seen := map[uint64]bool{}
	for range calls {
		c := <-done
		if c.Error != nil {
			t.Fatal(c.Error)
		}
		v := *c.Result.(*uint64)
		if seen[v] || v < 500 || v >= 500+calls {
			t.Errorf("a call saw %d", v)
		}
		seen[v] = true
	}
	h, _ := p.Handler(ctx, "bump")
	if s := h.PlacementStats(); s.Client != calls || s.Node != 0 {
		t.Errorf("%+v", s)
	}
}

// TestKeepAtClient: the ranges KeepAtClient names serve later runs at the
// client from the bytes kept (old ones, after the node's change) until
// they are replaced; bad ranges are refused.
func TestKeepAtClient(t *testing.T) {
	n, _, obj := placedNode(t)
	p := dialPlaced(t, n, obj, peer.Config{Placement: peer.AtClient})
	ctx := testContext(t)
	get := func(slot uint64) (uint64, int) {
		t.Helper()
		h, err := p.Handler(ctx, "get")
		if err != nil {
			t.Fatal(err)
		}
		reply, info, err := p.CallPlaced(ctx, h, binary.LittleEndian.AppendUint64(nil, slot), peer.AtClient)
		if err != nil || info.Placement != peer.AtClient {
			t.Fatalf("get %d: %v at %v", slot, err, info.Placement)
		}
		return binary.LittleEndian.Uint64(reply), info.RoundTrips
	}
	// Slots 0…3 are kept, a unit each (the runner exists: AddObject made
	// it).
	var slots []bytecode.AccessRange
	for i := range uint32(4) {
		slots = append(slots, bytecode.AccessRange{Region: 0, Offset: 8 * i, Length: 8})
	}
	if err := p.KeepAtClient(obj, clientrun.Keep{Ranges: slots}); err != nil {
		t.Fatal(err)
	}
	if v, rt := get(2); v != 200 || rt != 1 {
		t.Fatalf("first get 2: %d in %d round trips", v, rt)
	}
	// The node's change, by WRITE, which orders it with the node's READs.
	for off, v := range map[uint64]uint64{16: 222, 8 * 9: 999} {
		if err := p.Write(ctx, "counters", off, binary.LittleEndian.AppendUint64(nil, v)); err != nil {
			t.Fatal(err)
		}
	}
	if v, rt := get(2); v != 200 || rt != 0 {
		t.Fatalf("kept get 2: %d in %d round trips, want the kept 200 in 0", v, rt)
	}
	if v, rt := get(9); v != 999 || rt != 1 {
		t.Fatalf("get 9 (not kept): %d in %d round trips", v, rt)
	}
	if err := p.KeepAtClient(obj, clientrun.Keep{}); err != nil {
		t.Fatal(err)
	}
	if v, _ := get(2); v != 222 {
		t.Fatalf("get 2 after the zero Keep: %d, want 222", v)
	}
	// Before AddObject: the runner it makes takes the ranges.
	q := dialPlaced(t, n, nil, peer.Config{Placement: peer.AtClient})
	if err := q.KeepAtClient(obj, clientrun.Keep{Ranges: []bytecode.AccessRange{{Region: 0, Offset: 16, Length: 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := q.AddObject(obj, wire.InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := q.Handler(ctx, "get")
	if err != nil {
		t.Fatal(err)
	}
	for try, want := range []int{1, 0} {
		_, info, err := q.CallPlaced(ctx, h, binary.LittleEndian.AppendUint64(nil, 2), peer.AtClient)
		if err != nil || info.RoundTrips != want {
			t.Fatalf("get 2 through a peer that kept before AddObject, try %d: %v, %d round trips, want %d", try, err, info.RoundTrips, want)
		}
	}
	for _, tc := range []struct {
		obj    *bytecode.Object
		ranges []bytecode.AccessRange
		want   string
	}{
		{nil, nil, "nil object"},
		{obj, []bytecode.AccessRange{{Region: 0, Offset: 120, Length: 16}}, "keep range 0: bytes 120…136"},
		{obj, []bytecode.AccessRange{{Region: 0, Length: 8}, {Region: 1, Length: 8}}, "keep range 1: region 1"},
	} {
		if err := p.KeepAtClient(tc.obj, clientrun.Keep{Ranges: tc.ranges}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KeepAtClient(%v): %v, want %q", tc.ranges, err, tc.want)
		}
	}
}
