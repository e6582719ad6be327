package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/nicrt"
)

// The placements naam bench kv --placement runs: the node's core classes
// forced (host, nic: nicrt.PolicyHost, PolicyNIC, the caller sending
// every call), the caller running the handler itself (client), and both
// choosing (auto: the caller between itself and the node, the node
// between its cores). node is the caller sending every call and the node
// placing it by its own policy.
var benchPlacements = []string{"host", "nic", "client", "auto"}

// benchPlacementValue is naam bench's --placement: the node's policy
// (auto, nic, host: nicFlags) for every workload, and for kv also client,
// node and all, which name caller-side placements.
type benchPlacementValue struct {
	node *placementValue
	raw  *string
}

func (v benchPlacementValue) String() string { return *v.raw }
func (v benchPlacementValue) Type() string   { return "auto|nic|host|client|node|all" }
func (v benchPlacementValue) Set(s string) error {
	*v.raw = s
	switch s {
	case "client", "node", "all":
		return nil
	}
	if err := v.node.Set(s); err != nil {
		return fmt.Errorf("placement %q: want auto, nic, host or steer (the node's policy), or for kv client, node or all", s)
	}
	return nil
}

// placementFlag makes bench's --placement (registered by nicFlags) take
// kv's caller-side placements too.
func placementFlag(fl *pflag.FlagSet, f *benchFlags) {
	pf := fl.Lookup("placement")
	pf.Value = benchPlacementValue{node: &f.nic.placement, raw: &f.placement}
	pf.Usage = "where handlers run: auto, nic, host or steer (the node's policy); kv without --modes runs its handlers at each: host, nic, client, node, auto or all (host, nic, client, auto), with round trips per GET and a check of the client's GETs"
}

// placementBench says whether runBench runs kv by placement
// (runKVPlacement), and refuses the caller-side placements elsewhere.
func placementBench(workload string, f benchFlags) (bool, error) {
	if f.placement == "" {
		return false, nil
	}
	if workload == "kv" && !f.modesSet && f.against == "" && !f.xdp {
		return true, nil
	}
	switch f.placement {
	case "client", "node", "all":
		return false, cli.Errorf(cli.ExitUsage, "--placement %s is kv's, and goes without --modes, --against and --xdp", f.placement)
	}
	return false, nil
}

// placementModes reads --placement: one placement, or all of them.
func placementModes(s string) ([]string, error) {
	if s == "all" {
		return benchPlacements, nil
	}
	if s == "node" || slices.Contains(benchPlacements, s) {
		return []string{s}, nil
	}
	return nil, cli.Errorf(cli.ExitUsage, "--placement %q: want host, nic, client, node, auto or all", s)
}

// placementOf is where a mode's calls run: the caller's placement and
// the node's policy.
func placementOf(mode string) (host.Placement, nicrt.PlacementPolicy) {
	switch mode {
	case "host":
		return host.AtNode, nicrt.PolicyHost
	case "nic":
		return host.AtNode, nicrt.PolicyNIC
	case "client":
		return host.AtClient, nicrt.PolicyAuto
	case "auto":
		return host.Auto, nicrt.PolicyAuto
	}
	return host.AtNode, nicrt.PolicyAuto
}

// placementMode is one placement's line of the JSON document: the
// workload's fields, and where the GETs ran.
type placementMode struct {
	workload.ModeResult
	Gets             uint64  `json:"gets"`
	RoundTripsPerGet float64 `json:"round_trips_per_get"`
	// AtClient and AtNode count the GETs by where they ran; Probes and
	// Switches are auto's.
	AtClient uint64 `json:"gets_at_client"`
	AtNode   uint64 `json:"gets_at_node"`
	Probes   uint64 `json:"probes"`
	Switches uint64 `json:"switches"`
}

// placementResult is naam bench kv --placement's JSON document.
type placementResult struct {
	Workload string          `json:"workload"`
	Modes    []placementMode `json:"modes"`
	// Paced: the node's cores took their modelled service times (the
	// default here; --paced=false: goroutines at this machine's speed).
	// Rounds: the placements ran in turn, each --rounds slices.
	Paced  bool `json:"paced"`
	Rounds int  `json:"rounds"`
	// The check: a YCSB run of CheckOps operations, one at a time, in
	// which every GET ran at the client and then at the node; Mismatches
	// counts those whose replies (or errors) differed.
	CheckOps              uint64  `json:"client_check_ops"`
	CheckGets             uint64  `json:"client_check_gets"`
	Mismatches            uint64  `json:"client_mismatches"`
	CheckRoundTripsPerGet float64 `json:"client_check_round_trips_per_get"`
}

// placementCheckOps is the length of the check run.
const placementCheckOps = 2000

// runKVPlacement is naam bench kv --placement: the kv handlers, called
// through the host library at each placement, each with a peer of its
// own (its own steering state). Every placement keeps its peer for the
// whole run and runs --rounds slices of --duration / --rounds (or --ops /
// --rounds), the placements taking turns: the machine's load drifts, and
// the turns spread the drift over all of them.
func runKVPlacement(ctx context.Context, stdout, stderr io.Writer, f benchFlags, wcfg workload.Config, server, client *host.Node) error {
	modes, err := placementModes(f.placement)
	if err != nil {
		return err
	}
	s, err := startKV(ctx, server, client, f.records, f.valueSize)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("kv: %w", err)}
	}
	cores := "unpaced cores"
	if server.NIC().Config().Paced {
		cores = "paced cores (modelled NIC and host speeds)"
	}
	title := fmt.Sprintf("kv ycsb-%s %s, %d records, %d-byte values, by placement, %s, host load %.2f%s, %d rounds",
		strings.ToLower(wcfg.Mix.Name), wcfg.Keys.Name, f.records, f.valueSize, cores, server.NIC().HostLoad(), keysNote(server), f.rounds)
	dial := func(pl host.Placement) (*host.Peer, *host.Handler, error) {
		return dialPlaced(ctx, server, s, pl, f.mac)
	}

	type placed struct {
		mode   string
		policy nicrt.PlacementPolicy
		p      *host.Peer
		get    *host.Handler
		pc     *placedCaller
		ts     []workload.Target
		st     *workload.Stats
	}
	var all []*placed
	defer func() {
		for _, m := range all {
			m.p.Close()
		}
	}()
	for _, mode := range modes {
		pl, policy := placementOf(mode)
		p, get, err := dial(pl)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", mode, err)}
		}
		m := &placed{mode: mode, policy: policy, p: p, get: get, pc: &placedCaller{p: p}}
		m.ts = make([]workload.Target, f.clients)
		for i := range m.ts {
			m.ts[i] = placedTarget{c: kv.NewClient(m.pc, s.cfg, s.ids), pc: m.pc}
		}
		all = append(all, m)
	}
	for r := range f.rounds {
		slice := sliceOf(wcfg, f.rounds, r)
		for _, m := range all {
			if err := server.NIC().SetPlacement(m.policy); err != nil {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", m.mode, err)}
			}
			label := m.mode
			if f.rounds > 1 {
				label = fmt.Sprintf("%s, round %d of %d", m.mode, r+1, f.rounds)
			}
			st, err := runMode(ctx, stderr, label, slice, m.ts, f.progress)
			if err == nil && st.Errors > 0 {
				err = fmt.Errorf("%d of %d operations failed; the first: %v", st.Errors, st.Errors+st.Ops, st.FirstError)
			}
			if err != nil {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", m.mode, err)}
			}
			if m.st == nil {
				m.st = st
			} else {
				m.st.Merge(st)
			}
		}
	}
	var runs []workload.ModeRun
	var lines []placementMode
	for _, m := range all {
		ps := m.get.PlacementStats()
		runs = append(runs, workload.ModeRun{Mode: m.mode, Stats: m.st})
		line := placementMode{
			ModeResult: m.st.ModeResult(m.mode), Gets: m.pc.gets.Load(),
			AtClient: ps.Client, AtNode: ps.Node, Probes: ps.Probes, Switches: ps.Switches,
		}
		if line.Gets > 0 {
			line.RoundTripsPerGet = float64(m.pc.getRounds.Load()) / float64(line.Gets)
		}
		lines = append(lines, line)
	}

	res := placementResult{Workload: title, Modes: lines, Paced: server.NIC().Config().Paced, Rounds: f.rounds, CheckOps: placementCheckOps}
	p, get, err := dial(host.AtNode)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("check: %w", err)}
	}
	ck := &checkTarget{p: p, get: get, put: kv.NewClient(&placedCaller{p: p}, s.cfg, s.ids)}
	ccfg := wcfg
	ccfg.Clients, ccfg.Outstanding, ccfg.Ops, ccfg.Duration = 1, 1, placementCheckOps, 0
	st, err := workload.Run(ctx, ccfg, []workload.Target{ck})
	p.Close()
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("check: %w", err)}
	}
	if st.Errors > 0 {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d operations failed; the first: %v", st.Errors, st.Errors+st.Ops, st.FirstError)}
	}
	res.CheckGets, res.Mismatches = ck.gets, ck.mismatches
	if ck.gets > 0 {
		res.CheckRoundTripsPerGet = float64(ck.rounds) / float64(ck.gets)
	}

	if f.plot != "" {
		if err := workload.WriteFigure(f.plot, title, runs); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("--plot: %w", err)}
		}
	}
	if f.json {
		if err := printJSON(stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%s; %d clients × %d in flight\n\n", title, f.clients, f.outstanding)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "placement\tops\tops/s\tp50 µs\tp99 µs\tround trips/GET\tGETs at client\tat node\tprobes\tswitches\t")
		for i, m := range lines {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%.1f\t%.2f\t%d\t%d\t%d\t%d\t\n", m.Mode, runs[i].Stats.Ops, m.OpsPerSec, m.P50us, m.P99us,
				m.RoundTripsPerGet, m.AtClient, m.AtNode, m.Probes, m.Switches)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "\ncheck: %d operations one at a time, %d GETs run at the client and at the node: %d mismatches, %.2f round trips per GET at the client\n",
			res.CheckOps, res.CheckGets, res.Mismatches, res.CheckRoundTripsPerGet)
	}
	if res.Mismatches > 0 {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d GETs at the client differed from the node's", res.Mismatches, res.CheckGets)}
	}
	return nil
}

// dialPlaced dials server for the kv service s with placement pl, its
// objects added so that the GET can run at the client.
func dialPlaced(ctx context.Context, server *host.Node, s *kvService, pl host.Placement, mac string) (*host.Peer, *host.Handler, error) {
	p, err := dialPlacement(ctx, server, s.obj, s.cfg.InstallOptions(), pl, mac, host.Keep{})
	if err != nil {
		return nil, nil, err
	}
	get, err := p.Handler(ctx, kv.HandlerGet)
	if err == nil && !get.CanRunAtClient() {
		err = fmt.Errorf("the kv GET cannot run at the client (client-eligible: %v)", get.ClientEligible)
	}
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, get, nil
}

// placedCaller is call.Caller over a peer, at the peer's placement; it
// counts the GETs' round trips (the runs at the client's READs).
type placedCaller struct {
	p               *host.Peer
	gets, getRounds atomic.Uint64
	byID            atomic.Pointer[map[uint32]*host.Handler]
}

// roundsKey carries an operation's round-trip counter in its context.
type roundsKey struct{}

func (c *placedCaller) handler(id uint32) *host.Handler {
	m := c.byID.Load()
	if m == nil || (*m)[id] == nil {
		hs := map[uint32]*host.Handler{}
		for _, h := range c.p.Handlers() {
			hs[h.ID] = h
		}
		c.byID.Store(&hs)
		m = &hs
	}
	return (*m)[id]
}

// Call implements call.Caller.
func (c *placedCaller) Call(ctx context.Context, id uint32, payload []byte) ([]byte, error) {
	h := c.handler(id)
	if h == nil {
		return c.p.CallID(ctx, id, payload)
	}
	reply, info, err := c.p.CallPlaced(ctx, h, payload, host.PlaceDefault)
	if n, ok := ctx.Value(roundsKey{}).(*int); ok {
		*n += info.RoundTrips
	}
	return reply, err
}

// placedTarget is a kv client whose calls go through a placedCaller.
type placedTarget struct {
	c  *kv.Client
	pc *placedCaller
}

// Get implements workload.Target: the round trips are the run's, a run
// at the client counting its READs.
func (t placedTarget) Get(ctx context.Context, key uint64) (int, error) {
	var n int
	_, err := t.c.Get(context.WithValue(ctx, roundsKey{}, &n), kv.KeyOf(key))
	if err == nil || errors.Is(err, kv.ErrNotFound) {
		t.pc.gets.Add(1)
		t.pc.getRounds.Add(uint64(n))
	}
	return n, err
}

// Put implements workload.Target (a PUT stores: it runs at the node).
func (t placedTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	var n int
	_, err := t.c.Put(context.WithValue(ctx, roundsKey{}, &n), kv.KeyOf(key), value)
	return n, err
}

// checkTarget runs every GET at the client and then at the node and
// compares what they gave; it is used by one worker (no locking).
type checkTarget struct {
	p                        *host.Peer
	get                      *host.Handler
	put                      *kv.Client
	gets, mismatches, rounds uint64
}

func (t *checkTarget) Get(ctx context.Context, key uint64) (int, error) {
	req := kv.AppendGet(nil, kv.KeyOf(key))
	atClient, info, errClient := t.p.CallPlaced(ctx, t.get, req, host.AtClient)
	atNode, _, errNode := t.p.CallPlaced(ctx, t.get, req, host.AtNode)
	t.gets++
	t.rounds += uint64(info.RoundTrips)
	if info.Placement != host.AtClient || !bytes.Equal(atClient, atNode) || !sameError(errClient, errNode) {
		t.mismatches++
	}
	return info.RoundTrips + 1, nil
}

func (t *checkTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	rep, err := t.put.Put(ctx, kv.KeyOf(key), value)
	return rep.RoundTrips, err
}

// sameError: both nil, or the same handler error (code and site).
func sameError(a, b error) bool {
	var ha, hb *host.HandlerError
	switch {
	case a == nil || b == nil:
		return a == nil && b == nil
	case errors.As(a, &ha) && errors.As(b, &hb):
		return *ha == *hb
	}
	return false
}
