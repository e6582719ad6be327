package xdp

import (
	"bytes"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
)

// jumpSource exercises what the translation must get right beyond
// copying: a helper call that grows into four instructions, with a gotol
// over it and a conditional jump back across it, a local call, a region's
// lddw. (Code that no
// path of this handler reaches, another handler's, is left out: the
// corpus's objects of several handlers cover it.)
const jumpSource = `
	mov %r7, %r1
	mov %r8, 0
	ja32 first
second:
	call 3
	mov %r6, %r0
	mov %r0, 1
	jeq %r6, 0, zero
	ja body
first:
	mov %r8, 1
	jeq %r8, 1, second
	mov %r0, 77
	exit
zero:
	mov %r0, 3
	exit
body:
	lddw %r2, region[0]+8
	ldxdw %r3, [%r2]
	call local helper
	ldxdw %r1, [%r7+16]
	ldxdw %r2, [%r7+24]
	mov %r3, %r1
	add %r3, 8
	jgt %r3, %r2, short
	stxdw [%r1], %r0
	mov %r0, 8
	exit
short:
	mov %r0, -1
	exit
helper:
	mov %r0, %r3
	add %r0, 5
	exit
`

func jumpObject(t testing.TB) (*bytecode.Object, *verifier.Report) {
	t.Helper()
	insns, err := bytecode.Assemble(jumpSource)
	if err != nil {
		t.Fatal(err)
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Code: code,
		Handlers: []bytecode.Handler{{Name: "jumps", Entry: 0, Results: []bytecode.Field{{Name: "v", Type: "u64", Offset: 0, Size: 8}}}},
		Regions:  []bytecode.Region{{Name: "r", Size: 64}}}
	rep, err := verifier.VerifyObject(obj, verifier.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return obj, rep
}

// TestTranslateJumps: the translated handler answers as its bytecode
// says, though the code moved under its jumps.
func TestTranslateJumps(t *testing.T) {
	tier := newTestTier(t, Config{})
	obj, rep := jumpObject(t)
	r, err := NewRegion(64)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	copy(r.Bytes()[8:], u64(1000))
	if err := tier.Install(HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8, Regions: []*Region{r}}); err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	codec := testCodec(t)
	h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: 16, RequestID: 1, Src: testClient, Dst: testNode}
	req, err := codec.Encode(nil, &h, nil)
	if err != nil {
		t.Fatal(err)
	}
	act, out, err := tier.Run(frameOf(req))
	if err != nil || act != xdpTx {
		t.Fatalf("action %d, %v", act, err)
	}
	p, err := codec.Decode(datagramOf(t, out))
	if err != nil || !bytes.Equal(p.Payload, u64(1005)) {
		t.Fatalf("reply %x, %v; want 1005 (the region's word + 5)", p.Payload, err)
	}
}
