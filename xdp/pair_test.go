package xdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
)

// pair is the same node twice: nicrt's NIC model (the user-space node,
// read as server.Serve answers: spec/nic.md, The responder) and the XDP
// tier, with the same regions, the same bytes in them and the same
// handler ids. call sends one request to both and compares the replies
// and every region's bytes.
type pair struct {
	t       testing.TB
	nic     *nicrt.NIC
	tier    *Tier
	codec   *wire.Codec
	regions map[string]*pairRegion
	order   []string
	nextID  uint64
	// handlers served in XDP, by id; the others must pass up.
	served map[uint32]bool
	calls  int
}

type pairRegion struct {
	nic *nicrt.Region
	xdp *Region
}

func newPair(t testing.TB, cfg Config) *pair {
	t.Helper()
	tier := newTestTier(t, cfg)
	nic, err := nicrt.New(nicrt.Config{MaxReply: tier.Config().MaxReply})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nic.Close() })
	if err := tier.EnableVerbs(); err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	return &pair{t: t, nic: nic, tier: tier, codec: testCodec(t), regions: map[string]*pairRegion{},
		nextID: 1 << 40, served: map[uint32]bool{}}
}

// region registers a region of the test tenant on both, with the same
// bytes, and lets the verbs reach it.
func (p *pair) region(name string, size uint64, writable bool, fill []byte) *pairRegion {
	p.t.Helper()
	nr, err := p.nic.Register(testTenant, name, size, nicrt.RegionOptions{Writable: writable})
	if err != nil {
		p.t.Fatal(err)
	}
	xr, err := NewRegion(size)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { xr.Close() })
	copy(nr.Bytes(), fill)
	copy(xr.Bytes(), fill)
	if err := p.tier.AddRegion(VerbRegion{ID: nr.ID, Tenant: testTenant, Key: nr.Key, Writable: writable}, xr); err != nil {
		p.t.Fatalf("%v\n%+v", err, err)
	}
	r := &pairRegion{nic: nr, xdp: xr}
	p.regions[name] = r
	p.order = append(p.order, name)
	return r
}

// install installs obj on the NIC and each of its handlers in XDP; it
// returns the handlers' ids by name and, for those XDP does not serve,
// the reason.
func (p *pair) install(obj *bytecode.Object) (ids map[string]uint32, notServed map[string]string) {
	p.t.Helper()
	prog, err := p.nic.Install(testTenant, obj)
	if err != nil {
		p.t.Fatal(err)
	}
	rep, err := verifier.VerifyObject(obj, verifier.Config{})
	if err != nil {
		p.t.Fatal(err)
	}
	regions := make([]*Region, len(obj.Regions))
	for i, r := range obj.Regions {
		if pr := p.regions[r.Name]; pr != nil {
			regions[i] = pr.xdp
		}
	}
	ids, notServed = map[string]uint32{}, map[string]string{}
	for i, h := range prog.Handlers() {
		ids[h.Name] = h.ID
		err := p.tier.Install(HandlerSpec{ID: h.ID, Tenant: testTenant, Object: obj, Report: rep, Handler: i,
			ReplySize: ReplySize(obj.Handlers[i], p.tier.Config().MaxReply), Regions: regions})
		var ns *NotServed
		switch {
		case errors.As(err, &ns):
			notServed[h.Name] = ns.Reason
		case err != nil:
			p.t.Fatalf("install %s: %v", h.Name, err)
		default:
			p.served[h.ID] = true
		}
	}
	return ids, notServed
}

// want is the reply server.Serve sends for r (spec/nic.md, The
// responder): type, status and payload. A fault's payload is its text,
// for people; the tier sends none, so it is not compared.
func want(r nicrt.Reply) (wire.Type, wire.Status, []byte, bool) {
	switch {
	case r.Status == nicrt.StatusOK:
		return wire.TypeReply, 0, r.Data, true
	case r.Status == nicrt.StatusError && r.Code > 0:
		return wire.TypeErrorReply, wire.Status(r.Code), nil, true
	}
	st := r.Status
	if st == nicrt.StatusError {
		st = nicrt.StatusFault
	}
	return wire.TypeErrorReply, wire.StatusRuntime + wire.Status(st), nil, st != nicrt.StatusFault
}

// call sends payload to handler on both and compares: the XDP reply
// must decode and authenticate with the tenant's key, carry the
// request's tenant, handler and id from this node to the client, and say
// what the NIC model said; the regions must hold the same bytes after.
// It returns the XDP reply's payload.
func (p *pair) call(handler uint32, payload []byte) []byte {
	p.t.Helper()
	p.calls++
	p.nextID++
	id := p.nextID
	nr := p.nic.Call(&nicrt.Message{Tenant: testTenant, Handler: handler, RequestID: id, SrcNode: testClient, Payload: payload})
	h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: handler, RequestID: id, Src: testClient, Dst: testNode}
	req, err := p.codec.Encode(nil, &h, payload)
	if err != nil {
		p.t.Fatal(err)
	}
	act, out, err := p.tier.Run(frameOf(req))
	if err != nil {
		p.t.Fatal(err)
	}
	if !p.served[handler] && !(handler <= verbFetchAdd) {
		if act != xdpPass {
			p.t.Fatalf("handler %d is not served here, but the tier's action was %d", handler, act)
		}
		return nil
	}
	if act != xdpTx {
		ctrs, _ := p.tier.Counters()
		p.t.Fatalf("handler %d, payload %x: action %d, want XDP_TX; counters %v", handler, payload, act, nonzero(ctrs))
	}
	rp, err := p.codec.Decode(datagramOf(p.t, out))
	if err != nil {
		p.t.Fatalf("the reply does not open: %v", err)
	}
	ty, st, data, cmpData := want(nr)
	hdr := rp.Header
	switch {
	case hdr.Tenant != testTenant || hdr.Handler != handler || hdr.RequestID != id || hdr.Src != testNode || hdr.Dst != testClient || hdr.Flags != 0:
		p.t.Fatalf("reply header %v for request %v", &hdr, &h)
	case hdr.Type != ty || hdr.Status != st:
		p.t.Fatalf("handler %d, payload %x: XDP replied %v status %v (%x), the NIC model %v status %v (%+v)",
			handler, payload, hdr.Type, hdr.Status, rp.Payload, ty, st, nr)
	case cmpData && !bytes.Equal(rp.Payload, data):
		p.t.Fatalf("handler %d, payload %x: XDP replied\n%x\nthe NIC model\n%x", handler, payload, rp.Payload, data)
	}
	p.sameRegions(fmt.Sprintf("after handler %d, payload %x", handler, payload))
	return rp.Payload
}

func (p *pair) sameRegions(when string) {
	p.t.Helper()
	for _, name := range p.order {
		r := p.regions[name]
		a, b := r.nic.Bytes(), r.xdp.Bytes()
		if !bytes.Equal(a, b) {
			i := 0
			for a[i] == b[i] {
				i++
			}
			p.t.Fatalf("%s: region %q differs from byte %d: NIC model %x…, XDP %x…", when, name, i, a[i:min(i+16, len(a))], b[i:min(i+16, len(b))])
		}
	}
}

func nonzero(cs []Counter) []Counter {
	var out []Counter
	for _, c := range cs {
		if c.Value != 0 {
			out = append(out, c)
		}
	}
	return out
}

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
