package xdp

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestPassUp: everything the tier does not answer goes up with XDP_PASS,
// counted by reason, and changes nothing here.
func TestPassUp(t *testing.T) {
	p, c := faaPair(t)
	obj, rep := compile(t, "inc.naam", incSource)
	if err := p.tier.Install(HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8}); err != nil {
		t.Fatal(err)
	}
	hmacKey, err := wire.NewKey([]byte("an HMAC tenant's secret, 32 byte"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.tier.SetKey(testTenant+1, hmacKey); err == nil {
		t.Fatal("SetKey took an HMAC key")
	}
	hmacCodec, err := wire.NewCodec(wire.Config{Keys: wire.KeyMap{testTenant + 1: hmacKey, testTenant + 2: testKey(t)}})
	if err != nil {
		t.Fatal(err)
	}
	inc := u64(1)
	req := func(mod func(*wire.Header), payload []byte) []byte {
		h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: 7, Src: testClient, Dst: testNode}
		mod(&h)
		return p.sealed(h, payload)
	}
	other := func(h wire.Header, payload []byte) []byte {
		b, err := hmacCodec.Encode(nil, &h, payload)
		if err != nil {
			t.Fatal(err)
		}
		return frameOf(b)
	}
	unknownRegion := c.nic.Ref()
	unknownRegion.ID += 100
	cases := []struct {
		name  string
		frame []byte
		ctr   string
	}{
		{"another port", func() []byte {
			f := req(func(*wire.Header) {}, inc)
			binary.BigEndian.PutUint16(f[offUDP+2:], serverPort+1)
			return f
		}(), "pass.not_naam"},
		{"IPv6", func() []byte {
			f := req(func(*wire.Header) {}, inc)
			binary.BigEndian.PutUint16(f[12:], ethTypeIPv6)
			return f
		}(), "pass.ipv6"},
		{"ARP-sized", make([]byte, 42), "pass.not_naam"},
		{"IP options", func() []byte {
			f := req(func(*wire.Header) {}, inc)
			f[offIP] = 0x46
			return f
		}(), "pass.ip"},
		{"bad magic", func() []byte {
			f := req(func(*wire.Header) {}, inc)
			f[offWire] ^= 0xff
			return frameOf(f[offWire:])
		}(), "pass.malformed"},
		{"truncated", frameOf(req(func(*wire.Header) {}, inc)[offWire : offWire+30]), "pass.malformed"},
		{"HMAC tenant", other(wire.Header{Type: wire.TypeRequest, Tenant: testTenant + 1, Handler: 16, RequestID: 1, Src: 1, Dst: testNode}, inc), "pass.tenant"},
		{"control", req(func(h *wire.Header) { h.Type = wire.TypeControl; h.Handler = uint32(wire.OpStats) }, nil), "pass.type"},
		{"describe to dst 0", req(func(h *wire.Header) { h.Type = wire.TypeControl; h.Dst = 0; h.Handler = uint32(wire.OpDescribe) }, nil), "pass.type"},
		{"credit", req(func(h *wire.Header) { h.Type = wire.TypeCredit }, nil), "pass.type"},
		{"forwarded", req(func(h *wire.Header) { h.Flags = wire.FlagForwarded | wire.FlagProgram }, make([]byte, 40)), "pass.route"},
		{"one-way", req(func(h *wire.Header) { h.Flags = wire.FlagOneWay | wire.FlagProgram }, make([]byte, 16)), "pass.route"},
		{"handler not here", req(func(h *wire.Header) { h.Handler = 17 }, inc), "pass.handler"},
		{"another tenant's handler", func() []byte {
			h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant + 2, Handler: 16, RequestID: 1, Src: 1, Dst: testNode}
			b, err := hmacCodec.Encode(nil, &h, inc)
			if err != nil {
				t.Fatal(err)
			}
			return frameOf(b)
		}(), "pass.handler"},
		{"verb on a region not here", req(func(h *wire.Header) { h.Handler = nicrt.HandlerFetchAdd }, wire.AppendFetchAdd(nil, unknownRegion, 0, 1)), "pass.region"},
		{"id 2^64-1", req(func(h *wire.Header) { h.RequestID = math.MaxUint64 }, inc), "pass.id"},
	}
	if err := p.tier.SetKey(testTenant+2, testKey(t)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		before := counterOf(t, p.tier, tc.ctr)
		act, _, err := p.tier.Run(tc.frame)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if act != xdpPass {
			t.Errorf("%s: action %d, want XDP_PASS", tc.name, act)
		}
		if after := counterOf(t, p.tier, tc.ctr); after != before+1 {
			t.Errorf("%s: %s went from %d to %d; counters %v", tc.name, tc.ctr, before, after, nonzero(must(p.tier.Counters())))
		}
	}
	if v := binary.LittleEndian.Uint64(c.xdp.Bytes()); v != 0 {
		t.Fatalf("a passed packet ran: counter %d", v)
	}
	checkCounters(t, p.tier)
	// Uninstalled: its requests pass up from then on.
	if err := p.tier.Uninstall(16); err != nil {
		t.Fatal(err)
	}
	if act, _, _ := p.tier.Run(req(func(h *wire.Header) { h.RequestID = 8 }, inc)); act != xdpPass {
		t.Fatalf("an uninstalled handler's request: action %d", act)
	}
}

// TestPeersFull: a (tenant, src) whose probe sequence is full passes up.
func TestPeersFull(t *testing.T) {
	p := newPair(t, Config{MaxPeers: 1})
	c := p.region("counter", 64, true, nil)
	faa := wire.AppendFetchAdd(nil, c.nic.Ref(), 0, 1)
	h := faaHeader(1)
	if act, _, _ := p.tier.Run(p.sealed(h, faa)); act != xdpTx {
		t.Fatalf("first peer: action %d", act)
	}
	h.Src++
	if act, _, _ := p.tier.Run(p.sealed(h, faa)); act != xdpPass || counterOf(t, p.tier, "pass.peers_full") != 1 {
		t.Fatalf("second peer with one state: action %d, counters %v", act, nonzero(must(p.tier.Counters())))
	}
}

// TestProgramSlotReused: a request whose handler's program slot holds
// another handler's program by the time of the tail call (an uninstall
// and an install raced the dispatcher) is answered unknown handler; the
// other handler does not run.
func TestProgramSlotReused(t *testing.T) {
	tier := newTestTier(t, Config{})
	obj, rep := compile(t, "inc.naam", incSource)
	for _, id := range []uint32{16, 17} {
		if err := tier.Install(HandlerSpec{ID: id, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8}); err != nil {
			t.Fatal(err)
		}
	}
	// Handler 16's entry now names handler 17's program.
	if err := tier.putHandler(16, testTenant, tier.handlers[17].prog, kindHandler); err != nil {
		t.Fatal(err)
	}
	codec := testCodec(t)
	h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: 1, Src: testClient, Dst: testNode}
	req, err := codec.Encode(nil, &h, u64(1))
	if err != nil {
		t.Fatal(err)
	}
	act, out, err := tier.Run(frameOf(req))
	if err != nil || act != xdpTx {
		t.Fatalf("action %d, %v", act, err)
	}
	p, err := codec.Decode(datagramOf(t, out))
	if err != nil || p.Type != wire.TypeErrorReply || p.Status != wire.StatusRuntime+statusUnknownHandler || p.Handler != 16 {
		t.Fatalf("reply %v, %v; want unknown handler", &p.Header, err)
	}
	if counterOf(t, tier, "unknown_handler") != 1 || counterOf(t, tier, "runs") != 0 {
		t.Fatalf("counters %v", nonzero(must(tier.Counters())))
	}
}
