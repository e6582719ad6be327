package workload

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Done ends an operation an AsyncTarget started: the round trips it took
// and its error.
type Done func(roundTrips int, err error)

// AsyncTarget is a service that starts an operation and returns without
// waiting for it: done is called exactly once when the operation ends, on
// whatever goroutine the service completes it (a receive loop), so done
// must not block; it may start further operations. A start that returns
// an error does not call done. ErrNoRoom (or an error wrapping it) says
// that no operation can start now but one can once others have ended (a
// client's credits are used); any other error fails the operation.
type AsyncTarget interface {
	StartGet(key uint64, done Done) error
	StartPut(key uint64, value []byte, done Done) error
}

// ErrNoRoom is an AsyncTarget's "not now": RunPipelined tries the
// operation again when another of the client's operations ends.
var ErrNoRoom = errors.New("workload: no room for another operation now")

// retryNoRoom is how often a client's operations refused with ErrNoRoom
// are tried again when no operation of that client ends meanwhile.
const retryNoRoom = 200 * time.Microsecond

// slot is one of a client's operations in flight under RunPipelined: the
// state a goroutine has under Run, used by one operation at a time. Its
// counts go to its client's (one set of histograms per client, not per
// operation in flight: fewer cache lines touched per operation).
type slot struct {
	c    *pipeClient
	r    *rand.Rand
	keys KeyGen
	val  []byte
	seq  uint64
	key  uint64
	op   Op
	t0   time.Time
	done Done // s.end, made once
}

// pipeClient is one target's slots' counts, and the slots waiting for
// room.
type pipeClient struct {
	run *pipeRun
	tgt AsyncTarget

	statsMu sync.Mutex // the target may end operations on several goroutines
	worker

	mu     sync.Mutex
	parked []*slot
	kick   chan struct{}
}

// pipeRun is what a RunPipelined's slots share.
type pipeRun struct {
	ctx     context.Context
	cfg     Config
	started atomic.Uint64
	stop    atomic.Bool
	wg      sync.WaitGroup
}

// RunPipelined is Run for targets that start operations without waiting
// (one per client, len(targets) must be cfg.Clients): each client keeps
// cfg.Outstanding operations in flight, starting the next from the
// completion of the last, so no goroutine waits per operation. Each
// operation in flight has the key generator, random source and value a
// goroutine of Run with the same index has, so the two runners issue the
// same operations. It returns when cfg.Ops operations have been started,
// or cfg.Duration has passed, and every operation in flight has ended; or
// with ctx's error if ctx ends first.
func RunPipelined(ctx context.Context, cfg Config, targets []AsyncTarget) (*Stats, error) {
	cfg, err := cfg.check(len(targets))
	if err != nil {
		return nil, err
	}
	run := &pipeRun{ctx: ctx, cfg: cfg}
	slots := make([]*slot, cfg.Clients*cfg.Outstanding)
	clients := make([]*pipeClient, cfg.Clients)
	for i := range clients {
		clients[i] = &pipeClient{run: run, tgt: targets[i], kick: make(chan struct{}, 1)}
	}
	for i := range slots {
		s := &slot{c: clients[i/cfg.Outstanding]}
		s.r, s.keys, s.val = cfg.stream(i)
		s.done = s.end
		slots[i] = s
	}
	// Every client's retry loop ends with the run.
	quit := make(chan struct{})
	var retries sync.WaitGroup
	for _, c := range clients {
		retries.Go(func() { c.retryLoop(quit) })
	}
	defer func() {
		close(quit)
		retries.Wait()
	}()
	begin := time.Now()
	if cfg.Duration > 0 {
		t := time.AfterFunc(cfg.Duration, func() { run.stop.Store(true) })
		defer t.Stop()
	}
	run.wg.Add(len(slots))
	for _, s := range slots {
		s.next()
	}
	finished := make(chan struct{})
	go func() {
		run.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	st := &Stats{Elapsed: time.Since(begin)}
	for _, c := range clients {
		st.add(&c.worker)
	}
	return st, nil
}

// over says whether the run takes no more operations; if not, it counts
// one more as started.
func (run *pipeRun) over() bool {
	return run.stop.Load() || run.ctx.Err() != nil || (run.cfg.Ops > 0 && run.started.Add(1) > run.cfg.Ops)
}

// next starts s's next operation, or ends s when the run is over. A start
// refused for room parks s with its client.
func (s *slot) next() {
	for {
		if s.c.run.over() {
			s.c.run.wg.Done()
			return
		}
		s.key = s.keys.Next()
		s.op = s.c.run.cfg.Mix.Next(s.r)
		s.seq++
		switch err := s.start(); {
		case err == nil:
			return // its end goes on
		case errors.Is(err, ErrNoRoom):
			s.c.park(s)
			return
		default:
			s.fail(err)
		}
	}
}

// start starts s's operation, drawn already.
func (s *slot) start() error {
	s.t0 = time.Now()
	if s.op == OpRead {
		return s.c.tgt.StartGet(s.key, s.done)
	}
	if len(s.val) >= 8 {
		s.val[0], s.val[1], s.val[2], s.val[3] = byte(s.seq), byte(s.seq>>8), byte(s.seq>>16), byte(s.seq>>24)
	}
	return s.c.tgt.StartPut(s.key, s.val, s.done)
}

// fail counts s's operation as failed with err.
func (s *slot) fail(err error) {
	c := s.c
	c.statsMu.Lock()
	c.worker.fail(s.op, s.key, err)
	c.statsMu.Unlock()
}

// end is s's operation's Done: it counts the operation, starts the next,
// and gives the client's parked operations a try.
func (s *slot) end(rts int, err error) {
	d := time.Since(s.t0)
	switch {
	case err != nil && s.c.run.ctx.Err() != nil:
		// The run is being abandoned: not a failure of the service.
	case err != nil:
		s.fail(err)
	default:
		c := s.c
		c.statsMu.Lock()
		c.record(s.op, rts, d)
		c.statsMu.Unlock()
	}
	s.next()
	s.c.unpark()
}

// park keeps s until there may be room for its operation.
func (c *pipeClient) park(s *slot) {
	c.mu.Lock()
	c.parked = append(c.parked, s)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// unpark starts the parked operations again, in the order they parked,
// until one is refused again (it goes back first in line). Once the run
// is over, a parked operation is not started: its slot ends.
func (c *pipeClient) unpark() {
	for {
		c.mu.Lock()
		if len(c.parked) == 0 {
			c.mu.Unlock()
			return
		}
		s := c.parked[0]
		c.parked = c.parked[1:]
		c.mu.Unlock()
		if c.run.stop.Load() || c.run.ctx.Err() != nil {
			c.run.wg.Done()
			continue
		}
		switch err := s.start(); {
		case err == nil:
		case errors.Is(err, ErrNoRoom):
			c.mu.Lock()
			c.parked = append([]*slot{s}, c.parked...)
			c.mu.Unlock()
			return
		default:
			s.fail(err)
			s.next()
		}
	}
}

// retryLoop unparks c's operations every retryNoRoom while any are
// parked, for the case where they parked after c's last operation in
// flight ended.
func (c *pipeClient) retryLoop(quit chan struct{}) {
	t := time.NewTicker(retryNoRoom)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-c.kick:
		}
		for {
			c.mu.Lock()
			n := len(c.parked)
			c.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
			c.unpark()
		}
	}
}
