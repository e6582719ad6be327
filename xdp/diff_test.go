package xdp

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestDiffVerbs: READ, WRITE, CAS and FETCH-ADD, and every way they are
// refused, give the same replies and region bytes in XDP as in the NIC
// model.
func TestDiffVerbs(t *testing.T) {
	p := newPair(t, Config{})
	rw := p.region("rw", 4096, true, nil)
	ro := p.region("ro", 100, false, []byte("read-only bytes"))
	other, err := p.nic.Register(testTenant+1, "theirs", 64, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	xo, err := NewRegion(64)
	if err != nil {
		t.Fatal(err)
	}
	defer xo.Close()
	if err := p.tier.AddRegion(VerbRegion{ID: other.ID, Tenant: testTenant + 1, Key: other.Key, Writable: true}, xo); err != nil {
		t.Fatal(err)
	}
	ref, rref := rw.nic.Ref(), ro.nic.Ref()
	wrong := ref
	wrong.Key ^= 1
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		p.call(nicrt.HandlerFetchAdd, wire.AppendFetchAdd(nil, ref, uint64(r.IntN(16))*8, r.Uint64()%1000))
	}
	cases := [][]byte{
		wire.AppendWrite(nil, ref, 100, []byte("hello, xdp")),
		wire.AppendRead(nil, ref, 96, 20),
		wire.AppendRead(nil, ref, 0, 1408),
		wire.AppendRead(nil, ref, 4000, 96),
		wire.AppendRead(nil, ref, 4000, 97),       // out of bounds
		wire.AppendRead(nil, ref, 0, 1409),        // too large
		wire.AppendRead(nil, ref, 1<<40, 1),       // out of bounds
		wire.AppendRead(nil, wrong, 0, 8),         // wrong key
		wire.AppendRead(nil, rref, 0, 15),         // read-only is readable
		wire.AppendWrite(nil, rref, 0, []byte{1}), // read-only
		wire.AppendFetchAdd(nil, rref, 0, 1),      // read-only
		wire.AppendFetchAdd(nil, ref, 4, 1),       // misaligned
		wire.AppendFetchAdd(nil, ref, 4088, 1),    // the last word
		wire.AppendFetchAdd(nil, ref, 4096, 1),    // out of bounds
		wire.AppendCAS(nil, ref, 8, 0, 5),         // fails or not, as in the model
		wire.AppendCAS(nil, ref, 16, 12345, 5),
		wire.AppendFetchAdd(nil, other.Ref(), 0, 1),         // foreign region
		wire.AppendRead(nil, ref, 0, 8)[:23],                // bad request: short
		append(wire.AppendFetchAdd(nil, ref, 0, 1), 0),      // bad request: long
		wire.AppendWrite(nil, ref, 4090, []byte("1234567")), // out of bounds
		wire.AppendWrite(nil, ref, 4089, []byte("1234567")),
		wire.AppendWrite(nil, ref, 0, make([]byte, 1392)),
	}
	for _, c := range cases {
		p.call(nicrt.HandlerRead, c)
		p.call(nicrt.HandlerWrite, c)
		p.call(nicrt.HandlerCAS, c)
		p.call(nicrt.HandlerFetchAdd, c)
	}
	// The CAS old value read back, and a CAS that succeeds.
	old := binary.LittleEndian.Uint64(p.call(nicrt.HandlerRead, wire.AppendRead(nil, ref, 24, 8)))
	p.call(nicrt.HandlerCAS, wire.AppendCAS(nil, ref, 24, old, 777))
	if got := binary.LittleEndian.Uint64(rw.xdp.Bytes()[24:]); got != 777 {
		t.Fatalf("CAS from %d to 777 left %d", old, got)
	}
}
