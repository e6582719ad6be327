package xdp

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// counterOf returns one counter's value.
func counterOf(t testing.TB, tier *Tier, name string) uint64 {
	t.Helper()
	cs, err := tier.Counters()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == "xdp."+name {
			return c.Value
		}
	}
	t.Fatalf("no counter xdp.%s", name)
	return 0
}

// faaPair is a pair with a counter region and FETCH-ADD served in XDP.
func faaPair(t testing.TB) (*pair, *pairRegion) {
	p := newPair(t, Config{})
	return p, p.region("counter", 64, true, nil)
}

func (p *pair) sealed(h wire.Header, payload []byte) []byte {
	p.t.Helper()
	b, err := p.codec.Encode(nil, &h, payload)
	if err != nil {
		p.t.Fatal(err)
	}
	return frameOf(b)
}

func faaHeader(id uint64) wire.Header {
	return wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: nicrt.HandlerFetchAdd, RequestID: id, Src: testClient, Dst: testNode}
}

// TestDuplicates: a retransmission of a request answered in XDP gets
// the cached reply datagram, with the retransmit flag and sealed again,
// byte for byte what the user-space node would send, and does not run
// again; an id a full window below the newest is dropped as a replay.
func TestDuplicates(t *testing.T) {
	p, c := faaPair(t)
	req := wire.AppendFetchAdd(nil, c.nic.Ref(), 0, 5)
	first := p.sealed(faaHeader(100), req)
	act, out, err := p.tier.Run(first)
	if err != nil || act != xdpTx {
		t.Fatalf("first: %d %v", act, err)
	}
	reply := append([]byte(nil), datagramOf(t, out)...)
	repeat := repeatOf(t, p.codec, reply)
	h := faaHeader(100)
	h.Flags = wire.FlagRetransmit
	for i, f := range [][]byte{first, p.sealed(h, req)} {
		act, out, err := p.tier.Run(f)
		if err != nil || act != xdpTx {
			t.Fatalf("duplicate %d: %d %v", i, act, err)
		}
		if again := datagramOf(t, out); !bytes.Equal(again, repeat) {
			t.Fatalf("duplicate %d answered\n%x\nnot the cached reply as a repeat\n%x", i, again, repeat)
		}
	}
	if v := binary.LittleEndian.Uint64(c.xdp.Bytes()); v != 5 {
		t.Fatalf("counter %d after one FETCH-ADD of 5 and two duplicates", v)
	}
	if n := counterOf(t, p.tier, "cache_hits"); n != 2 {
		t.Fatalf("cache_hits %d, want 2", n)
	}
	// Move the window 1024 ids on: id 100 is too old now.
	for id := uint64(101); id <= 100+wire.WindowSize; id++ {
		if act, _, _ := p.tier.Run(p.sealed(faaHeader(id), req)); act != xdpTx {
			t.Fatalf("id %d: action %d", id, act)
		}
	}
	for _, id := range []uint64{100, 99} {
		if act, _, _ := p.tier.Run(p.sealed(faaHeader(id), req)); act != xdpDrop {
			t.Fatalf("replay of id %d: action %d, want a drop", id, act)
		}
	}
	if n := counterOf(t, p.tier, "drop.replay_too_old"); n != 2 {
		t.Fatalf("drop.replay_too_old %d, want 2", n)
	}
	if v := binary.LittleEndian.Uint64(c.xdp.Bytes()); v != 5*(1+wire.WindowSize) {
		t.Fatalf("counter %d, want %d", v, 5*(1+wire.WindowSize))
	}
}

// TestForgeries: packets under another key, for another node, and every
// single-bit alteration of a sealed request. The tier answers exactly
// those the user-space codec accepts (none of the altered ones but the
// alterations outside the datagram it ignores), drops the forgeries it
// can authenticate and counts them, and runs nothing.
func TestForgeries(t *testing.T) {
	p, c := faaPair(t)
	req := wire.AppendFetchAdd(nil, c.nic.Ref(), 0, 1)
	other, err := wire.NewKeyAlg(wire.MACSipHash128, []byte("not the tenant's secret, 32 byte"))
	if err != nil {
		t.Fatal(err)
	}
	forger, err := wire.NewCodec(wire.Config{Keys: wire.KeyMap{testTenant: other}})
	if err != nil {
		t.Fatal(err)
	}
	h := faaHeader(1)
	forged, err := forger.Encode(nil, &h, req)
	if err != nil {
		t.Fatal(err)
	}
	if act, _, _ := p.tier.Run(frameOf(forged)); act != xdpDrop {
		t.Fatalf("forged: action %d", act)
	}
	h.Dst = testNode + 1
	if act, _, _ := p.tier.Run(p.sealed(h, req)); act != xdpDrop {
		t.Fatalf("for another node: action %d", act)
	}
	if counterOf(t, p.tier, "drop.bad_mac") != 1 || counterOf(t, p.tier, "drop.wrong_dst") != 1 {
		t.Fatalf("counters %v", nonzero(must(p.tier.Counters())))
	}
	// Every single-bit alteration of the datagram, in a frame whose IP
	// and UDP checksums are made right again (so only the datagram is
	// wrong), and every one of the IP header, checksums left wrong.
	good := p.sealed(faaHeader(2), req)
	dgram := good[offWire:]
	for bit := 0; bit < 8*len(dgram); bit++ {
		d := append([]byte(nil), dgram...)
		d[bit/8] ^= 1 << (bit % 8)
		act, _, err := p.tier.Run(frameOf(d))
		if err != nil {
			t.Fatal(err)
		}
		_, derr := p.codec.Decode(d)
		if (act == xdpTx) != (derr == nil) {
			t.Fatalf("datagram bit %d altered: tier action %d, codec %v", bit, act, derr)
		}
	}
	for bit := 8 * offIP; bit < 8*offUDP; bit++ {
		f := append([]byte(nil), good...)
		f[bit/8] ^= 1 << (bit % 8)
		if act, _, err := p.tier.Run(f); err != nil || act == xdpTx {
			t.Fatalf("IP header bit %d altered: tier action %d, %v", bit-8*offIP, act, err)
		}
	}
	if v := binary.LittleEndian.Uint64(c.xdp.Bytes()); v != 0 {
		t.Fatalf("counter %d: a forged or altered packet ran", v)
	}
	checkCounters(t, p.tier)
	t.Logf("counters after %d alterations: %v", 8*len(dgram)+8*ipLen, nonzero(must(p.tier.Counters())))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// repeatOf is a cached reply as a retransmission gets it: with the
// retransmit flag, sealed again, as the user-space node resends it.
func repeatOf(t testing.TB, codec *wire.Codec, reply []byte) []byte {
	t.Helper()
	rp, err := codec.Decode(reply)
	if err != nil {
		t.Fatal(err)
	}
	rh := rp.Header
	rh.Flags |= wire.FlagRetransmit
	repeat, err := codec.Encode(nil, &rh, rp.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return repeat
}
