package host_test

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/lang"
)

// TestInstallWithBindsRegions: the same program installed twice, locally
// and through a peer, each copy bound to a region of its own.
func TestInstallWithBindsRegions(t *testing.T) {
	srv, err := host.Start(host.Config{Name: "server"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, err := srv.Register("counters_a", 8*8, host.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := srv.Register("counters_b", 8*8, host.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(counterSource))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Install(obj); err == nil || !strings.Contains(err.Error(), `"counters"`) {
		t.Errorf("install without the region: %v", err)
	}
	pa, err := srv.InstallWith(obj, host.InstallOptions{Regions: map[string]string{"counters": "counters_a"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := host.Start(host.Config{Name: "client"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	peer, err := client.Dial(ctx, srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := peer.InstallWith(ctx, obj, host.InstallOptions{Regions: map[string]string{"counters": "nope"}}); err == nil || !strings.Contains(err.Error(), `"counters" (bound to "nope")`) {
		t.Errorf("bound to a missing region: %v", err)
	}
	if _, err := peer.InstallWith(ctx, obj, host.InstallOptions{Regions: map[string]string{"counters": "counters_b"}}); err != nil {
		t.Fatal(err)
	}
	// The local copy's add, then every add the peer lists: the other is
	// the peer's copy.
	local := pa.Handlers()[0].ID
	var remote uint32
	for _, h := range peer.Handlers() {
		if h.Name == "add" && h.ID != local {
			remote = h.ID
		}
	}
	if remote == 0 {
		t.Fatalf("the peer lists no second add: %v", peer.Handlers())
	}
	req := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), 3)
	for _, id := range []uint32{local, remote, remote} {
		if _, err := peer.CallID(ctx, id, req); err != nil {
			t.Fatal(err)
		}
	}
	// The node's cores wrote the counters; closing it waits for them, so
	// that the race detector, which sees no synchronisation over UDP,
	// sees the reads below after the writes.
	peer.Close()
	srv.Close()
	if va, vb := binary.LittleEndian.Uint64(a.Bytes()[8:]), binary.LittleEndian.Uint64(b.Bytes()[8:]); va != 3 || vb != 6 {
		t.Errorf("counters_a[1] = %d, counters_b[1] = %d; want 3 and 6", va, vb)
	}
}
