package host

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond every 20 ms until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func memberNames(n *Node) []string {
	var names []string
	for _, m := range n.Members() {
		names = append(names, m.Name)
	}
	return names
}

// TestMembership: three nodes join through a seed, see each other with
// their programs, call each other by name; one dies, the others' calls to
// it end with errors within their deadline and they keep serving; it comes
// back under the same name and is called again.
func TestMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("membership needs seconds of failure detection")
	}
	ctx := testCtx(t)
	seed := startDemo(t, Config{Name: "n1", Gossip: "127.0.0.1:0"})
	n2 := startDemo(t, Config{Name: "n2", Join: []string{seed.GossipAddr()}})
	n3 := startDemo(t, Config{Name: "n3", Join: []string{seed.GossipAddr()}})
	for _, n := range []*Node{seed, n2, n3} {
		waitFor(t, n.Name()+" to see 3 members with their programs", func() bool {
			for _, m := range n.Members() {
				if !slices.Equal(m.Programs, []string{"demo"}) {
					return false
				}
			}
			return slices.Equal(memberNames(n), []string{"n1", "n2", "n3"})
		})
	}
	for _, m := range n2.Members() {
		if m.ID != NodeID(m.Name) || !m.Addr.IsValid() || !slices.Equal(m.Programs, []string{"demo"}) || m.State != "alive" {
			t.Errorf("member %+v", m)
		}
	}
	// Everyone calls everyone by name.
	for _, from := range []*Node{seed, n2, n3} {
		for _, to := range []string{"n1", "n2", "n3"} {
			p, err := from.Peer(ctx, to)
			if err != nil {
				t.Fatal(err)
			}
			var v uint64
			if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{0, 1}, &v); err != nil {
				t.Fatalf("%s → %s: %v", from.Name(), to, err)
			}
			if _, err := p.FetchAdd(ctx, "counters", 8, 1); err != nil {
				t.Fatalf("%s → %s fetch-add: %v", from.Name(), to, err)
			}
		}
	}
	if _, err := n2.Peer(ctx, "n9"); err == nil {
		t.Error("a peer that is not a member")
	}
	// n3 dies without leaving: its socket and gossip go away at once.
	p23, _ := n2.Peer(ctx, "n3")
	n3.ml.Shutdown()
	n3.mlDown = true
	n3.srv.Close()
	deadline := 500 * time.Millisecond
	start := time.Now()
	var v uint64
	err := p23.Call(ctxTimeout(t, deadline), "incr", struct{ Slot, By uint64 }{0, 1}, &v)
	if err == nil || time.Since(start) > deadline+time.Second { // a hang, not scheduling noise
		t.Fatalf("call to a dead node: %v after %v", err, time.Since(start))
	}
	waitFor(t, "n2 to declare n3 dead", func() bool { return !slices.Contains(memberNames(n2), "n3") })
	if err := p23.Call(ctx, "incr", struct{ Slot, By uint64 }{0, 1}, &v); !errors.Is(err, ErrPeerDown) {
		t.Errorf("call to a node declared dead: %v", err)
	}
	p21, _ := n2.Peer(ctx, "n1")
	if err := p21.Call(ctx, "incr", struct{ Slot, By uint64 }{0, 1}, &v); err != nil {
		t.Errorf("the others keep serving: %v", err)
	}
	n3.Close()
	// n3 comes back as a new process would: same name, new ports, a
	// moment later (memberlist hands a dead node's name to a new address
	// once it has been dead 100 ms).
	time.Sleep(300 * time.Millisecond)
	n3b := startDemo(t, Config{Name: "n3", Join: []string{seed.GossipAddr()}})
	waitFor(t, "n2 to see n3 again", func() bool {
		for _, m := range n2.Members() {
			if m.Name == "n3" && m.Addr == n3b.Addr() {
				return true
			}
		}
		return false
	})
	p23b, err := n2.Peer(ctx, "n3")
	if err != nil || p23b == p23 {
		t.Fatalf("peer after rejoin: %v (same as before: %v)", err, p23b == p23)
	}
	if err := p23b.Call(ctx, "incr", struct{ Slot, By uint64 }{0, 1}, &v); err != nil || v != 1 {
		t.Errorf("call to the rejoined node: %d %v", v, err)
	}
}

// TestAdvertise: a node on 0.0.0.0 with membership must say where others
// reach it, and gossips that address.
func TestAdvertise(t *testing.T) {
	if _, err := Start(Config{Listen: "0.0.0.0:0", Gossip: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "set Advertise") {
		t.Errorf("0.0.0.0 with membership and no Advertise: %v", err)
	}
	n, err := Start(Config{Listen: "0.0.0.0:0", Advertise: "127.0.0.1", Gossip: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	waitFor(t, "the member list", func() bool { return len(n.Members()) == 1 })
	if m := n.Members()[0]; m.Addr.Addr().String() != "127.0.0.1" || m.Addr.Port() != n.Addr().Port() {
		t.Errorf("gossiped %v for a node on %v", m.Addr, n.Addr())
	}
}

// FuzzMeta: a member's metadata of any bytes is refused or read, never a
// panic.
func FuzzMeta(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeMeta(b)
	})
}
