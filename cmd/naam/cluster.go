package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/chase"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
)

// kvService is a KV table served by a node, with the clients of every
// mode, from one caller node.
type kvService struct {
	obj   *bytecode.Object // what the server installed, for runs at the client
	cfg   kv.Config
	table *kv.Table
	peer  *host.Peer
	ids   kv.HandlerIDs
}

// startKV registers a table for records on server, installs the kv
// handlers, loads the records on the host side, and looks the handlers
// up from caller.
func startKV(ctx context.Context, server, caller *host.Node, records uint64, valueSize int) (*kvService, error) {
	cfg := kv.DefaultConfig()
	cfg.ValueSize = uint32(valueSize)
	cfg.Buckets = kv.BucketsFor(records)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obj, err := kvnode.Compile(cfg)
	if err != nil {
		return nil, err
	}
	r, err := server.Register(cfg.Region, cfg.RegionSize(), host.RegionOptions{Writable: true})
	if err != nil {
		return nil, err
	}
	table, err := kv.NewTable(cfg, r.Bytes())
	if err != nil {
		return nil, err
	}
	// Loaded before the install, which orders the host's writes before
	// every handler run (the first request's way through the kernel is
	// no order that the race detector sees).
	if err := workload.Load(ctx, []workload.Target{kv.Loader{T: table}}, records, valueSize, 1); err != nil {
		return nil, fmt.Errorf("loading %d records: %w", records, err)
	}
	if _, err := server.InstallWith(obj, cfg.InstallOptions()); err != nil {
		return nil, err
	}
	peer, err := caller.Dial(ctx, server.Addr().String())
	if err != nil {
		return nil, err
	}
	ids, err := kv.PeerIDs(ctx, peer)
	if err != nil {
		return nil, err
	}
	return &kvService{obj: obj, cfg: cfg, table: table, peer: peer, ids: ids}, nil
}

// targets returns one workload target per client for mode am or rdma.
func (s *kvService) targets(mode string, clients int) []workload.Target {
	out := make([]workload.Target, clients)
	for i := range out {
		switch mode {
		case workload.ModeAM:
			out[i] = kv.AMTarget{C: kv.NewClient(call.Peer{P: s.peer}, s.cfg, s.ids)}
		case workload.ModeRDMA:
			c := kv.NewRDMAClient(call.PeerRegion{P: s.peer, Region: s.cfg.Region}, s.cfg)
			// A one-sided writer holds a bucket's lock for three or four
			// round trips; under a skewed write mix a reader may meet it
			// many times in a row. An RDMA reader spins until it is free.
			c.Retries = 1000
			out[i] = kv.RDMATarget{C: c}
		}
	}
	return out
}

// chaseService is a linked list in a region of a node.
type chaseService struct {
	cfg  chase.Config
	head uint32
	hops uint32
	peer *host.Peer
	ids  chase.HandlerIDs
}

func startChase(ctx context.Context, server, caller *host.Node, nodes int, hops uint32) (*chaseService, error) {
	cfg := chase.DefaultConfig()
	cfg.Nodes = uint32(nodes)
	cfg.MaxHops = hops
	obj, err := chase.Compile(cfg)
	if err != nil {
		return nil, err
	}
	r, err := server.Register(cfg.Region, cfg.RegionSize(), host.RegionOptions{Writable: true})
	if err != nil {
		return nil, err
	}
	head, _, err := chase.BuildList(r.Bytes(), cfg, nodes, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		return nil, err
	}
	if _, err := server.InstallWith(obj, cfg.InstallOptions()); err != nil {
		return nil, err
	}
	peer, err := caller.Dial(ctx, server.Addr().String())
	if err != nil {
		return nil, err
	}
	ids, err := chase.PeerIDs(ctx, peer)
	if err != nil {
		return nil, err
	}
	return &chaseService{cfg: cfg, head: head, hops: hops, peer: peer, ids: ids}, nil
}

// chaseTarget walks the list's first hops as a workload target: every
// operation is a read (the key is not used: a walk starts at the head).
type chaseTarget struct {
	walk func(ctx context.Context, head, hops uint32) (chase.Result, error)
	s    *chaseService
}

func (t chaseTarget) Get(ctx context.Context, _ uint64) (int, error) {
	r, err := t.walk(ctx, t.s.head, t.s.hops)
	if err == nil && r.Hops != t.s.hops {
		err = fmt.Errorf("chase: walked %d hops, want %d", r.Hops, t.s.hops)
	}
	return r.RoundTrips, err
}

func (t chaseTarget) Put(context.Context, uint64, []byte) (int, error) {
	return 0, fmt.Errorf("chase: the pointer chase has no writes")
}

func (s *chaseService) targets(mode string, clients int) []workload.Target {
	out := make([]workload.Target, clients)
	for i := range out {
		switch mode {
		case workload.ModeAM:
			out[i] = chaseTarget{walk: chase.NewClient(call.Peer{P: s.peer}, s.ids).Walk, s: s}
		case workload.ModeRDMA:
			out[i] = chaseTarget{walk: chase.NewRDMAClient(call.PeerRegion{P: s.peer, Region: s.cfg.Region}, s.cfg).Walk, s: s}
		}
	}
	return out
}

// ledgerOn registers the ledger's regions on n (peers: the nodes its
// handlers may send to), installs it and returns a client from caller.
func ledgerOn(ctx context.Context, n, caller *host.Node, cfg rpc.Config, peers []uint64) (*rpc.Client, error) {
	obj, err := rpc.Compile(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := rpc.Register(n.NIC(), uint64(n.Tenant()), cfg, uint64(n.ID()), peers); err != nil {
		return nil, err
	}
	if _, err := n.Install(obj); err != nil {
		return nil, err
	}
	p, err := caller.Dial(ctx, n.Addr().String())
	if err != nil {
		return nil, err
	}
	ids, err := rpc.PeerIDs(ctx, p)
	if err != nil {
		return nil, err
	}
	return rpc.NewClient(call.Peer{P: p}, ids), nil
}
