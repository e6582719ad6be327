package main

import (
	"context"
	"fmt"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
)

// The modes client and auto of mica and btree: the workload's own client
// calls its handlers through a peer of their own at host.AtClient or
// host.Auto, so that a handler the node proved client-eligible (a MICA
// GET, a B-tree lookup) runs at the caller over one-sided READs — the same
// handler the node runs in mode am (spec/client.md). The rest (PUTs,
// updates) run at the node. An operation's round trips are the runs'
// (placedCaller): a run at the client counts its READs.
const (
	modeClient = "client"
	modeAuto   = "auto"
)

// placedMode says whether mode is one of client and auto, and its
// placement.
func placedMode(mode string) (host.Placement, bool) {
	switch mode {
	case modeClient:
		return host.AtClient, true
	case modeAuto:
		return host.Auto, true
	}
	return 0, false
}

// dialPlacement dials server at pl with obj added (the object the server
// installed, with its options), so that obj's client-eligible handlers
// can run at this side, keeping keep's bytes from one run there to the
// next (host.Peer.KeepAtClient; the zero Keep: none); the keys are --mac's.
func dialPlacement(ctx context.Context, server *host.Node, obj *bytecode.Object, opts host.InstallOptions, pl host.Placement, mac string, keep host.Keep) (*host.Peer, error) {
	p, err := dialMAC(ctx, server.Addr(), 0, nil, mac)
	if err != nil {
		return nil, err
	}
	if err := p.KeepAtClient(obj, keep); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.AddObject(obj, opts); err != nil {
		p.Close()
		return nil, fmt.Errorf("adding the object to a peer at %v: %w", pl, err)
	}
	p.SetPlacement(pl)
	return p, nil
}

// placedTargets are the clients' targets, made by newTarget over one peer
// dialled at pl (dialPlacement, keeping keep's bytes), each counting its runs' round trips
// (placedRounds), and what closes the peer.
func placedTargets(ctx context.Context, server *host.Node, obj *bytecode.Object, opts host.InstallOptions, pl host.Placement, mac string,
	keep host.Keep, clients int, newTarget func(call.Caller) workload.Target) ([]workload.Target, func(), error) {
	p, err := dialPlacement(ctx, server, obj, opts, pl, mac, keep)
	if err != nil {
		return nil, nil, err
	}
	pc := &placedCaller{p: p}
	out := make([]workload.Target, clients)
	for i := range out {
		out[i] = placedRounds{newTarget(pc)}
	}
	return out, func() { p.Close() }, nil
}

// placedRounds is a target whose client calls through a placedCaller: an
// operation's round trips are those the placedCaller counted (a retry's
// included), not the client's count of its calls.
type placedRounds struct{ t workload.Target }

func (r placedRounds) Get(ctx context.Context, key uint64) (int, error) {
	var n int
	_, err := r.t.Get(context.WithValue(ctx, roundsKey{}, &n), key)
	return n, err
}

func (r placedRounds) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	var n int
	_, err := r.t.Put(context.WithValue(ctx, roundsKey{}, &n), key, value)
	return n, err
}
