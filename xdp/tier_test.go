package xdp

import (
	"encoding/binary"
	"testing"

	"github.com/naam-project/naam/nicrt/wire"
)

// newTestTier is a tier for node testNode on serverPort, with the test
// tenant's key.
func newTestTier(t testing.TB, cfg Config) *Tier {
	t.Helper()
	needKernel(t)
	if cfg.Node == 0 {
		cfg.Node = testNode
	}
	if cfg.Port == 0 {
		cfg.Port = serverPort
	}
	tier, err := New(cfg)
	if err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	t.Cleanup(func() { tier.Close() })
	if err := tier.SetKey(testTenant, testKey(t)); err != nil {
		t.Fatal(err)
	}
	return tier
}

func testCodec(t testing.TB) *wire.Codec {
	t.Helper()
	c, err := wire.NewCodec(wire.Config{Keys: wire.KeyMap{testTenant: testKey(t)}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const incSource = `
handler inc(x: u64) -> (y: u64) {
    y = x + 1
    return
}
`

func TestTierIncrement(t *testing.T) {
	tier := newTestTier(t, Config{})
	obj, rep := compile(t, "inc.naam", incSource)
	err := tier.Install(HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: ReplySize(obj.Handlers[0], DefaultMaxReply)})
	if err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	codec := testCodec(t)
	h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: 1000, Src: testClient, Dst: testNode}
	req, err := codec.Encode(nil, &h, binary.LittleEndian.AppendUint64(nil, 41))
	if err != nil {
		t.Fatal(err)
	}
	act, out, err := tier.Run(frameOf(req))
	if err != nil {
		t.Fatal(err)
	}
	ctrs, _ := tier.Counters()
	if act != xdpTx {
		t.Fatalf("action %d, counters %v", act, ctrs)
	}
	p, err := codec.Decode(datagramOf(t, out))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reply %v %x", &p.Header, p.Payload)
}
