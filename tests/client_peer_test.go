package tests

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/host"
)

// TestCorpusOverPeer is the differential test of placement at the caller
// end to end: every corpus program on two nodes that start alike, its
// requests (as TestCorpusAtClient makes them, but for a short reply
// buffer, which a call cannot ask for) sent through host peers over
// loopback, at the node to one and at the client, where the handler can
// run there, to the other. Replies, handler errors (code and site),
// faults and, at the end, the regions' bytes are the same; every
// client-eligible handler ran at the client.
func TestCorpusOverPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two nodes per corpus program")
	}
	ran := 0
	for _, p := range corpusPrograms() {
		t.Run(strings.TrimSuffix(p.file, ".naam"), func(t *testing.T) {
			ran += runCorpusOverPeer(t, p)
		})
	}
	t.Logf("%d client-eligible handlers ran at the client through a peer", ran)
	if ran < 120 {
		t.Errorf("%d handlers ran at the client, want at least 120 (TestCorpusAtClient's count)", ran)
	}
}

// corpusNode starts a node with obj's regions, filled from regions, and
// obj installed; it returns a peer to it at placement pl that holds obj.
func corpusNode(t *testing.T, obj *bytecode.Object, regions [][]byte, pl host.Placement) *host.Peer {
	t.Helper()
	n, err := host.Start(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	for i, r := range obj.Regions {
		reg, err := n.Register(r.Name, uint64(len(regions[i])), host.RegionOptions{Writable: r.Writable})
		if err != nil {
			t.Fatal(err)
		}
		copy(reg.Bytes(), regions[i])
	}
	if _, err := n.Install(obj); err != nil {
		t.Fatal(err)
	}
	p, err := host.Dial(context.Background(), n.Addr().String(), 0, nil, 0)
	if err != nil && strings.Contains(err.Error(), "a packet holds") {
		// A program whose description does not fit a packet cannot be
		// called by name (spec/wire.md, describe); the in-process test
		// covers it.
		t.Skipf("describe: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.AddObject(obj, host.InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	p.SetPlacement(pl)
	return p
}

// peerOutcome is a call's outcome, as far as both places must agree.
type peerOutcome struct {
	reply []byte
	code  uint32
	pos   string
	fault bool
	err   string // any other error
}

func outcomeOf(reply []byte, err error) peerOutcome {
	var he *host.HandlerError
	switch {
	case err == nil:
		return peerOutcome{reply: reply}
	case errors.As(err, &he):
		return peerOutcome{code: he.Code, pos: he.Pos}
	case errors.Is(err, host.ErrFault):
		return peerOutcome{fault: true}
	}
	return peerOutcome{err: err.Error()}
}

func runCorpusOverPeer(t *testing.T, p corpusProgram) (atClient int) {
	// The twin keeps the reference state the generators look at.
	b, seed, regions, w := corpusTwin(t, p)
	node := corpusNode(t, b.obj, regions, host.AtNode)
	client := corpusNode(t, b.obj, regions, host.AtClient)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ranAt := map[string]bool{}
	calls := 0
	corpusCalls(p, seed, func() [][]byte { return w.Node }, func(h corpusHandler, req []byte, reply int) {
		t.Helper()
		if _, err := w.Call(ctx, clientrun.Call{Handler: h.name, Request: bytes.Clone(req), ReplySize: reply}); err != nil {
			t.Fatal(err)
		}
		hn, err := node.Handler(ctx, h.name)
		if err != nil {
			t.Fatal(err)
		}
		hc, err := client.Handler(ctx, h.name)
		if err != nil {
			t.Fatal(err)
		}
		rn, in, en := node.CallPlaced(ctx, hn, req, host.PlaceDefault)
		rc, ic, ec := client.CallPlaced(ctx, hc, req, host.PlaceDefault)
		on, oc := outcomeOf(rn, en), outcomeOf(rc, ec)
		if in.Placement != host.AtNode || ic.Placement == host.AtClient != hc.CanRunAtClient() || on.err != "" || oc.err != "" ||
			!bytes.Equal(on.reply, oc.reply) || on.code != oc.code || on.pos != oc.pos || on.fault != oc.fault {
			t.Fatalf("%s %x (call %d): at the node %+v (%v, %v), at the %v %+v (%v)", h.name, req, calls, on, in.Placement, en, ic.Placement, oc, ec)
		}
		ranAt[h.name] = ranAt[h.name] || ic.Placement == host.AtClient
		calls++
	}, false)
	for i, r := range b.obj.Regions {
		var bn, bc bytes.Buffer
		if err := node.ReadRange(ctx, &bn, r.Name, 0, uint64(len(regions[i]))); err != nil {
			t.Fatal(err)
		}
		if err := client.ReadRange(ctx, &bc, r.Name, 0, uint64(len(regions[i]))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bn.Bytes(), bc.Bytes()) {
			t.Errorf("region %s differs after %d calls", r.Name, calls)
		}
	}
	for _, h := range p.handlers {
		hc, _ := client.Handler(ctx, h.name)
		if hc != nil && hc.ClientEligible && !ranAt[h.name] {
			t.Errorf("%s is client-eligible but never ran at the client", h.name)
		}
		if ranAt[h.name] {
			atClient++
		}
	}
	return atClient
}
