package tests

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/naam-project/naam/examples/chase"
	"github.com/naam-project/naam/host"
)

// TestChaseOverPeer: the chase example's walks and lookups through a host
// peer over loopback, at the node and at the client: the same replies and
// errors, one round trip at the node and up to one per node visited at
// the client (nodes a fetch already brought cost none; a request that
// fails before it reads, none at all).
func TestChaseOverPeer(t *testing.T) {
	cfg := chase.DefaultConfig()
	obj, err := chase.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n, err := host.Start(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	r, err := n.Register(chase.RegionName, cfg.RegionSize(), host.RegionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const length = 1000
	head, order, err := chase.BuildList(r.Bytes(), cfg, length, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.InstallWith(obj, cfg.InstallOptions()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := host.Dial(ctx, n.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.AddObject(obj, cfg.InstallOptions()); err != nil {
		t.Fatal(err)
	}
	walk, err := p.Handler(ctx, chase.HandlerWalk)
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := p.Handler(ctx, chase.HandlerLookup)
	if err != nil {
		t.Fatal(err)
	}
	if !walk.CanRunAtClient() || !lookup.CanRunAtClient() {
		t.Fatalf("walk and lookup must be able to run at the client: %v %v", walk.CanRunAtClient(), lookup.CanRunAtClient())
	}
	both := func(h *host.Handler, req []byte, maxRounds int) int {
		t.Helper()
		rn, in, en := p.CallPlaced(ctx, h, req, host.AtNode)
		rc, ic, ec := p.CallPlaced(ctx, h, req, host.AtClient)
		on, oc := outcomeOf(rn, en), outcomeOf(rc, ec)
		if on.err != "" || oc.err != "" || string(on.reply) != string(oc.reply) || on.code != oc.code || on.pos != oc.pos || on.fault != oc.fault {
			t.Fatalf("%s %x: at the node %+v (%v), at the client %+v (%v)", h, req, on, en, oc, ec)
		}
		if in.RoundTrips != 1 || ic.Placement != host.AtClient || (ic.RoundTrips < 1 && en == nil) || ic.RoundTrips > maxRounds {
			t.Errorf("%s %x: round trips at the node %d, at the client %d (at most %d)", h, req, in.RoundTrips, ic.RoundTrips, maxRounds)
		}
		return ic.RoundTrips
	}
	walkReq := func(from, hops uint32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, from), hops)
	}
	lookupReq := func(from uint32, key uint64) []byte {
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, from), 0), key)
	}
	for _, hops := range []uint32{1, 2, 5, 17, 40, 64} {
		for _, from := range []uint32{head, order[100], order[length-30], order[length-1]} {
			both(walk, walkReq(from, hops), int(hops)+1)
		}
	}
	// The list's nodes lie at random in 96 KiB: a walk of 64 hops fetches
	// nearly every node in a round trip of its own.
	if n := both(walk, walkReq(head, 64), 65); n < 48 {
		t.Errorf("a walk of 64 hops took %d round trips at the client, want nearly 64", n)
	}
	// Bad hop counts and an index past the region fail alike.
	both(walk, walkReq(head, 0), 1)
	both(walk, walkReq(head, 65), 1)
	both(walk, walkReq(cfg.Nodes+3, 4), 2)
	for _, key := range []uint64{0, 1, 30, 63, 64, 500, length + 7} {
		both(lookup, lookupReq(head, key), 65)
	}
	s := walk.PlacementStats()
	if s.Client == 0 || s.ClientRoundTrips < s.Client {
		t.Errorf("%+v", s)
	}
}
