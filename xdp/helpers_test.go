package xdp

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/wire"
)

const clockSource = `
handler clock() -> (t: u64, r: u64) {
    let t0 = now()
    let r0 = random()
    return t0, r0
}
`

// TestClockAndRandom: now() in XDP reads the node's clock (SetClock),
// random() gives 64 bits that change.
func TestClockAndRandom(t *testing.T) {
	tier := newTestTier(t, Config{})
	obj, rep := compile(t, "clock.naam", clockSource)
	if err := tier.Install(HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 16}); err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	start := MonotonicNow() - 5*time.Second
	if err := tier.SetClock(start); err != nil {
		t.Fatal(err)
	}
	codec := testCodec(t)
	seen := map[uint64]bool{}
	var high uint64
	for id := uint64(1); id <= 20; id++ {
		h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: id, Src: testClient, Dst: testNode}
		req, err := codec.Encode(nil, &h, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := MonotonicNow() - start
		act, out, err := tier.Run(frameOf(req))
		after := MonotonicNow() - start
		if err != nil || act != xdpTx {
			t.Fatalf("action %d, %v", act, err)
		}
		p, err := codec.Decode(datagramOf(t, out))
		if err != nil || len(p.Payload) != 16 {
			t.Fatalf("reply %x, %v", p.Payload, err)
		}
		now := time.Duration(binary.LittleEndian.Uint64(p.Payload))
		if now < before || now > after {
			t.Fatalf("now() = %v, the call ran between %v and %v of the node's clock", now, before, after)
		}
		r := binary.LittleEndian.Uint64(p.Payload[8:])
		seen[r] = true
		high |= r >> 32
	}
	if len(seen) < 19 || high == 0 {
		t.Fatalf("random(): %d distinct values of 20, high halves %#x", len(seen), high)
	}
}
