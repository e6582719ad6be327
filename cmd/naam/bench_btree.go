package main

import (
	"context"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/btree"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
)

// modeRDMACached is the B-tree's one-sided lookup with the top
// --cache-levels levels cached at the client (mode rdma caches none);
// modeClientCached is the lookup handler run at the caller with the same
// levels kept from one run to the next (host.Peer.KeepAtClient; mode
// client keeps none).
const (
	modeRDMACached   = "rdma-cached"
	modeClientCached = "client-cached"
)

// btreeService is a B-tree served by a node, from one caller node.
type btreeService struct {
	server      *host.Node
	obj         *bytecode.Object
	mac         string // the peers of client and auto dial with --mac's keys
	cfg         btree.Config
	tree        *btree.Tree
	peer        *host.Peer
	ids         btree.HandlerIDs
	cacheLevels int
}

// startBTree registers a tree for records on server, bulk-loads them
// (fill keys a node, 0: three quarters of the fanout), installs the
// handlers and looks them up from caller.
func startBTree(ctx context.Context, server, caller *host.Node, records uint64, fanout uint32, fill, cacheLevels int, mac string) (*btreeService, error) {
	cfg := btree.DefaultConfig()
	cfg.Fanout = fanout
	cfg.Nodes = btree.NodesFor(records, fanout)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obj, err := btree.Compile(cfg)
	if err != nil {
		return nil, err
	}
	var tree *btree.Tree
	peer, err := serveExample(ctx, server, caller, obj, cfg.Region, cfg.RegionSize(), cfg.InstallOptions(), func(mem []byte) (err error) {
		if tree, err = btree.NewTree(cfg, mem); err != nil {
			return err
		}
		return btree.Load(tree, records, fill)
	})
	if err != nil {
		return nil, err
	}
	ids, err := btree.PeerIDs(ctx, peer)
	if err != nil {
		return nil, err
	}
	return &btreeService{server: server, obj: obj, mac: mac, cfg: cfg, tree: tree, peer: peer, ids: ids, cacheLevels: cacheLevels}, nil
}

// targets returns one workload target per client: am, rdma (a READ per
// level), rdma-cached (each client its own cache of the top levels), or
// client and auto (bench_placed.go: the lookup handler at the caller, a
// READ per level, no level kept from one lookup to the next), or
// client-cached (the same with the top levels kept at the peer all the
// clients share), and what stops them.
func (s *btreeService) targets(ctx context.Context, mode string, clients int) ([]workload.Target, func(), error) {
	var keep host.Keep
	if mode == modeClientCached {
		mode, keep = modeClient, s.tree.KeepUpperLevels(s.cacheLevels)
	}
	if pl, ok := placedMode(mode); ok {
		return placedTargets(ctx, s.server, s.obj, s.cfg.InstallOptions(), pl, s.mac, keep, clients, func(c call.Caller) workload.Target {
			return btree.Target{C: btree.NewClient(c, s.cfg, s.ids)}
		})
	}
	out := make([]workload.Target, clients)
	for i := range out {
		switch mode {
		case workload.ModeAM:
			out[i] = btree.Target{C: btree.NewClient(call.Peer{P: s.peer}, s.cfg, s.ids)}
		case workload.ModeRDMA, modeRDMACached:
			levels := 0
			if mode == modeRDMACached {
				levels = s.cacheLevels
			}
			c := btree.NewRDMAClient(call.PeerRegion{P: s.peer, Region: s.cfg.Region}, s.cfg, levels)
			// A one-sided update holds its leaf for three round trips.
			c.Retries = 1000
			out[i] = btree.Target{C: c}
		}
	}
	return out, func() {}, nil
}

// btreeResult is the bench's JSON for btree: the modes and the tree's
// shape.
type btreeResult struct {
	workload.Result
	Height      uint32 `json:"height"`
	Fanout      uint32 `json:"fanout"`
	Nodes       uint32 `json:"nodes"`
	CacheLevels int    `json:"cache_levels"`
}

func (s *btreeService) result(res workload.Result) any {
	return btreeResult{Result: res, Height: s.tree.Height(), Fanout: s.cfg.Fanout, Nodes: s.tree.Used(), CacheLevels: s.cacheLevels}
}
