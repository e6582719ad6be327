package server

import (
	"bytes"
	"encoding/binary"
	netaddr "net/netip"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// rawPeer sends hand-made datagrams to a test server and reads what comes
// back.
type rawPeer struct {
	t    *testing.T
	conn *transporttest.MemConn
	to   transport.Addr
}

func (tn *testNet) raw(t *testing.T) *rawPeer {
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawPeer{t: t, conn: conn, to: tn.addr}
}

func (p *rawPeer) send(b []byte) {
	p.t.Helper()
	if _, err := p.conn.WriteBatch([]transport.Packet{{Addr: p.to, Buf: b, N: len(b)}}); err != nil {
		p.t.Fatal(err)
	}
}

// recv returns the datagrams that arrive within d.
func (p *rawPeer) recv(d time.Duration) [][]byte {
	var out [][]byte
	ps := make([]transport.Packet, 16)
	for i := range ps {
		ps[i].Buf = make([]byte, 2048)
	}
	p.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, err := p.conn.ReadBatch(ps)
		if err != nil {
			return out
		}
		for _, q := range ps[:n] {
			out = append(out, bytes.Clone(q.Payload()))
		}
	}
}

func seal(t *testing.T, keys wire.Keys, h wire.Header, payload []byte) []byte {
	t.Helper()
	c, err := wire.NewCodec(wire.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode(nil, &h, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNetAuth: forged, altered, misdirected and replayed packets are
// dropped and counted, and never run.
func TestNetAuth(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
	p := tn.raw(t)
	fetchAdd := wire.AppendFetchAdd(nil, reg.Ref(), 0, 1)
	req := func(id uint64) wire.Header {
		return wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: nicrt.HandlerFetchAdd, RequestID: id, Src: 5, Dst: serverNode}
	}
	good := seal(t, tn.keys, req(1000), fetchAdd)

	// A genuine request runs once and is answered.
	p.send(good)
	if got := p.recv(20 * time.Millisecond); len(got) != 1 {
		t.Fatalf("%d replies to a good request", len(got))
	}
	// Sent again, it is answered from the cache and does not run.
	p.send(good)
	if got := p.recv(20 * time.Millisecond); len(got) != 1 {
		t.Fatalf("%d replies to a duplicate", len(got))
	}

	wrongKey := wire.KeyMap{tenantA: testKey(t, 77), tenantNoKey: testKey(t, 9)}
	altered := bytes.Clone(seal(t, tn.keys, req(1001), fetchAdd))
	altered[len(altered)-1] ^= 1 // delta 1 → 0: the MAC no longer matches
	otherTenant := bytes.Clone(seal(t, tn.keys, req(1002), fetchAdd))
	binary.LittleEndian.PutUint32(otherTenant[8:], tenantB) // claims tenant B
	h := req(1003)
	h.Dst = serverNode + 1
	for _, b := range [][]byte{
		seal(t, wrongKey, req(1004), fetchAdd), // forged with a wrong key
		altered,
		otherTenant,
		seal(t, wrongKey, func() wire.Header { h := req(1005); h.Tenant = tenantNoKey; return h }(), fetchAdd), // unknown tenant
		seal(t, tn.keys, h, fetchAdd), // sealed for another node
	} {
		p.send(b)
	}
	// A replay of a request far below the newest id of the peer.
	p.send(seal(t, tn.keys, req(1000+5000), fetchAdd))
	if got := p.recv(20 * time.Millisecond); len(got) != 1 {
		t.Fatalf("%d replies to a new request", len(got))
	}
	p.send(good)
	if got := p.recv(20 * time.Millisecond); len(got) != 0 {
		t.Fatalf("%d replies to forgeries and replays", len(got))
	}
	s := tn.srv.Stats()
	if s.BadMAC != 3 || s.UnknownTenant != 1 || s.WrongDst != 1 || s.ReplaysTooOld != 1 || s.CacheHits != 1 || s.Requests != 2 {
		t.Errorf("stats %+v", s)
	}
	if v := u64(reg.Bytes()); v != 2 {
		t.Errorf("counter %d, want 2", v)
	}
}

// TestNetMalformed: datagrams that do not parse are dropped and counted by
// field; the server answers the next good request.
func TestNetMalformed(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	p := tn.raw(t)
	good := seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: 9999, RequestID: 1, Src: 5, Dst: serverNode}, []byte("xyz"))
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		b    []byte
		want wire.Malformed
	}{
		{good[:10], wire.MalformedShort},
		{mut(func(b []byte) []byte { b[0] = 0; return b }), wire.MalformedMagic},
		{mut(func(b []byte) []byte { b[2] = 2; return b }), wire.MalformedVersion},
		{mut(func(b []byte) []byte { b[32] = 200; return b }), wire.MalformedLength},
		{mut(func(b []byte) []byte { return append(b, 0) }), wire.MalformedLength},
		{mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[32:], 1<<31); return b }), wire.MalformedTooLarge},
		{mut(func(b []byte) []byte { b[3] = 9; return b }), wire.MalformedType},
		{mut(func(b []byte) []byte { b[4] = 0x10; return b }), wire.MalformedFlags},
		// Authentic, but the route prefix the flags announce is missing
		// or wrong, or the flags do not belong on the type.
		{seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Flags: wire.FlagProgram, Tenant: tenantA, RequestID: 3, Src: 5, Dst: serverNode}, []byte("xyz")), wire.MalformedRoute},
		{seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Flags: wire.FlagForwarded, Tenant: tenantA, RequestID: 4, Src: 5, Dst: serverNode}, make([]byte, 24)), wire.MalformedRoute},
		{seal(t, tn.keys, wire.Header{Type: wire.TypeRequest, Flags: wire.FlagForwarded | wire.FlagOneWay, Tenant: tenantA, RequestID: 5, Src: 5, Dst: serverNode}, make([]byte, 40)), wire.MalformedRoute},
		{seal(t, tn.keys, wire.Header{Type: wire.TypeControl, Flags: wire.FlagProgram, Tenant: tenantA, Handler: 1, RequestID: 6, Src: 5, Dst: serverNode}, make([]byte, 8)), wire.MalformedRoute},
		{mut(func(b []byte) []byte { b[36] = 1; return b }), wire.MalformedStatus},
	}
	for _, c := range cases {
		p.send(c.b)
	}
	// A reply sent to a responder is authentic but unexpected.
	p.send(seal(t, tn.keys, wire.Header{Type: wire.TypeReply, Tenant: tenantA, RequestID: 2, Src: 5, Dst: serverNode}, nil))
	p.send(good)
	got := p.recv(20 * time.Millisecond)
	if len(got) != 1 {
		t.Fatalf("%d replies", len(got))
	}
	rep, err := wire.NewCodec(wire.Config{Keys: tn.keys})
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := rep.Decode(got[0])
	if err != nil || pkt.Type != wire.TypeErrorReply || pkt.Status != wire.StatusRuntime+wire.Status(nicrt.StatusUnknownHandler) ||
		pkt.RequestID != 1 || pkt.Dst != 5 || pkt.Src != serverNode || pkt.Credits == 0 {
		t.Fatalf("reply %v %v", &pkt.Header, err)
	}
	s := tn.srv.Stats()
	var want [wire.NumMalformed]uint64
	for _, c := range cases {
		want[c.want]++
	}
	if s.Malformed != want || s.UnexpectedType != 1 || s.Requests != 1 {
		t.Errorf("malformed %v, want %v; stats %+v", s.Malformed, want, s)
	}
}

// FuzzServe feeds arbitrary datagrams to a responder's packet handler:
// nothing may panic, and every datagram is counted once.
func FuzzServe(f *testing.F) {
	keys := testKeys(f)
	tn := newFuzzServer(f, keys)
	reg := register(f, tn.nic, tenantA, "c", 64, nicrt.RegionOptions{Writable: true})
	p := install(f, tn.nic, tenantA, testprog.Object(f, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}, testprog.Src{Name: "err", Asm: testprog.ErrAsm}))
	c, _ := wire.NewCodec(wire.Config{Keys: keys})
	add := func(h wire.Header, payload []byte) {
		b, err := c.Encode(nil, &h, payload)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	req := wire.Header{Type: wire.TypeRequest, Tenant: tenantA, RequestID: 1, Src: 5, Dst: serverNode}
	for i, payload := range [][]byte{
		wire.AppendFetchAdd(nil, reg.Ref(), 0, 1), wire.AppendRead(nil, reg.Ref(), 0, 64), wire.AppendWrite(nil, reg.Ref(), 0, []byte("x")),
		wire.AppendCAS(nil, reg.Ref(), 8, 0, 1), nil, []byte("short"),
	} {
		for _, h := range []uint32{nicrt.HandlerRead, nicrt.HandlerWrite, nicrt.HandlerCAS, nicrt.HandlerFetchAdd, id(f, p, "null"), id(f, p, "err"), 0, 777} {
			r := req
			r.Handler, r.RequestID = h, uint64(i*100)+uint64(h)
			add(r, payload)
		}
	}
	// Program-relative, one-way and forwarded requests (spec/wire.md,
	// Routing).
	prog := wire.Route{HasProgram: true, Program: p.Digest}
	fwd := wire.Route{Forwarded: true, Via: 9, ReplyTo: transport.Addr(netaddr.AddrPortFrom(netaddr.MustParseAddr("127.0.0.1"), 7)), HasProgram: true, Program: p.Digest}
	for i, r := range []wire.Route{prog, fwd, {HasProgram: true, Program: 1}} {
		for _, oneway := range []wire.Flags{0, wire.FlagOneWay} {
			h := req
			h.Handler, h.RequestID, h.Flags = 0, uint64(1000+i), wire.RouteFlags(&r)|oneway
			add(h, wire.AppendRoute(nil, &r))
		}
	}
	add(wire.Header{Type: wire.TypeControl, Tenant: tenantA, Handler: uint32(wire.OpStats), Dst: serverNode}, nil)
	add(wire.Header{Type: wire.TypeCredit, Tenant: tenantA, Credits: 5, Dst: serverNode}, nil)
	f.Add([]byte{})
	f.Add(make([]byte, wire.HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		before := tn.srv.Stats()
		tn.feed(b)
		after := tn.srv.Stats()
		if after.RxPackets != before.RxPackets+1 {
			t.Fatalf("rx %d → %d", before.RxPackets, after.RxPackets)
		}
		handled := (after.Requests - before.Requests) + (after.Control - before.Control) +
			(after.Dropped() - before.Dropped()) + (after.CacheHits - before.CacheHits) +
			(after.OneWay - before.OneWay) + (after.Reforwarded - before.Reforwarded) +
			(after.Relayed - before.Relayed)
		if handled != 1 {
			t.Fatalf("datagram counted %d times: %+v → %+v", handled, before, after)
		}
	})
}

// fuzzServer is a server whose rx queue the test drives by hand.
type fuzzServer struct {
	nic *nicrt.NIC
	srv *Server
	q   *rxQueue
}

func newFuzzServer(t testing.TB, keys wire.Keys) *fuzzServer {
	nw := transporttest.NewNetwork(transporttest.MemConfig{})
	conn, err := nw.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	n := newNIC(t, nicrt.Config{})
	s, err := newServer(n, []transport.Conn{conn}, ServerConfig{Node: serverNode, Keys: keys, Batch: 1, MaxRegisterBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.inflight.Wait(); conn.Close() })
	return &fuzzServer{nic: n, srv: s, q: s.queues[0]}
}

// feed hands one datagram to the queue as if ReadBatch had returned it.
func (f *fuzzServer) feed(b []byte) {
	p := &f.q.ps[0]
	p.Addr = transport.Addr{}
	p.N = copy(p.Buf, b)
	f.q.handleBatch(1)
}

// FuzzServeSealed seals arbitrary headers and payloads with a valid key,
// so that what follows the MAC check (window, cache, dispatch, control
// bodies, uploads) sees fuzzed input.
func FuzzServeSealed(f *testing.F) {
	keys := testKeys(f)
	tn := newFuzzServer(f, keys)
	reg := register(f, tn.nic, tenantA, "c", 64, nicrt.RegionOptions{Writable: true})
	p := install(f, tn.nic, tenantA, testprog.Object(f, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}, testprog.Src{Name: "err", Asm: testprog.ErrAsm}))
	c, _ := wire.NewCodec(wire.Config{Keys: keys})
	reqType, ctlType := uint8(wire.TypeRequest), uint8(wire.TypeControl)
	f.Add(reqType, uint16(0), uint32(tenantA), nicrt.HandlerFetchAdd, uint64(1), uint32(5), wire.AppendFetchAdd(nil, reg.Ref(), 0, 1))
	f.Add(reqType, uint16(1), uint32(tenantB), id(f, p, "null"), uint64(2), uint32(5), []byte{})
	f.Add(reqType, uint16(0), uint32(tenantA), id(f, p, "err"), uint64(3), uint32(6), []byte("x"))
	f.Add(reqType, uint16(wire.FlagProgram|wire.FlagOneWay), uint32(tenantA), uint32(0), uint64(4), uint32(6), wire.AppendRoute(nil, &wire.Route{HasProgram: true, Program: p.Digest}))
	f.Add(reqType, uint16(wire.FlagProgram|wire.FlagForwarded), uint32(tenantA), uint32(1), uint64(5), uint32(6),
		wire.AppendRoute(nil, &wire.Route{Forwarded: true, Via: 3, ReplyTo: transport.Addr(netaddr.AddrPortFrom(netaddr.MustParseAddr("127.0.0.1"), 9)), HasProgram: true, Program: p.Digest}))
	for op, body := range map[wire.Op]wire.Control{
		wire.OpRegister:  &wire.Register{Name: "r", Size: 64, Placement: wire.PlacementHost},
		wire.OpStats:     &wire.StatsRequest{Prefix: "server."},
		wire.OpInstall:   &wire.Install{Upload: 1, Total: 3, Data: []byte{0x80, 0, 0}},
		wire.OpUninstall: &wire.Uninstall{Program: 1},
	} {
		b, _ := wire.AppendControl(nil, body)
		f.Add(ctlType, uint16(0), uint32(tenantA), uint32(op), uint64(10+op), uint32(7), b)
	}
	f.Fuzz(func(t *testing.T, typ uint8, flags uint16, tenant, handler uint32, rid uint64, src uint32, payload []byte) {
		h := wire.Header{Type: wire.Type(typ), Flags: wire.Flags(flags), Tenant: tenant, Handler: handler, RequestID: rid, Src: src, Dst: serverNode}
		if h.Type == wire.TypeErrorReply {
			h.Status = 1
		}
		b, err := c.Encode(nil, &h, payload)
		if err != nil {
			return // Encode refuses what Decode would
		}
		before := tn.srv.Stats()
		tn.feed(b)
		after := tn.srv.Stats()
		handled := (after.Requests - before.Requests) + (after.Control - before.Control) +
			(after.Dropped() - before.Dropped()) + (after.CacheHits - before.CacheHits) +
			(after.OneWay - before.OneWay) + (after.Reforwarded - before.Reforwarded) +
			(after.Relayed - before.Relayed)
		if handled != 1 {
			t.Fatalf("datagram counted %d times: %+v → %+v", handled, before, after)
		}
	})
}
