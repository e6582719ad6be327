package xdp

import (
	"strings"
	"testing"

	"github.com/naam-project/naam/nicrt/wire"
)

// checkCounters: every packet the dispatcher saw is counted once among
// the pass and drop reasons, the replies, the error replies and the cache
// hits.
func checkCounters(t testing.TB, tier *Tier) {
	t.Helper()
	cs, err := tier.Counters()
	if err != nil {
		t.Fatal(err)
	}
	var rx, outcomes uint64
	for _, c := range cs {
		name := strings.TrimPrefix(c.Name, "xdp.")
		switch {
		case name == "rx":
			rx = c.Value
		case strings.HasPrefix(name, "pass."), strings.HasPrefix(name, "drop."),
			name == "replies", name == "error_replies", name == "cache_hits":
			outcomes += c.Value
		}
	}
	if rx != outcomes {
		t.Fatalf("rx %d, but %d outcomes: %v", rx, outcomes, nonzero(cs))
	}
}

// FuzzDispatch: whatever frame arrives, the tier passes it up, drops it,
// or answers it; it answers only a request the user-space codec opens,
// for this node, with a reply that opens too and names the request; and
// every frame is counted once.
func FuzzDispatch(f *testing.F) {
	p, c := faaPair(f)
	obj, rep := compile(f, "inc.naam", incSource)
	if err := p.tier.Install(HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8}); err != nil {
		f.Fatal(err)
	}
	faa := wire.AppendFetchAdd(nil, c.nic.Ref(), 0, 1)
	f.Add(p.sealed(faaHeader(1), faa))
	f.Add(p.sealed(wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: 2, Src: 3, Dst: testNode}, u64(9)))
	f.Add(p.sealed(wire.Header{Type: wire.TypeControl, Tenant: testTenant, Handler: 1, RequestID: 3, Src: 3, Dst: testNode}, nil))
	f.Add(frameOf(make([]byte, wire.HeaderSize)))
	f.Add(make([]byte, 14))
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) < 14 || len(frame) > 3000 {
			return // the test run wants an Ethernet header; larger is no frame
		}
		act, out, err := p.tier.Run(frame)
		if err != nil {
			t.Fatal(err)
		}
		switch act {
		case xdpPass, xdpDrop:
		case xdpTx:
			req, err := p.codec.Decode(frame[offWire:])
			if err != nil || req.Type != wire.TypeRequest || req.Dst != testNode {
				t.Fatalf("answered a frame the node would not take: %v %v", &req.Header, err)
			}
			if len(frame) < offWire || frame[offIP] != 0x45 {
				t.Fatalf("answered a frame that is not IPv4 without options")
			}
			rp, err := p.codec.Decode(datagramOfFuzz(t, frame, out))
			if err != nil || rp.RequestID != req.RequestID || rp.Tenant != req.Tenant || rp.Handler != req.Handler || rp.Dst != req.Src {
				t.Fatalf("reply %v for %v: %v", &rp.Header, &req.Header, err)
			}
		default:
			t.Fatalf("action %d", act)
		}
		checkCounters(t, p.tier)
	})
}

// datagramOfFuzz returns the reply's datagram after the fixed headers
// (the addresses are whatever the fuzzed frame had, swapped).
func datagramOfFuzz(t *testing.T, in, out []byte) []byte {
	if len(out) < offWire {
		t.Fatalf("reply frame of %d bytes", len(out))
	}
	if string(out[0:6]) != string(in[6:12]) || string(out[offIP+12:offIP+16]) != string(in[offIP+16:offIP+20]) {
		t.Fatal("the reply's addresses are not the request's, swapped")
	}
	return out[offWire:]
}
