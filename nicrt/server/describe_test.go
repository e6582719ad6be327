package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestNetDescribe: a client that knows only the address (dst 0) learns the
// node id, the tenant's programs with layouts and its regions, over
// several pages; another tenant sees none of it; any other op sent to
// dst 0 is dropped.
func TestNetDescribe(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	ctx := context.Background()
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	anon, err := caller.Dial(conn, tn.addr, caller.ClientConfig{Node: 5, Keys: tn.keys, MaxTries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	d, err := anon.Describe(ctx, tenantA)
	if err != nil || d.Node != serverNode || len(d.Programs) != 0 || len(d.Regions) != 0 {
		t.Fatalf("empty node: %+v %v", d, err)
	}
	if _, err := anon.NodeStats(ctx, tenantA, "x"); !errors.Is(err, caller.ErrTimeout) {
		t.Errorf("stats to dst 0: %v, want a timeout (dropped)", err)
	}

	const nregions, nprogs = 40, 12
	for i := range nregions {
		if _, err := tn.nic.Register(tenantA, fmt.Sprintf("region_%02d", i), 64, nicrt.RegionOptions{Writable: i%2 == 0, NICMem: i%3 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "pair.naam", []byte(`
region region_00: [u64; 8] rw

handler put(slot: u64, value: u64) -> (old: u64, ok: bool) {
    if slot >= 8 {
        fail(1)
    }
    let o = region_00[slot]
    region_00[slot] = value
    return o, true
}

handler get(slot: u64) -> u64 {
    if slot >= 8 {
        fail(1)
    }
    return region_00[slot]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	for range nprogs {
		if _, err := tn.nic.Install(tenantA, obj); err != nil {
			t.Fatal(err)
		}
	}
	d, err = anon.Describe(ctx, tenantA)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Programs) != nprogs || len(d.Regions) != nregions {
		t.Fatalf("described %d programs and %d regions, want %d and %d", len(d.Programs), len(d.Regions), nprogs, nregions)
	}
	if pages := tn.srv.Stats().Control; pages < 3 {
		t.Errorf("%d control packets: the description should need several pages", pages)
	}
	for i, p := range d.Programs {
		if p.Source != "pair.naam" || len(p.Handlers) != 2 {
			t.Fatalf("programs[%d] = %+v", i, p)
		}
		put := p.Handlers[0]
		want := []wire.Field{{Name: "slot", Type: "u64", Offset: 0, Size: 8}, {Name: "value", Type: "u64", Offset: 8, Size: 8}}
		if put.Name != "put" || fmt.Sprint(put.Args) != fmt.Sprint(want) || len(put.Results) != 2 || put.Results[1].Type != "bool" {
			t.Fatalf("programs[%d].handlers[0] = %+v", i, put)
		}
		// What a caller needs to run get itself: the object's digest, and
		// the verifier's word that get is client-eligible and put (a
		// store) is not, with the bound.
		prog, _ := tn.nic.Program(p.Program)
		if get := p.Handlers[1]; p.Digest == 0 || p.Digest != prog.Digest || put.Client || put.MaxInsns != 0 ||
			!get.Client || get.MaxInsns != prog.Report.MaxInsns {
			t.Fatalf("programs[%d]: digest %x (installed %x), put %+v, get %+v", i, p.Digest, prog.Digest, put, get)
		}
		if got, err := anon.Call(ctx, tenantA, put.ID, make([]byte, 16)); !errors.Is(err, caller.ErrTimeout) {
			t.Fatalf("a request to dst 0 ran: %x %v", got, err)
		}
	}
	for i, r := range d.Regions {
		reg, _ := tn.nic.Region(r.Region)
		if reg == nil || r.Name != fmt.Sprintf("region_%02d", i) || r.Key != reg.Key || r.Size != 64 || r.Writable != (i%2 == 0) ||
			(r.Placement == wire.PlacementNICMem) != (i%3 == 0) {
			t.Fatalf("regions[%d] = %+v", i, r)
		}
	}
	// The same client, now knowing the id, reads a region with the key.
	named := tn.client(t, caller.ClientConfig{Node: 6}, nil)
	ref := nicrt.RegionRef{ID: d.Regions[0].Region, Key: d.Regions[0].Key}
	if b, err := named.Read(ctx, tenantA, ref, 0, 8); err != nil || len(b) != 8 {
		t.Fatalf("read with the described key: %x %v", b, err)
	}
	if other, err := named.Describe(ctx, tenantB); err != nil || len(other.Programs)+len(other.Regions) != 0 {
		t.Errorf("tenant B sees %+v, %v", other, err)
	}
	var past wire.DescribeReply
	if err := named.Control(ctx, tenantA, &wire.DescribeRequest{Cursor: regionCursor | 1000}, &past); err != nil || len(past.Programs)+len(past.Regions) != 0 || past.Next != 0 {
		t.Errorf("cursor past the end: %+v %v", past, err)
	}
	// Pages name items by id: a program removed between pages does not
	// make the next page skip one that stayed.
	var first wire.DescribeReply
	if err := named.Control(ctx, tenantA, &wire.DescribeRequest{}, &first); err != nil || first.Next == 0 || len(first.Programs) == 0 {
		t.Fatalf("first page: %+v %v", first, err)
	}
	gone, _ := tn.nic.Program(first.Programs[0].Program)
	if err := tn.nic.Uninstall(gone); err != nil {
		t.Fatal(err)
	}
	rest := map[uint64]bool{}
	for cursor := first.Next; cursor != 0; {
		var page wire.DescribeReply
		if err := named.Control(ctx, tenantA, &wire.DescribeRequest{Cursor: cursor}, &page); err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Programs {
			rest[p.Program] = true
		}
		cursor = page.Next
	}
	for _, p := range d.Programs[len(first.Programs):] {
		if !rest[p.Program] {
			t.Errorf("program %d was skipped after an earlier one was uninstalled", p.Program)
		}
	}
}
