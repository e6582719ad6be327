package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/mica"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
)

// micaService is a MICA store served by a node, with the clients of every
// mode, from one caller node.
type micaService struct {
	server *host.Node
	obj    *bytecode.Object
	mac    string // the peers of client and auto dial with --mac's keys
	cfg    mica.Config
	store  *mica.Store
	peer   *host.Peer
	ids    mica.HandlerIDs
	misses map[string]*mica.Misses // GETs that missed, by mode
}

// startMICA registers a store for records on server, loads them on the
// host side, installs the handlers and looks them up from caller.
func startMICA(ctx context.Context, server, caller *host.Node, records uint64, valueSize int, mac string) (*micaService, error) {
	cfg := mica.ConfigFor(records, valueSize)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obj, err := mica.Compile(cfg)
	if err != nil {
		return nil, err
	}
	var store *mica.Store
	peer, err := serveExample(ctx, server, caller, obj, cfg.Region, cfg.RegionSize(), cfg.InstallOptions(), func(mem []byte) (err error) {
		if store, err = mica.NewStore(cfg, mem); err != nil {
			return err
		}
		if err := workload.Load(ctx, []workload.Target{mica.Loader{S: store}}, records, valueSize, 1); err != nil {
			return fmt.Errorf("loading %d records: %w", records, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids, err := mica.PeerIDs(ctx, peer)
	if err != nil {
		return nil, err
	}
	return &micaService{server: server, obj: obj, mac: mac, cfg: cfg, store: store, peer: peer, ids: ids, misses: map[string]*mica.Misses{}}, nil
}

// targets returns one workload target per client for mode am, rdma, or
// client and auto (bench_placed.go: the GET handler at the caller, a READ
// of the bucket and one of the entry), and what stops them.
func (s *micaService) targets(ctx context.Context, mode string, clients int) ([]workload.Target, func(), error) {
	m := new(mica.Misses)
	s.misses[mode] = m
	if pl, ok := placedMode(mode); ok {
		return placedTargets(ctx, s.server, s.obj, s.cfg.InstallOptions(), pl, s.mac, host.Keep{}, clients, func(c call.Caller) workload.Target {
			return mica.Target{C: mica.NewClient(c, s.cfg, s.ids), Misses: m}
		})
	}
	out := make([]workload.Target, clients)
	for i := range out {
		switch mode {
		case workload.ModeAM:
			out[i] = mica.Target{C: mica.NewClient(call.Peer{P: s.peer}, s.cfg, s.ids), Misses: m}
		case workload.ModeRDMA:
			c := mica.NewRDMAClient(call.PeerRegion{P: s.peer, Region: s.cfg.Region}, s.cfg)
			// A one-sided writer holds a bucket for five round trips; a
			// writer of a hot bucket may meet it many times in a row.
			c.Retries = 1000
			out[i] = mica.Target{C: c, Misses: m}
		}
	}
	return out, func() {}, nil
}

// micaResult is the bench's JSON for mica: the modes and, by mode, the
// GETs that missed (a cache may: a key displaced from a full bucket).
type micaResult struct {
	workload.Result
	Misses map[string]uint64 `json:"misses"`
}

func (s *micaService) result(res workload.Result) any {
	r := micaResult{Result: res, Misses: map[string]uint64{}}
	for mode, m := range s.misses {
		r.Misses[mode] = m.Count()
	}
	return r
}

func (s *micaService) note() string {
	var missed []string
	for _, mode := range []string{workload.ModeAM, workload.ModeRDMA, modeClient, modeAuto} {
		if m, ok := s.misses[mode]; ok {
			missed = append(missed, fmt.Sprintf("%s %d", mode, m.Count()))
		}
	}
	return fmt.Sprintf("store: %d buckets × %d ways, %d log entries of %d bytes (%d MB); GETs that missed: %s",
		s.cfg.Buckets, s.cfg.Ways, s.cfg.Entries, s.cfg.EntrySize(), s.cfg.RegionSize()>>20, strings.Join(missed, ", "))
}

// serveExample registers a writable region on server, fills its bytes
// with load, installs obj with opts (after the load: the install orders
// the host's writes before every handler run) and dials server from
// caller.
func serveExample(ctx context.Context, server, caller *host.Node, obj *bytecode.Object, region string, size uint64, opts host.InstallOptions, load func(mem []byte) error) (*host.Peer, error) {
	r, err := server.Register(region, size, host.RegionOptions{Writable: true})
	if err != nil {
		return nil, err
	}
	if err := load(r.Bytes()); err != nil {
		return nil, err
	}
	if _, err := server.InstallWith(obj, opts); err != nil {
		return nil, err
	}
	return caller.Dial(ctx, server.Addr().String())
}
