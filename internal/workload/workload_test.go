package workload

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func freqs(g KeyGen, n uint64, draws int) []int {
	c := make([]int, n)
	for range draws {
		k := g.Next()
		if k >= n {
			panic("key out of range")
		}
		c[k]++
	}
	return c
}

// topShare is the fraction of draws that went to the k most drawn keys.
func topShare(c []int, k int, draws int) float64 {
	s := slices.Clone(c)
	slices.Sort(s)
	slices.Reverse(s)
	t := 0
	for _, x := range s[:k] {
		t += x
	}
	return float64(t) / float64(draws)
}

func TestZipfFirstItems(t *testing.T) {
	const n, draws = 100, 400_000
	z := NewZipf(n, ZipfTheta, 0, rand.New(rand.NewPCG(1, 1)))
	c := freqs(z, n, draws)
	zetan := Zeta(n, ZipfTheta)
	// Items 0 and 1 are drawn with their exact Zipf probabilities.
	for i, want := range []float64{1 / zetan, math.Pow(0.5, ZipfTheta) / zetan} {
		got := float64(c[i]) / draws
		if math.Abs(got-want) > 0.01 {
			t.Errorf("item %d: frequency %.4f, Zipf says %.4f", i, got, want)
		}
	}
	// The head is heavier than the tail: the first 10 items against the
	// last 10.
	head, tail := 0, 0
	for i := range 10 {
		head += c[i]
		tail += c[n-1-i]
	}
	if head < 10*tail {
		t.Errorf("first 10 items %d draws, last 10 %d", head, tail)
	}
}

func TestScrambledZipfSkew(t *testing.T) {
	const n, draws = 1000, 300_000
	zc := freqs(Zipfian.New(n, rand.New(rand.NewPCG(2, 2))), n, draws)
	uc := freqs(Uniform.New(n, rand.New(rand.NewPCG(2, 2))), n, draws)
	zTop1, zTop10 := topShare(zc, 1, draws), topShare(zc, 10, draws)
	uTop10 := topShare(uc, 10, draws)
	t.Logf("zipfian: top key %.2f%%, top 1%% of keys %.2f%%; uniform top 1%% %.2f%%", 100*zTop1, 100*zTop10, 100*uTop10)
	// The most popular record gets 1/ζ(10^10, 0.99) = 3.78% of the draws
	// plus its share of the scrambled tail; the top 10 about 12%.
	if zTop1 < 0.035 || zTop1 > 0.05 {
		t.Errorf("top key share %.4f, want about 0.038", zTop1)
	}
	if zTop10 < 0.09 || zTop10 > 0.16 {
		t.Errorf("top 10 keys share %.4f, want about 0.12", zTop10)
	}
	if uTop10 > 0.015 {
		t.Errorf("uniform top 10 share %.4f", uTop10)
	}
	// Popular records are scattered, not the first ones.
	if zc[0] == slices.Max(zc) && zc[1] == slices.Max(zc[1:]) {
		t.Error("the two most popular records are 0 and 1: not scrambled")
	}
	// The same seed gives the same sequence.
	a, b := Zipfian.New(n, rand.New(rand.NewPCG(5, 6))), Zipfian.New(n, rand.New(rand.NewPCG(5, 6)))
	for range 1000 {
		if a.Next() != b.Next() {
			t.Fatal("same seed, different keys")
		}
	}
}

func TestFNVHash64(t *testing.T) {
	for _, v := range []uint64{0, 1, 42, 1 << 40, math.MaxUint64} {
		h := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
		want := h.Sum64()
		if int64(want) < 0 {
			want = uint64(-int64(want))
		}
		if got := FNVHash64(v); got != want {
			t.Errorf("FNVHash64(%d) = %#x, want %#x", v, got, want)
		}
	}
}

func TestMixes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, name := range []string{"A", "b", "C"} {
		m, err := MixByName(name)
		if err != nil {
			t.Fatal(err)
		}
		reads := 0
		const draws = 100_000
		for range draws {
			if m.Next(r) == OpRead {
				reads++
			}
		}
		got := float64(reads) / draws
		if math.Abs(got-m.ReadFrac) > 0.01 {
			t.Errorf("mix %s: %.3f reads, want %.2f", m.Name, got, m.ReadFrac)
		}
		if m.ReadFrac == 1 && reads != draws {
			t.Errorf("mix C made %d updates", draws-reads)
		}
	}
	if _, err := MixByName("D"); err == nil {
		t.Error("mix D exists")
	}
	if _, err := DistributionByName("latest"); err == nil {
		t.Error("distribution latest exists")
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.CDF() != nil || h.Mean() != 0 {
		t.Error("an empty histogram is not empty")
	}
	for v := 1; v <= 100; v++ {
		h.Record(time.Duration(v))
	}
	// Below 128 ns every value has its own bucket: exact.
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.01, 1}, {0.5, 50}, {0.99, 99}, {1, 100}} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("q%.2f = %v, want %v", c.q, got, c.want)
		}
	}
	// Larger values within 1/128.
	var big Histogram
	r := rand.New(rand.NewPCG(4, 4))
	var vals []float64
	for range 50_000 {
		v := time.Duration(r.ExpFloat64() * 20_000) // µs-scale, long tail
		big.Record(v)
		vals = append(vals, float64(v))
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		got := float64(big.Quantile(q))
		if math.Abs(got-exact)/exact > 1.0/128 {
			t.Errorf("q%v = %.0f, exact %.0f", q, got, exact)
		}
	}
	if big.Max() != time.Duration(vals[len(vals)-1]) || big.Min() != time.Duration(vals[0]) {
		t.Errorf("min/max %v %v", big.Min(), big.Max())
	}
	// Merging gives the histogram of all the values.
	var a, b, all Histogram
	for i := range 1000 {
		v := time.Duration(i * i)
		all.Record(v)
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(&b)
	if a != all {
		t.Error("merged histogram differs from the whole")
	}
	cdf := all.CDF()
	for i := 1; i < len(cdf); i++ {
		if cdf[i].Latency < cdf[i-1].Latency || cdf[i].Fraction <= cdf[i-1].Fraction {
			t.Fatalf("CDF not increasing at %d: %+v %+v", i, cdf[i-1], cdf[i])
		}
	}
	if last := cdf[len(cdf)-1]; last.Fraction != 1 || last.Latency != all.Max() {
		t.Errorf("CDF ends at %+v", last)
	}
	// Bucket boundaries are contiguous and hold their values.
	prev := uint64(0)
	for bkt := 1; bkt < numBuckets; bkt++ {
		lo, hi := bucketRange(bkt)
		if lo != prev+1 || bucketOf(lo) != bkt || bucketOf(hi) != bkt {
			t.Fatalf("bucket %d = [%d, %d] after %d", bkt, lo, hi, prev)
		}
		prev = hi
	}
	if prev != math.MaxUint64 {
		t.Errorf("the last bucket ends at %d", prev)
	}
}

func TestResultJSON(t *testing.T) {
	r := Result{Workload: "ycsb-b", Modes: []ModeResult{
		{Mode: ModeAM, OpsPerSec: 1000, P50us: 15.5, P99us: 40, RoundTripsPerOp: 1},
		{Mode: ModeRDMA, OpsPerSec: 500, P50us: 31, P99us: 80, RoundTripsPerOp: 2.05},
	}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["workload"] != "ycsb-b" {
		t.Fatalf("top level %v", m)
	}
	modes := m["modes"].([]any)
	want := []string{"mode", "ops_per_sec", "p50_us", "p99_us", "round_trips_per_op"}
	for _, x := range modes {
		mode := x.(map[string]any)
		var keys []string
		for k := range mode {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("mode keys %v, want %v", keys, want)
		}
	}
	if modes[1].(map[string]any)["round_trips_per_op"] != 2.05 {
		t.Errorf("round trips %v", modes[1])
	}
}

// fakeTarget is a map behind a mutex; it reports 2 round trips per Get
// and 1 per Put, sleeps a little, and fails keys it is told to.
type fakeTarget struct {
	mu             sync.Mutex
	data           map[uint64][]byte
	gets, puts     atomic.Uint64
	inflight, peak atomic.Int64
	failKey        uint64
	delay          time.Duration
}

func (f *fakeTarget) enter() func() {
	n := f.inflight.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	return func() { f.inflight.Add(-1) }
}

func (f *fakeTarget) Get(ctx context.Context, key uint64) (int, error) {
	defer f.enter()()
	f.gets.Add(1)
	if key == f.failKey {
		return 1, errors.New("injected")
	}
	return 2, nil
}

func (f *fakeTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	defer f.enter()()
	f.puts.Add(1)
	f.mu.Lock()
	f.data[key] = slices.Clone(value)
	f.mu.Unlock()
	return 1, nil
}

func TestRunOps(t *testing.T) {
	targets := []Target{}
	fakes := []*fakeTarget{}
	for range 3 {
		f := &fakeTarget{data: map[uint64][]byte{}, failKey: math.MaxUint64, delay: 50 * time.Microsecond}
		fakes = append(fakes, f)
		targets = append(targets, f)
	}
	cfg := Config{Mix: MixA, Keys: Uniform, Records: 500, ValueSize: 32, Clients: 3, Outstanding: 4, Ops: 6000, Seed: 9}
	st, err := Run(context.Background(), cfg, targets)
	if err != nil {
		t.Fatal(err)
	}
	var gets, puts uint64
	for _, f := range fakes {
		gets += f.gets.Load()
		puts += f.puts.Load()
		if p := f.peak.Load(); p != 4 {
			t.Errorf("a client had at most %d operations in flight, want 4", p)
		}
	}
	if st.Ops != 6000 || gets+puts != 6000 || st.Reads != gets || st.Updates != puts || st.Errors != 0 {
		t.Fatalf("stats %d ops (%d reads, %d updates, %d errors); targets saw %d gets, %d puts", st.Ops, st.Reads, st.Updates, st.Errors, gets, puts)
	}
	if frac := float64(st.Reads) / float64(st.Ops); math.Abs(frac-0.5) > 0.03 {
		t.Errorf("read fraction %.3f under mix A", frac)
	}
	wantRT := (2*float64(st.Reads) + float64(st.Updates)) / float64(st.Ops)
	if st.RoundTripsPerOp() != wantRT {
		t.Errorf("round trips per op %v, want %v", st.RoundTripsPerOp(), wantRT)
	}
	if st.Latency.Count() != 6000 || st.Latency.Quantile(0.5) < 50*time.Microsecond {
		t.Errorf("latency: %d values, p50 %v (each op sleeps 50µs)", st.Latency.Count(), st.Latency.Quantile(0.5))
	}
	mr := st.ModeResult(ModeAM)
	res := NewResult("fake", []ModeRun{{ModeAM, st}, {ModeRDMA, st}})
	if len(res.Modes) != 2 || res.Modes[0] != mr || res.Modes[1].Mode != ModeRDMA || res.Workload != "fake" {
		t.Errorf("NewResult = %+v", res)
	}
	dir := t.TempDir()
	if err := WritePlots(filepath.Join(dir, "c.png"), filepath.Join(dir, "t.png"), "fake", []ModeRun{{ModeAM, st}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"c.png", "t.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if mr.OpsPerSec <= 0 || mr.P99us < mr.P50us || mr.P50us < 50 {
		t.Errorf("mode result %+v", mr)
	}
	// 12 goroutines each ≥ 50 µs per op: throughput at most 12/50µs.
	if mr.OpsPerSec > 12/50e-6 {
		t.Errorf("%.0f ops/s is faster than 12 goroutines can sleep", mr.OpsPerSec)
	}
	for _, f := range fakes {
		for k, v := range f.data {
			if k >= 500 || len(v) != 32 {
				t.Fatalf("put of record %d with %d bytes", k, len(v))
			}
		}
	}
}

func TestRunDurationAndErrors(t *testing.T) {
	f := &fakeTarget{data: map[uint64][]byte{}, failKey: 0}
	cfg := Config{Mix: MixC, Keys: Uniform, Records: 4, Clients: 1, Outstanding: 2, Duration: 100 * time.Millisecond}
	start := time.Now()
	st, err := Run(context.Background(), cfg, []Target{f})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Errorf("a 100 ms run took %v", el)
	}
	if st.Errors == 0 || st.FirstError == nil || st.Updates != 0 {
		t.Errorf("errors %d (%v), updates %d", st.Errors, st.FirstError, st.Updates)
	}
	if frac := float64(st.Errors) / float64(st.Errors+st.Ops); math.Abs(frac-0.25) > 0.05 {
		t.Errorf("%.3f of the operations failed; one key in 4 fails", frac)
	}
	if _, err := Run(context.Background(), Config{}, []Target{f}); err == nil {
		t.Error("a run without Ops or Duration started")
	}
	if _, err := Run(context.Background(), Config{Ops: 1, Clients: 2}, []Target{f}); err == nil {
		t.Error("2 clients with 1 target")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{Ops: 10}, []Target{f}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestLoad(t *testing.T) {
	a := &fakeTarget{data: map[uint64][]byte{}}
	b := &fakeTarget{data: map[uint64][]byte{}}
	if err := Load(context.Background(), []Target{a, b}, 1000, 16, 3); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, f := range []*fakeTarget{a, b} {
		for k, v := range f.data {
			if seen[k] || binary.LittleEndian.Uint64(v) != k {
				t.Fatalf("record %d loaded twice or with %x", k, v)
			}
			seen[k] = true
		}
	}
	if len(seen) != 1000 {
		t.Errorf("%d records loaded", len(seen))
	}
}

func TestPlots(t *testing.T) {
	dir := t.TempDir()
	var am, rdma Histogram
	r := rand.New(rand.NewPCG(7, 7))
	for range 10_000 {
		am.Record(time.Duration(15_000 + r.ExpFloat64()*3_000))
		rdma.Record(time.Duration(30_000 + r.ExpFloat64()*6_000))
	}
	cdf := filepath.Join(dir, "cdf.png")
	if err := PlotCDF(cdf, "KV GET latency", []Series{{ModeAM, &am}, {ModeRDMA, &rdma}}); err != nil {
		t.Fatal(err)
	}
	bars := filepath.Join(dir, "tput.png")
	if err := PlotThroughput(bars, "KV throughput", []ModeResult{{Mode: ModeAM, OpsPerSec: 60000, RoundTripsPerOp: 1}, {Mode: ModeRDMA, OpsPerSec: 30000, RoundTripsPerOp: 2}}); err != nil {
		t.Fatal(err)
	}
	fig := filepath.Join(dir, "figure.png")
	runs := []ModeRun{{ModeAM, &Stats{Ops: 100, Elapsed: time.Second, Latency: am}}, {ModeRDMA, &Stats{Ops: 50, Elapsed: time.Second, Latency: rdma}}}
	if err := WriteFigure(fig, "ycsb-b", runs); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cdf, bars, fig} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s is %v", p, b)
		}
	}
	if err := PlotCDF(filepath.Join(dir, "x.png"), "empty", []Series{{ModeAM, &Histogram{}}}); err == nil {
		t.Error("an empty CDF plot was written")
	}
	if os.Getenv("NAAM_KEEP_PLOTS") != "" {
		for _, p := range []string{cdf, bars, fig} {
			b, _ := os.ReadFile(p)
			os.WriteFile(filepath.Join(os.Getenv("NAAM_KEEP_PLOTS"), filepath.Base(p)), b, 0o644)
		}
	}
}

func TestHotKeys(t *testing.T) {
	const n = 10_000
	hot := HotKeys(Zipfian, n, 100, 200_000, 1)
	if len(hot) != 100 {
		t.Fatalf("%d hot keys", len(hot))
	}
	set := map[uint64]bool{}
	for _, k := range hot {
		set[k] = true
	}
	// With another seed, the hot set takes a large share of the draws:
	// about 20% for the top 1% of keys under θ = 0.99 (Σ_{i≤100} i^-0.99
	// / ζ(10^10) = 19.4%, plus the hot records' share of the scattered
	// tail).
	g := Zipfian.New(n, rand.New(rand.NewPCG(77, 77)))
	hits := 0
	const draws = 100_000
	for range draws {
		if set[g.Next()] {
			hits++
		}
	}
	share := float64(hits) / draws
	t.Logf("the 100 hottest of %d records take %.1f%% of the draws", n, 100*share)
	if share < 0.17 || share > 0.25 {
		t.Errorf("hot share %.3f", share)
	}
	if u := HotKeys(Uniform, 50, 100, 10_000, 1); len(u) != 50 {
		t.Errorf("%d hot keys of 50 records", len(u))
	}
}

func TestStatsMerge(t *testing.T) {
	var a, b Stats
	a.Ops, a.Reads, a.RoundTrips, a.Elapsed = 2, 2, 2, time.Second
	a.Latency.Record(10 * time.Microsecond)
	a.Latency.Record(20 * time.Microsecond)
	a.ReadLatency = a.Latency
	errB := errors.New("b")
	b.Ops, b.Updates, b.Errors, b.FirstError, b.RoundTrips, b.Elapsed = 1, 1, 1, errB, 3, 3*time.Second
	b.Latency.Record(1000 * time.Microsecond)
	b.UpdateLatency = b.Latency
	a.Merge(&b)
	have := []any{a.Ops, a.Reads, a.Updates, a.Errors, a.FirstError, a.RoundTrips, a.Elapsed, a.Latency.Count(), a.Latency.Max(), a.ReadLatency.Count(), a.UpdateLatency.Count(), a.OpsPerSec(), a.RoundTripsPerOp()}
	want := []any{uint64(3), uint64(2), uint64(1), uint64(1), errB, uint64(5), 4 * time.Second, uint64(3), 1000 * time.Microsecond, uint64(2), uint64(1), 0.75, 5.0 / 3}
	for i := range want {
		if have[i] != want[i] {
			t.Errorf("field %d: have %v, want %v", i, have[i], want[i])
		}
	}
}
