package workload

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// asyncFake is a fakeTarget that completes each operation delay later
// on a timer's goroutine, with at most room in flight (ErrNoRoom beyond),
// and refuses to start key startFail.
type asyncFake struct {
	*fakeTarget
	mu        sync.Mutex
	delay     time.Duration
	inflight  int
	peak      int
	room      int
	refused   int
	startFail uint64
}

func newAsyncFake(room int, delay time.Duration) *asyncFake {
	return &asyncFake{fakeTarget: &fakeTarget{data: map[uint64][]byte{}, failKey: math.MaxUint64}, delay: delay, room: room, startFail: math.MaxUint64}
}

func (a *asyncFake) begin(key uint64) error {
	if key == a.startFail {
		return errors.New("cannot send")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inflight >= a.room {
		a.refused++
		return ErrNoRoom
	}
	a.inflight++
	a.peak = max(a.peak, a.inflight)
	return nil
}

func (a *asyncFake) finish(done Done, op func() (int, error)) {
	time.AfterFunc(a.delay, func() {
		rts, err := op()
		a.mu.Lock()
		a.inflight--
		a.mu.Unlock()
		done(rts, err)
	})
}

func (a *asyncFake) StartGet(key uint64, done Done) error {
	if err := a.begin(key); err != nil {
		return err
	}
	a.finish(done, func() (int, error) { return a.fakeTarget.Get(context.Background(), key) })
	return nil
}

func (a *asyncFake) StartPut(key uint64, value []byte, done Done) error {
	if err := a.begin(key); err != nil {
		return err
	}
	v := append([]byte(nil), value...)
	a.finish(done, func() (int, error) { return a.fakeTarget.Put(context.Background(), key, v) })
	return nil
}

func TestRunPipelined(t *testing.T) {
	tests := []struct {
		name              string
		room, outstanding int
		wantPeak          int
		wantRefused       bool
	}{
		{"room for all", 100, 8, 8, false},
		{"credits fewer than outstanding", 3, 8, 3, true},
		{"one at a time", 1, 1, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var targets []AsyncTarget
			var fakes []*asyncFake
			for range 2 {
				f := newAsyncFake(tt.room, 100*time.Microsecond)
				fakes = append(fakes, f)
				targets = append(targets, f)
			}
			cfg := Config{Mix: MixA, Keys: Uniform, Records: 300, ValueSize: 16, Clients: 2, Outstanding: tt.outstanding, Ops: 3000, Seed: 3}
			st, err := RunPipelined(context.Background(), cfg, targets)
			if err != nil {
				t.Fatal(err)
			}
			var gets, puts uint64
			for i, f := range fakes {
				gets += f.gets.Load()
				puts += f.puts.Load()
				if p := f.peak; p != tt.wantPeak {
					t.Errorf("client %d: %d operations at once, want %d", i, p, tt.wantPeak)
				}
				if (f.refused > 0) != tt.wantRefused {
					t.Errorf("client %d: refused %d starts", i, f.refused)
				}
				for k, v := range f.data {
					if k >= 300 || len(v) != 16 {
						t.Fatalf("put of record %d with %d bytes", k, len(v))
					}
				}
			}
			if st.Ops != 3000 || gets+puts != 3000 || st.Reads != gets || st.Updates != puts || st.Errors != 0 {
				t.Fatalf("stats %d ops (%d reads, %d updates, %d errors); targets saw %d gets, %d puts", st.Ops, st.Reads, st.Updates, st.Errors, gets, puts)
			}
			if frac := float64(st.Reads) / float64(st.Ops); math.Abs(frac-0.5) > 0.04 {
				t.Errorf("read fraction %.3f under mix A", frac)
			}
			if want := (2*float64(st.Reads) + float64(st.Updates)) / float64(st.Ops); st.RoundTripsPerOp() != want {
				t.Errorf("round trips per op %v, want %v", st.RoundTripsPerOp(), want)
			}
			if st.Latency.Count() != 3000 || st.Latency.Quantile(0.5) < 100*time.Microsecond {
				t.Errorf("latency: %d values, p50 %v (each op takes 100µs)", st.Latency.Count(), st.Latency.Quantile(0.5))
			}
			// At most min(room, outstanding) per client, each ≥ 100 µs.
			if most := float64(2*min(tt.room, tt.outstanding)) / 100e-6; st.OpsPerSec() > most {
				t.Errorf("%.0f ops/s, faster than %.0f", st.OpsPerSec(), most)
			}
		})
	}
}

func TestRunPipelinedDurationAndErrors(t *testing.T) {
	f := newAsyncFake(4, 20*time.Microsecond)
	f.failKey, f.startFail = 0, 1 // key 0 fails in the service, key 1 does not start
	cfg := Config{Mix: MixC, Keys: Uniform, Records: 4, Clients: 1, Outstanding: 6, Duration: 100 * time.Millisecond}
	start := time.Now()
	st, err := RunPipelined(context.Background(), cfg, []AsyncTarget{f})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Errorf("a 100 ms run took %v", el)
	}
	if st.Errors == 0 || st.FirstError == nil || st.Updates != 0 || st.Ops == 0 {
		t.Errorf("ops %d, errors %d (%v), updates %d", st.Ops, st.Errors, st.FirstError, st.Updates)
	}
	if frac := float64(st.Errors) / float64(st.Errors+st.Ops); math.Abs(frac-0.5) > 0.05 {
		t.Errorf("%.3f of the operations failed; two keys in 4 fail", frac)
	}
	if _, err := RunPipelined(context.Background(), Config{}, []AsyncTarget{f}); err == nil {
		t.Error("a run without Ops or Duration started")
	}
	if _, err := RunPipelined(context.Background(), Config{Ops: 1, Clients: 2}, []AsyncTarget{f}); err == nil {
		t.Error("2 clients with 1 target")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunPipelined(ctx, Config{Ops: 10}, []AsyncTarget{f}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// TestRunPipelinedNoRoomAtAll: a target that refuses every start until
// a deadline (no operation of its own in flight ever ends to retry the
// parked ones) is still retried, and the run ends.
func TestRunPipelinedNoRoomAtAll(t *testing.T) {
	f := newAsyncFake(0, 10*time.Microsecond)
	time.AfterFunc(20*time.Millisecond, func() {
		f.mu.Lock()
		f.room = 2
		f.mu.Unlock()
	})
	st, err := RunPipelined(context.Background(), Config{Mix: MixC, Keys: Uniform, Records: 10, Outstanding: 4, Ops: 200}, []AsyncTarget{f})
	if err != nil {
		t.Fatal(err)
	}
	if st.Ops != 200 || f.refused == 0 {
		t.Errorf("%d ops, %d refused starts", st.Ops, f.refused)
	}
}
