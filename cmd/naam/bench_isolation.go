package main

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
)

//go:embed isolation.naam
var isolationSource []byte

// The tenants of naam bench isolation.
const (
	isolationVictim    = 2
	isolationAggressor = 3
)

// Limits of naam bench isolation.
const (
	maxVictimRate     = 100_000
	maxAggressorCalls = 4096
)

// isolationFlags are naam bench isolation's own settings.
type isolationFlags struct {
	victimRate float64
	aggressors int
	nicCores   int
	warmup     time.Duration
}

func (f *isolationFlags) register(fl *pflag.FlagSet) {
	fl.Float64Var(&f.victimRate, "victim-rate", 1000, "isolation: the victim's calls per second (one at a time)")
	fl.IntVar(&f.aggressors, "aggressor-calls", 32, "isolation: the aggressor's calls in flight")
	fl.IntVar(&f.nicCores, "nic-cores", 2, "isolation: NIC cores of the node")
	fl.DurationVar(&f.warmup, "warmup", 200*time.Millisecond, "isolation: how long the aggressor runs before the victim is measured")
}

// isolationSecret is tenant t's key in the bench: derived, not secret
// (the bench runs on loopback).
func isolationSecret(t uint32) []byte {
	sum := sha256.Sum256(binary.LittleEndian.AppendUint32([]byte("naam bench isolation tenant "), t))
	return sum[:]
}

// isolationMode is one mode's line of the JSON: the victim's figures under
// the aggressor (the ModeResult), alone, and the aggressor's.
type isolationMode struct {
	workload.ModeResult
	Fair           bool    `json:"fair"`
	Partition      bool    `json:"partition"`
	SoloP50us      float64 `json:"solo_p50_us"`
	SoloP99us      float64 `json:"solo_p99_us"`
	VictimP99Ratio float64 `json:"victim_p99_ratio"`
	// SoloP99Rounds and P99Rounds are each round's victim p99 alone and
	// under the aggressor: a round whose solo p99 is far above the others'
	// had a stall of the machine.
	SoloP99Rounds      []float64 `json:"solo_p99_rounds_us"`
	P99Rounds          []float64 `json:"p99_rounds_us"`
	VictimOps          uint64    `json:"victim_ops"`
	AggressorOpsPerSec float64   `json:"aggressor_ops_per_sec"`
	AggressorP99us     float64   `json:"aggressor_p99_us"`
	AggressorErrors    uint64    `json:"aggressor_errors"`
	// NICBusy is the share of the NIC cores' modelled capacity the run
	// used while the victim was measured under the aggressor.
	NICBusy float64 `json:"nic_busy"`
	// Tenant counters of the node at the end of the mode.
	VictimDropped    uint64 `json:"victim_dropped"`
	AggressorDropped uint64 `json:"aggressor_dropped"`
}

// isolationResult is the JSON of naam bench isolation.
type isolationResult struct {
	Workload string          `json:"workload"`
	Modes    []isolationMode `json:"modes"`
	// Mode, VictimP99Ratio, AggressorOpsPerSec and NICBusy are the first
	// mode's.
	Mode               string  `json:"mode"`
	VictimP99Ratio     float64 `json:"victim_p99_ratio"`
	AggressorOpsPerSec float64 `json:"aggressor_ops_per_sec"`
	NICBusy            float64 `json:"nic_busy"`
	NICCores           int     `json:"nic_cores"`
	VictimRate         float64 `json:"victim_rate"`
	AggressorCalls     int     `json:"aggressor_calls"`
	VictimBound        uint64  `json:"victim_bound"`
	AggressorBound     uint64  `json:"aggressor_bound"`
	Rounds             int     `json:"rounds"`
}

// isolationNode is the node of one mode with its two tenants' peers.
type isolationNode struct {
	server            *host.Node
	victim, aggressor *host.Peer
	probe, burn       uint32
	probeMax, burnMax uint64
}

func startIsolation(ctx context.Context, ncfg nicrt.Config, obj *bytecode.Object) (*isolationNode, error) {
	server, err := host.Start(host.Config{
		Name: "bench-isolation", Tenant: 1, Secret: isolationSecret(1), NIC: ncfg,
		Tenants: map[uint32][]byte{isolationVictim: isolationSecret(isolationVictim), isolationAggressor: isolationSecret(isolationAggressor)},
	})
	if err != nil {
		return nil, err
	}
	in := &isolationNode{server: server}
	for _, t := range []uint32{isolationVictim, isolationAggressor} {
		p, err := host.Dial(ctx, server.Addr().String(), t, isolationSecret(t), 0)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("tenant %d: %w", t, err)
		}
		if t == isolationVictim {
			in.victim = p
		} else {
			in.aggressor = p
		}
		if err := p.Register(ctx, "data", 8, host.RegionOptions{}); err != nil {
			in.close()
			return nil, fmt.Errorf("tenant %d: %w", t, err)
		}
		pp, err := p.Install(ctx, obj)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("tenant %d: install: %w", t, err)
		}
		for _, h := range pp.Handlers {
			switch {
			case h.Name == "probe" && t == isolationVictim:
				in.probe = h.ID
			case h.Name == "burn" && t == isolationAggressor:
				in.burn = h.ID
			}
		}
	}
	probe, okProbe := server.NIC().HandlerStats(in.probe)
	burn, okBurn := server.NIC().HandlerStats(in.burn)
	if !okProbe || !okBurn {
		in.close()
		return nil, errors.New("the probe and burn handlers are not both installed on the node")
	}
	in.probeMax, in.burnMax = probe.MaxInsns, burn.MaxInsns
	return in, nil
}

func (in *isolationNode) close() {
	for _, p := range []*host.Peer{in.victim, in.aggressor} {
		if p != nil {
			p.Close()
		}
	}
	in.server.Close()
}

// drain waits, up to a second, until the node has nothing queued and has
// run nothing for 5 ms (the burns the aggressor left queued or in
// flight, and the paced cores' clocks catching up), so that the next
// round's victim alone is alone; it reports whether the node went quiet.
func (in *isolationNode) drain(ctx context.Context) bool {
	deadline := time.Now().Add(time.Second)
	last := ^uint64(0)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s := in.server.NIC().Stats()
		runs := s.NIC.Runs + s.Host.Runs
		if s.Load.NIC.Queued == 0 && s.Load.Host.Queued == 0 && runs == last {
			return true
		}
		last = runs
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// victimRun calls the probe one at a time at rate calls per second, for
// ops calls or d, whichever ends first.
func (in *isolationNode) victimRun(ctx context.Context, rate float64, ops uint64, d time.Duration) (*workload.Stats, error) {
	st := &workload.Stats{}
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	next := start
	for i := uint64(0); (ops == 0 || i < ops) && (d <= 0 || time.Since(start) < d); i++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(interval)
		if now := time.Now(); next.Before(now) {
			next = now // fell behind: no burst to catch up
		}
		x := uint64(i)<<8 | 0x5a
		t0 := time.Now()
		out, err := in.victim.CallID(ctx, in.probe, binary.LittleEndian.AppendUint64(nil, x))
		lat := time.Since(t0)
		if err == nil && (len(out) != 8 || binary.LittleEndian.Uint64(out) != x^1) {
			err = fmt.Errorf("probe(%d) replied %x", x, out)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			st.Errors++
			if st.FirstError == nil {
				st.FirstError = err
			}
			continue
		}
		st.Ops++
		st.Reads++
		st.RoundTrips++
		st.Latency.Record(lat)
		st.ReadLatency.Record(lat)
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

// aggressorRun keeps n calls of burn in flight until stop is called;
// stop returns what they did from the moment mark was called.
func (in *isolationNode) aggressorRun(ctx context.Context, n int) (mark func(), stop func() (*workload.Stats, uint64)) {
	ctx, cancel := context.WithCancel(ctx)
	var counting atomic.Bool
	var mu sync.Mutex
	st := &workload.Stats{}
	var errs uint64
	var markedAt time.Time
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			var h workload.Histogram
			var ops, gerrs uint64
			for x := uint64(g) << 32; ctx.Err() == nil; x++ {
				t0 := time.Now()
				_, err := in.aggressor.CallID(ctx, in.burn, binary.LittleEndian.AppendUint64(nil, x))
				if !counting.Load() {
					continue
				}
				if err != nil {
					if ctx.Err() == nil {
						gerrs++
					}
					continue
				}
				ops++
				h.Record(time.Since(t0))
			}
			mu.Lock()
			st.Ops += ops
			st.Latency.Merge(&h)
			errs += gerrs
			mu.Unlock()
		})
	}
	mark = func() {
		markedAt = time.Now()
		counting.Store(true)
	}
	stop = func() (*workload.Stats, uint64) {
		elapsed := time.Since(markedAt)
		cancel()
		wg.Wait()
		st.Elapsed = elapsed
		return st, errs
	}
	return mark, stop
}

// runIsolation is naam bench isolation: per mode (partition: fair
// queueing and cores of its own for each tenant; fair: per-tenant fair
// queueing on the node's cores; fifo: one queue per core), the victim's
// latency alone and while the aggressor saturates the node's paced NIC
// cores.
func runIsolation(ctx context.Context, stdout, stderr io.Writer, f benchFlags) error {
	iso := f.isolation
	switch {
	case iso.victimRate <= 0 || iso.victimRate > maxVictimRate:
		return fmt.Errorf("--victim-rate must be above 0 and at most %d", maxVictimRate)
	case iso.aggressors < 1 || iso.aggressors > maxAggressorCalls:
		return fmt.Errorf("--aggressor-calls must be 1…%d", maxAggressorCalls)
	case iso.nicCores < 1 || iso.nicCores > 64:
		return fmt.Errorf("--nic-cores must be 1…64")
	case iso.warmup < 0 || iso.warmup > time.Minute:
		return fmt.Errorf("--warmup must be 0…1m")
	case f.rounds < 1 || f.rounds > 100:
		return fmt.Errorf("--rounds must be 1…100")
	}
	modes := []string{"partition", "fair", "fifo"}
	if f.modesSet {
		modes = strings.Split(f.modes, ",")
		for _, m := range modes {
			if m != "partition" && m != "fair" && m != "fifo" {
				return fmt.Errorf("--modes: %q is not partition, fair or fifo", m)
			}
		}
	}
	var ncfg nicrt.Config
	f.nic.apply(&ncfg)
	// The bench's own defaults: paced cores, and no spill, so that the
	// aggressor saturates the modelled NIC cores.
	ncfg.Paced = f.nic.paced || !f.nic.pacedSet
	if !f.nic.placementSet {
		ncfg.Placement = nicrt.PolicyNIC
	}
	ncfg.NICCores = iso.nicCores
	// Both tenants' messages spread over every NIC core.
	ncfg.Steering = nicrt.SteerRequest
	obj, err := compiler.Compile(lang.NewFileSet(), "isolation.naam", isolationSource)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("isolation: compile: %w", err)}
	}
	res := isolationResult{NICCores: iso.nicCores, VictimRate: iso.victimRate, AggressorCalls: iso.aggressors, Rounds: f.rounds}
	for _, mode := range modes {
		cfg := ncfg
		cfg.Fair = mode != "fifo"
		cfg.Partition = mode == "partition"
		m, in, err := isolationOne(ctx, stderr, cfg, obj, f)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("isolation, %s: %w", mode, err)}
		}
		m.Mode = mode
		res.VictimBound, res.AggressorBound = in.probeMax, in.burnMax
		res.Modes = append(res.Modes, m)
	}
	first := res.Modes[0]
	res.Mode, res.VictimP99Ratio, res.AggressorOpsPerSec, res.NICBusy = first.Mode, first.VictimP99Ratio, first.AggressorOpsPerSec, first.NICBusy
	res.Workload = fmt.Sprintf("isolation: victim probe (bound %d) at %.0f/s against aggressor burn (bound %d, %d in flight), %d paced NIC cores, placement %s, %d rounds",
		res.VictimBound, iso.victimRate, res.AggressorBound, iso.aggressors, iso.nicCores, ncfg.Placement, f.rounds)
	if f.json {
		return printJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s\n\n", res.Workload)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tsolo p99 µs\tvictim p50 µs\tvictim p99 µs\tp99 ratio\taggressor ops/s\taggressor p99 µs\tNIC busy\t")
	for _, m := range res.Modes {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.2f\t%.0f\t%.1f\t%.0f%%\t\n", m.Mode, m.SoloP99us, m.P50us, m.P99us, m.VictimP99Ratio,
			m.AggressorOpsPerSec, m.AggressorP99us, 100*m.NICBusy)
	}
	return tw.Flush()
}

// isolationOne runs one mode on a node of its own: --rounds rounds of the
// victim alone, then under the aggressor, each a --rounds-th of --duration
// (or --ops), the rounds' samples pooled, so that a stall of this machine
// falls in either phase alike rather than in one of two long ones.
func isolationOne(ctx context.Context, stderr io.Writer, cfg nicrt.Config, obj *bytecode.Object, f benchFlags) (isolationMode, *isolationNode, error) {
	iso := f.isolation
	in, err := startIsolation(ctx, cfg, obj)
	if err != nil {
		return isolationMode{}, nil, err
	}
	defer in.close()
	rounds := f.rounds // 1…100, checked by runIsolation
	d := f.duration / time.Duration(rounds)
	var solo, loaded, agg workload.Stats
	var aggErrs, modelNanos uint64
	var m isolationMode
	for r := range rounds {
		// --ops over the rounds, the first ones taking the remainder.
		ops := f.ops / uint64(rounds)
		if uint64(r) < f.ops%uint64(rounds) {
			ops++
		}
		if f.ops > 0 && ops == 0 {
			break
		}
		s, err := in.victimRun(ctx, iso.victimRate, ops, d)
		if err != nil {
			return isolationMode{}, in, err
		}
		if s.Errors > 0 {
			return isolationMode{}, in, fmt.Errorf("victim alone, round %d: %d of %d calls failed; the first: %v", r+1, s.Errors, s.Errors+s.Ops, s.FirstError)
		}
		solo.Merge(s)
		mark, stop := in.aggressorRun(ctx, iso.aggressors)
		time.Sleep(iso.warmup)
		before := in.server.NIC().Stats().NIC
		mark()
		l, err := in.victimRun(ctx, iso.victimRate, ops, d)
		a, errs := stop()
		after := in.server.NIC().Stats().NIC
		if err != nil {
			return isolationMode{}, in, err
		}
		loaded.Merge(l)
		agg.Merge(a)
		aggErrs += errs
		modelNanos += after.ModelNanos - before.ModelNanos
		m.SoloP99Rounds = append(m.SoloP99Rounds, s.ModeResult("").P99us)
		m.P99Rounds = append(m.P99Rounds, l.ModeResult("").P99us)
		if r+1 < rounds && !in.drain(ctx) {
			fmt.Fprintf(stderr, "naam bench isolation: round %d: the node did not go quiet within 1s of the aggressor's stop\n", r+1)
		}
	}
	if loaded.Errors > 0 {
		fmt.Fprintf(stderr, "naam bench isolation: victim under the aggressor: %d of %d calls failed; the first: %v\n", loaded.Errors, loaded.Errors+loaded.Ops, loaded.FirstError)
	}
	after := in.server.NIC().Stats()
	m.ModeResult, m.Fair, m.Partition, m.VictimOps = loaded.ModeResult(""), cfg.Fair, cfg.Partition, loaded.Ops
	soloR, aggR := solo.ModeResult(""), agg.ModeResult("")
	m.SoloP50us, m.SoloP99us = soloR.P50us, soloR.P99us
	m.AggressorOpsPerSec, m.AggressorP99us, m.AggressorErrors = aggR.OpsPerSec, aggR.P99us, aggErrs
	if m.SoloP99us > 0 {
		m.VictimP99Ratio = m.P99us / m.SoloP99us
	}
	if agg.Elapsed > 0 {
		m.NICBusy = float64(modelNanos) / float64(agg.Elapsed) / float64(cfg.NICCores)
	}
	for _, t := range after.TenantCounters {
		switch t.Tenant {
		case isolationVictim:
			m.VictimDropped = t.Dropped
		case isolationAggressor:
			m.AggressorDropped = t.Dropped
		}
	}
	return m, in, nil
}
