package chase

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/call/calltest"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/verifier"
)

const tenant = 3

type setup struct {
	nic    *nicrt.NIC
	region *nicrt.Region
	am     *Client
	rdma   *RDMAClient
	caller *calltest.Local
	ids    HandlerIDs
}

func newSetup(t testing.TB, cfg Config) *setup {
	t.Helper()
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nic.Close() })
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	r, err := nic.Register(tenant, cfg.Region, cfg.RegionSize(), nicrt.RegionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.InstallWith(tenant, obj, cfg.InstallOptions())
	if err != nil {
		t.Fatal(err)
	}
	ids, err := IDs(p)
	if err != nil {
		t.Fatal(err)
	}
	caller := &calltest.Local{NIC: nic, Tenant: tenant, Src: 1}
	return &setup{nic: nic, region: r, caller: caller, ids: ids,
		am:   NewClient(caller, ids),
		rdma: NewRDMAClient(&calltest.LocalReader{NIC: nic, Tenant: tenant, Src: 1, Region: r.Ref()}, cfg)}
}

func TestLayoutAndBounds(t *testing.T) {
	for _, cfg := range []Config{{}, {Nodes: 100, MaxHops: 8, Region: "l"}, {Nodes: 1 << 20, MaxHops: MaxMaxHops}} {
		obj, err := Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verifier.VerifyObject(obj, verifier.Config{})
		if err != nil {
			t.Fatalf("%+v: %+v", cfg, err)
		}
		c := cfg.withDefaults()
		if obj.Regions[0].Size != c.RegionSize() || obj.Regions[0].Name != RegionName || obj.Regions[0].Writable {
			t.Errorf("region %+v", obj.Regions[0])
		}
		w, l := obj.Handlers[0], obj.Handlers[1]
		if w.Name != HandlerWalk || l.Name != HandlerLookup {
			t.Fatalf("handlers %s %s", w.Name, l.Name)
		}
		if w.Args[1].Offset != 4 || l.Args[1].Offset != 8 || w.Results[1].Offset != 8 || w.Results[2].Offset != 16 || l.Results[1].Offset != 8 {
			t.Errorf("layouts: walk %+v → %+v, lookup %+v → %+v", w.Args, w.Results, l.Args, l.Results)
		}
		for _, e := range rep.Entries {
			t.Logf("%d hops: %s verified bound %d", c.MaxHops, e.Name, e.MaxInsns)
			if c.MaxHops == 64 && e.MaxInsns > nicrt.DefaultConfig().NICBudget {
				t.Errorf("a 64-hop %s is over the NIC budget", e.Name)
			}
		}
	}
	for _, cfg := range []Config{{MaxHops: MaxMaxHops + 1}, {Nodes: NIL}} {
		if _, err := Compile(cfg); err == nil {
			t.Errorf("%+v compiled", cfg)
		}
	}
}

// TestWalkAndLookup compares both clients with the list as built, for
// lists shorter and longer than the hop limit.
func TestWalkAndLookup(t *testing.T) {
	cfg := Config{Nodes: 4096, MaxHops: 64}
	s := newSetup(t, cfg)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	for _, length := range []int{1, 10, 64, 100} {
		clear(s.region.Bytes())
		head, order, err := BuildList(s.region.Bytes(), cfg, length, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, hops := range []uint32{1, 2, 7, 32, 63, 64} {
			amr, amErr := s.am.Walk(ctx, head, hops)
			rdr, rdErr := s.rdma.Walk(ctx, head, hops)
			if int(hops) > length {
				if !errors.Is(amErr, ErrEnd) || !errors.Is(rdErr, ErrEnd) {
					t.Errorf("len %d, %d hops: am %v, rdma %v, want ErrEnd", length, hops, amErr, rdErr)
				}
				continue
			}
			want := Result{Index: order[hops-1], Key: uint64(hops - 1), Value: ValueOf(uint64(hops - 1)), Hops: hops}
			if amErr != nil || rdErr != nil {
				t.Fatalf("len %d, %d hops: %v %v", length, hops, amErr, rdErr)
			}
			if amr.RoundTrips != 1 || rdr.RoundTrips != int(hops) {
				t.Errorf("%d hops: %d round trips by message, %d by READs", hops, amr.RoundTrips, rdr.RoundTrips)
			}
			amr.RoundTrips, rdr.RoundTrips = 0, 0
			if amr != want || rdr != want {
				t.Errorf("len %d, %d hops: am %+v, rdma %+v, want %+v", length, hops, amr, rdr, want)
			}
		}
		for _, key := range []uint64{0, 5, 63, 64, 99, 1000} {
			amr, amErr := s.am.Lookup(ctx, head, key)
			rdr, rdErr := s.rdma.Lookup(ctx, head, key)
			switch {
			case key >= uint64(length) && length < 64:
				if !errors.Is(amErr, ErrNotFound) || !errors.Is(rdErr, ErrNotFound) {
					t.Errorf("len %d, key %d: %v %v, want ErrNotFound", length, key, amErr, rdErr)
				}
			case key >= 64: // 64 nodes visited without the key, whether or not the list ends there
				if !errors.Is(amErr, ErrTooLong) || !errors.Is(rdErr, ErrTooLong) {
					t.Errorf("len %d, key %d: %v %v, want ErrTooLong", length, key, amErr, rdErr)
				}
			default:
				if amErr != nil || rdErr != nil || amr.Value != ValueOf(key) || rdr.Value != ValueOf(key) ||
					amr.Hops != uint32(key+1) || rdr.Hops != uint32(key+1) || amr.RoundTrips != 1 || rdr.RoundTrips != int(key+1) {
					t.Errorf("len %d, key %d: am %+v %v, rdma %+v %v", length, key, amr, amErr, rdr, rdErr)
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	cfg := Config{Nodes: 16, MaxHops: 8}
	s := newSetup(t, cfg)
	ctx := context.Background()
	head, _, err := BuildList(s.region.Bytes(), cfg, 16, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, hops := range []uint32{0, 9} {
		if _, err := s.am.Walk(ctx, head, hops); !errors.Is(err, ErrBadHops) {
			t.Errorf("am walk of %d hops: %v", hops, err)
		}
		if _, err := s.rdma.Walk(ctx, head, hops); !errors.Is(err, ErrBadHops) {
			t.Errorf("rdma walk of %d hops: %v", hops, err)
		}
	}
	// A head outside the region, and a corrupt link.
	if _, err := s.am.Walk(ctx, 16, 1); !isCode(err, bytecode.FailIndexOutOfRange) {
		t.Errorf("head 16 of 16 nodes: %v", err)
	}
	if _, err := s.rdma.Walk(ctx, 16, 1); err == nil {
		t.Error("rdma walk from node 16 of 16")
	}
	if err := SetNode(s.region.Bytes(), head, Node{Key: 100, Next: 999}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.am.Lookup(ctx, head, 5); !isCode(err, bytecode.FailIndexOutOfRange) {
		t.Errorf("corrupt link: %v", err)
	}
	if _, err := s.rdma.Lookup(ctx, head, 5); err == nil {
		t.Error("rdma followed a corrupt link")
	}
	// Short requests.
	if _, err := s.caller.Call(ctx, s.ids.Lookup, make([]byte, 12)); !isCode(err, bytecode.FailShortRequest) {
		t.Errorf("12-byte lookup: %v", err)
	}
	if _, _, err := BuildList(s.region.Bytes(), cfg, 17, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("a 17-node list in 16 slots")
	}
	if err := SetNode(s.region.Bytes(), 16, Node{}); err == nil {
		t.Error("SetNode past the region")
	}
}

func isCode(err error, code uint32) bool {
	c, ok := call.Code(err)
	return ok && c == code
}

// TestChaseCost logs what the 64-hop walk costs the NIC model: one
// message, its instructions and modelled time.
func TestChaseCost(t *testing.T) {
	cfg := DefaultConfig()
	s := newSetup(t, cfg)
	head, _, err := BuildList(s.region.Bytes(), cfg, 64, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	req := []byte{byte(head), byte(head >> 8), byte(head >> 16), byte(head >> 24), 64, 0, 0, 0}
	r := s.nic.Call(&nicrt.Message{Tenant: tenant, Handler: s.ids.Walk, Payload: req})
	if r.Status != nicrt.StatusOK || r.Placement != nicrt.PlaceNIC {
		t.Fatalf("%v %v %v", r.Status, r.Err, r.Placement)
	}
	t.Logf("64-hop walk: 1 message, %d instructions, modelled %d ns on the NIC", r.Insns, r.ModelNanos)
	if r.Insns < 64*4 {
		t.Errorf("%d instructions for 64 hops", r.Insns)
	}
}
