package host

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

const forwardSource = `
region counters: [u64; 4] rw

// add_here adds by to this node's counter.
handler add_here(at: u64, by: u64) -> u64 {
    counters[0] += by
    return counters[0]
}

// add_at hands the request to add_here on node at, which answers.
handler add_at(at: u64, by: u64) -> u64 {
    forward(at, add_here)
}

// note_at tells node at, one way, to add by.
handler note_at(at: u64, by: u64) -> bool {
    var msg: [u64; 2]
    msg[0] = at
    msg[1] = by
    return send(at, add_here, msg)
}
`

// TestForwardThroughMembership: a handler on one node forwards to a node
// it knows from membership, which answers the caller directly; send
// reaches it one way.
func TestForwardThroughMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("membership")
	}
	ctx := testCtx(t)
	obj, err := compiler.Compile(lang.NewFileSet(), "fwd.naam", []byte(forwardSource))
	if err != nil {
		t.Fatal(err)
	}
	start := func(cfg Config) *Node {
		n, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		if _, err := n.Register("counters", 32, RegionOptions{Writable: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Install(obj); err != nil {
			t.Fatal(err)
		}
		return n
	}
	a := start(Config{Name: "a", Gossip: "127.0.0.1:0"})
	b := start(Config{Name: "b", Join: []string{a.GossipAddr()}})
	waitFor(t, "a to know b", func() bool {
		for _, m := range a.Members() {
			if m.Name == "b" && m.Addr.IsValid() {
				return true
			}
		}
		return false
	})
	caller, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	var v uint64
	for i := range 10 {
		if err := caller.Call(ctx, "add_at", struct{ At, By uint64 }{uint64(b.ID()), 3}, &v); err != nil || v != uint64(3*(i+1)) {
			t.Fatalf("forwarded call %d: %d %v", i, v, err)
		}
	}
	var ok bool
	if err := caller.Call(ctx, "note_at", struct{ At, By uint64 }{uint64(b.ID()), 100}, &ok); err != nil || !ok {
		t.Fatalf("send: %v %v", ok, err)
	}
	pb, err := Dial(ctx, b.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	waitFor(t, "the one-way message to arrive", func() bool {
		err := pb.Call(ctx, "add_here", struct{ At, By uint64 }{0, 0}, &v)
		return err == nil && v == 130
	})
	// a's own counter was never touched.
	if err := caller.Call(ctx, "add_here", struct{ At, By uint64 }{0, 0}, &v); err != nil || v != 0 {
		t.Errorf("a's counter: %d %v", v, err)
	}
	// A node a does not know: the forward is refused.
	var he *HandlerError
	if err := caller.Call(ctx, "add_at", struct{ At, By uint64 }{12345, 1}, &v); !errors.As(err, &he) {
		t.Errorf("forward to an unknown node: %v", err)
	}
}

// TestForwardStaticPeers: without membership, a node dials the peers it
// was given (waiting for one that starts later) and forwards to them.
func TestForwardStaticPeers(t *testing.T) {
	ctx := testCtx(t)
	obj, err := compiler.Compile(lang.NewFileSet(), "fwd.naam", []byte(forwardSource))
	if err != nil {
		t.Fatal(err)
	}
	// b's address is taken before b starts, so that a dials it in vain
	// first.
	probe, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	bAddr := probe.Addr().String()
	probe.Close()
	a, err := Start(Config{Name: "a", Peers: []string{bAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Start(Config{Name: "b", Listen: bAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, n := range []*Node{a, b} {
		if _, err := n.Register("counters", 32, RegionOptions{Writable: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Install(obj); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a to reach b", func() bool { _, ok := a.srv.Peer(b.ID()); return ok })
	caller, err := Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	var v uint64
	if err := caller.Call(ctx, "add_at", struct{ At, By uint64 }{uint64(b.ID()), 7}, &v); err != nil || v != 7 {
		t.Fatalf("forward to a static peer: %d %v", v, err)
	}
	if _, err := Start(Config{Peers: []string{"not an address"}}); err == nil {
		t.Error("a bad peer address was accepted")
	}
}
