package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Target is the service under test, as one client sees it. Keys are
// record numbers in [0, Records); the target maps them to its own keys.
// Each call returns the network round trips the operation took (retries
// included), which the runner averages into round_trips_per_op. A Target
// is used by Outstanding goroutines at once, so it must be safe for
// concurrent use.
type Target interface {
	Get(ctx context.Context, key uint64) (roundTrips int, err error)
	Put(ctx context.Context, key uint64, value []byte) (roundTrips int, err error)
}

// Config is one run. The defaults (zero fields): MixB, Zipfian, 1,000
// records, 64-byte values, 1 client, 1 outstanding operation, seed 1. At
// least one of Ops and Duration must be set; the run stops at whichever
// comes first, letting operations in flight finish.
type Config struct {
	Mix         Mix
	Keys        Distribution
	Records     uint64
	ValueSize   int
	Clients     int           // one Target each
	Outstanding int           // operations in flight per client (closed loop)
	Ops         uint64        // operations in all, 0: no limit
	Duration    time.Duration // 0: no limit
	Seed        uint64
}

func (c Config) withDefaults() Config {
	if c.Mix.Name == "" {
		c.Mix = MixB
	}
	if c.Keys.New == nil {
		c.Keys = Zipfian
	}
	if c.Records == 0 {
		c.Records = 1000
	}
	if c.ValueSize == 0 {
		c.ValueSize = 64
	}
	c.Clients = max(c.Clients, 1)
	c.Outstanding = max(c.Outstanding, 1)
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// Stats is what a run measured. Latencies are of the operations that
// succeeded; a failed operation counts in Errors only.
type Stats struct {
	Ops, Reads, Updates uint64 // operations that succeeded
	Errors              uint64
	FirstError          error
	RoundTrips          uint64 // of the operations that succeeded
	Elapsed             time.Duration
	Latency             Histogram // every successful operation
	ReadLatency         Histogram
	UpdateLatency       Histogram
}

// OpsPerSec is the successful operations per second of the run.
func (s *Stats) OpsPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// RoundTripsPerOp is the mean round trips of a successful operation.
func (s *Stats) RoundTripsPerOp() float64 {
	if s.Ops == 0 {
		return 0
	}
	return float64(s.RoundTrips) / float64(s.Ops)
}

// Merge adds run o to s, as if they were one run of both lengths: the
// counts, the elapsed times and the histograms add up; s keeps its own
// first error, or takes o's.
func (s *Stats) Merge(o *Stats) {
	s.Ops += o.Ops
	s.Reads += o.Reads
	s.Updates += o.Updates
	s.Errors += o.Errors
	if s.FirstError == nil {
		s.FirstError = o.FirstError
	}
	s.RoundTrips += o.RoundTrips
	s.Elapsed += o.Elapsed
	s.Latency.Merge(&o.Latency)
	s.ReadLatency.Merge(&o.ReadLatency)
	s.UpdateLatency.Merge(&o.UpdateLatency)
}

// ModeResult is s as a line of the benchmark's JSON.
func (s *Stats) ModeResult(mode string) ModeResult {
	return ModeResult{
		Mode:            mode,
		OpsPerSec:       s.OpsPerSec(),
		P50us:           float64(s.Latency.Quantile(0.50)) / 1e3,
		P99us:           float64(s.Latency.Quantile(0.99)) / 1e3,
		RoundTripsPerOp: s.RoundTripsPerOp(),
	}
}

// worker is one goroutine's share of a run.
type worker struct {
	ops, reads, updates, errs, rts uint64
	firstErr                       error
	all, read, update              Histogram
}

// record counts an operation op that succeeded in d with rts round trips.
func (w *worker) record(op Op, rts int, d time.Duration) {
	w.ops++
	w.rts += uint64(rts)
	w.all.Record(d)
	if op == OpRead {
		w.reads++
		w.read.Record(d)
	} else {
		w.updates++
		w.update.Record(d)
	}
}

// fail counts an operation op of record key that failed with err.
func (w *worker) fail(op Op, key uint64, err error) {
	w.errs++
	if w.firstErr == nil {
		w.firstErr = fmt.Errorf("%v of record %d: %w", op, key, err)
	}
}

// add counts w's operations in s.
func (s *Stats) add(w *worker) {
	s.Merge(&Stats{Ops: w.ops, Reads: w.reads, Updates: w.updates, Errors: w.errs, FirstError: w.firstErr, RoundTrips: w.rts,
		Latency: w.all, ReadLatency: w.read, UpdateLatency: w.update})
}

// check is cfg with its defaults, or why a run of it with targets cannot
// start.
func (cfg Config) check(targets int) (Config, error) {
	cfg = cfg.withDefaults()
	if cfg.Ops == 0 && cfg.Duration <= 0 {
		return cfg, errors.New("workload: a run needs Ops or Duration")
	}
	if targets != cfg.Clients {
		return cfg, fmt.Errorf("workload: %d targets for %d clients", targets, cfg.Clients)
	}
	return cfg, nil
}

// stream is the operation sequence of the i-th operation in flight of a
// run (client i/Outstanding): its random source (the mix), its key
// generator and its value, each seeded from cfg.Seed and i.
func (cfg Config) stream(i int) (r *rand.Rand, keys KeyGen, val []byte) {
	r = rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	keys = cfg.Keys.New(cfg.Records, rand.New(rand.NewPCG(cfg.Seed^0x9e3779b97f4a7c15, uint64(i))))
	val = make([]byte, cfg.ValueSize)
	for j := range val {
		val[j] = byte(r.Uint32())
	}
	return r, keys, val
}

// Run drives targets (one per client, len(targets) must be cfg.Clients)
// with cfg.Outstanding goroutines each, every goroutine running one
// operation at a time with its own seeded key generator. It returns when
// cfg.Ops operations have been started, or cfg.Duration has passed, and
// every operation in flight has ended; or with ctx's error if ctx ends
// first.
func Run(ctx context.Context, cfg Config, targets []Target) (*Stats, error) {
	cfg, err := cfg.check(len(targets))
	if err != nil {
		return nil, err
	}
	var started atomic.Uint64
	var stop atomic.Bool
	workers := make([]*worker, cfg.Clients*cfg.Outstanding)
	var wg sync.WaitGroup
	begin := time.Now()
	if cfg.Duration > 0 {
		t := time.AfterFunc(cfg.Duration, func() { stop.Store(true) })
		defer t.Stop()
	}
	for i := range workers {
		w := &worker{}
		workers[i] = w
		tgt := targets[i/cfg.Outstanding]
		r, keys, val := cfg.stream(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(0); ; seq++ {
				if stop.Load() || ctx.Err() != nil {
					return
				}
				if cfg.Ops > 0 && started.Add(1) > cfg.Ops {
					return
				}
				key := keys.Next()
				op := cfg.Mix.Next(r)
				t0 := time.Now()
				var rts int
				var err error
				if op == OpRead {
					rts, err = tgt.Get(ctx, key)
				} else {
					if len(val) >= 8 {
						val[0], val[1], val[2], val[3] = byte(seq), byte(seq>>8), byte(seq>>16), byte(seq>>24)
					}
					rts, err = tgt.Put(ctx, key, val)
				}
				d := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					w.fail(op, key, err)
					continue
				}
				w.record(op, rts, d)
			}
		}()
	}
	wg.Wait()
	st := &Stats{Elapsed: time.Since(begin)}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, w := range workers {
		st.add(w)
	}
	return st, nil
}

// Load puts every record in [0, records) once, valueSize bytes each (the
// record number in the first 8 bytes), spread over targets with
// outstanding goroutines per target. It stops at the first error.
func Load(ctx context.Context, targets []Target, records uint64, valueSize, outstanding int) error {
	if len(targets) == 0 {
		return errors.New("workload: no targets to load")
	}
	outstanding = max(outstanding, 1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Uint64
	var wg sync.WaitGroup
	for i := range len(targets) * outstanding {
		tgt := targets[i/outstanding]
		wg.Add(1)
		go func() {
			defer wg.Done()
			val := make([]byte, valueSize)
			for {
				k := next.Add(1) - 1
				if k >= records || ctx.Err() != nil {
					return
				}
				for j := 0; j < 8 && j < len(val); j++ {
					val[j] = byte(k >> (8 * j))
				}
				if _, err := tgt.Put(ctx, k, val); err != nil {
					cancel(fmt.Errorf("workload: load record %d: %w", k, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}
