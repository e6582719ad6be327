package tests

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/verifygen"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

const (
	// defaultSoundN runs in about 20 s on two cores; NAAM_SOUND_N=1000000
	// is the full run (a million programs).
	defaultSoundN = 40_000
	// defaultSoundSeed makes a plain `go test` run the same programs every
	// time; NAAM_SOUND_SEED=clock explores new ones.
	defaultSoundSeed = 0x50554e44
	// soundRandomRuns is how many random memories each accepted program
	// runs on, besides all-zero, all-0xff and soundHintRuns memories shaped
	// by the generator's hints.
	soundRandomRuns = 3
	soundHintRuns   = 3
	// soundMinShare is the least share of accepted and of rejected
	// programs: below it the test could pass without testing anything.
	soundMinShare = 0.20
	// soundPowerSample: one rejected program in this many is run anyway,
	// to measure how often a run would expose a wrong acceptance.
	soundPowerSample = 4
	// soundPowerBudget caps those runs: rejected programs may not stop.
	soundPowerBudget = 200_000
)

// soundConfig reads NAAM_SOUND_N and NAAM_SOUND_SEED.
func soundConfig(tb testing.TB) (n int, seed uint64) {
	n, seed = defaultSoundN, defaultSoundSeed
	if s := os.Getenv("NAAM_SOUND_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			tb.Fatalf("NAAM_SOUND_N=%q: want a positive count", s)
		}
		n = v
	}
	switch s := os.Getenv("NAAM_SOUND_SEED"); {
	case s == "clock":
		seed = uint64(time.Now().UnixNano())
	case s != "":
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			tb.Fatalf("NAAM_SOUND_SEED=%q: %v", s, err)
		}
		seed = v
	}
	return n, seed
}

// soundStats is what a run of the soundness fuzzer saw.
type soundStats struct {
	programs, accepted int
	// shared counts the accepted programs with calls verified a second
	// time with every call sharing its function's context
	// (Limits.CallStrings < 0), sharedAccepted those accepted again.
	shared, sharedAccepted int
	rejected               map[verifier.Code]int
	// defectAccepted counts accepted programs the generator built with a
	// boundary step: the cases where an unsound verifier would show.
	defectAccepted int
	// cleanRejected counts, by code, programs the generator meant to be
	// safe that the verifier refused: its imprecision.
	cleanRejected map[string]int
	runs          int
	// tightness is MaxInsns over the most instructions any run executed,
	// for accepted programs with loops.
	tightness []float64
	// failures holds, per kind of failure (rule broken and snippet), the
	// count and the shortest failing program seen.
	failures map[string]*soundFailure
	failed   int
	// power: of the sampled rejected programs, how many break a rule when
	// run (the test would catch them, had the verifier accepted them).
	powerSampled, powerCaught int
}

type soundFailure struct {
	count   int
	insns   int
	example string
}

func newSoundStats() *soundStats {
	return &soundStats{rejected: map[verifier.Code]int{}, cleanRejected: map[string]int{}, failures: map[string]*soundFailure{}}
}

func (s *soundStats) merge(o *soundStats) {
	s.programs += o.programs
	s.accepted += o.accepted
	s.shared += o.shared
	s.sharedAccepted += o.sharedAccepted
	s.defectAccepted += o.defectAccepted
	s.runs += o.runs
	s.failed += o.failed
	s.powerSampled += o.powerSampled
	s.powerCaught += o.powerCaught
	for k, v := range o.rejected {
		s.rejected[k] += v
	}
	for k, v := range o.cleanRejected {
		s.cleanRejected[k] += v
	}
	s.tightness = append(s.tightness, o.tightness...)
	for k, f := range o.failures {
		s.addFailure(k, f)
	}
}

func (s *soundStats) addFailure(kind string, f *soundFailure) {
	old, ok := s.failures[kind]
	if !ok {
		s.failures[kind] = f
		return
	}
	old.count += f.count
	if f.insns < old.insns {
		old.insns, old.example = f.insns, f.example
	}
}

// soundChecker runs the programs of one worker.
type soundChecker struct {
	stats *soundStats
	mem   []byte
}

// checkSeed generates program seed, verifies it, and runs it if accepted.
func (c *soundChecker) checkSeed(seed uint64) {
	p := verifygen.Generate(seed, verifygen.Options{})
	c.stats.programs++
	rep, err := soundVerify(p)
	if err != nil {
		var verr *verifier.Error
		if !errors.As(err, &verr) {
			c.fail(p, nil, nil, nil, fmt.Errorf("the verifier failed without a rejection: %w", err))
			return
		}
		c.stats.rejected[verr.Code]++
		if len(p.Defects) == 0 {
			c.stats.cleanRejected[string(verr.Code)+" at "+soundOrigin(p, verr.Insn)]++
		}
		if seed%soundPowerSample == 0 {
			c.stats.powerSampled++
			if soundBreaks(p, seed) {
				c.stats.powerCaught++
			}
		}
		return
	}
	c.stats.accepted++
	if len(p.Defects) > 0 {
		c.stats.defectAccepted++
	}
	c.run(p, rep, seed)
	if p.Calls > 0 {
		// The same program with every call sharing its function's
		// context: less precise, and as sound.
		c.stats.shared++
		rep, err := soundVerifyWith(p, verifier.Limits{CallStrings: -1})
		if err != nil {
			var verr *verifier.Error
			if !errors.As(err, &verr) {
				c.fail(p, nil, nil, nil, fmt.Errorf("the verifier failed without a rejection (shared contexts): %w", err))
			}
			return
		}
		c.stats.sharedAccepted++
		c.run(p, rep, seed)
	}
}

// run runs program p, which the verifier accepted with rep, in the checked
// VM and the reference interpreter.
func (c *soundChecker) run(p verifygen.Program, rep *verifier.Report, seed uint64) {
	prog, err := vm.Load(p.Insns)
	if err != nil {
		c.fail(p, rep, nil, nil, fmt.Errorf("the VM refuses an accepted program: %w", err))
		return
	}
	// Budget = MaxInsns: going past the proven bound is an ErrBudget fault.
	m := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
	rng := rand.New(rand.NewPCG(seed, 0x6d656d))
	most := uint64(0)
	for i := range 2 + soundRandomRuns + soundHintRuns {
		mem := soundMemory(rng, p, i)
		init := slices.Clone(mem)
		r0, err := m.RunRaw(prog, mem)
		c.stats.runs++
		n := m.Executed()
		most = max(most, n)
		if err == nil && n > rep.MaxInsns {
			err = fmt.Errorf("executed %d instructions, more than the proven bound %d", n, rep.MaxInsns)
		}
		if err != nil {
			c.fail(p, rep, init, m, fmt.Errorf("VM: %w", err))
			return
		}
		// The stricter oracle: frame bounds, initialised stack, no leaks.
		// Where both finish, they must agree (a differential test of both).
		oracleMem := slices.Clone(init)
		or0, on, err := verifygen.Check(p.Insns, oracleMem, rep.MaxInsns)
		switch {
		case err != nil:
			c.fail(p, rep, init, m, fmt.Errorf("the run breaks a raw-mode rule the verifier proved: %w", err))
			return
		case or0 != r0 || on != n || !slices.Equal(oracleMem, mem):
			c.fail(p, rep, init, m, fmt.Errorf("the VM and the reference interpreter (verifygen.Check) disagree: r0 %#x / %#x, executed %d / %d, memory equal %v",
				r0, or0, n, on, slices.Equal(oracleMem, mem)))
			return
		}
	}
	if p.Loops > 0 && most > 0 {
		c.stats.tightness = append(c.stats.tightness, float64(rep.MaxInsns)/float64(most))
	}
}

// soundBreaks reports whether a run of p, on the memories an accepted
// program would get, breaks a rule (verifygen.Check).
func soundBreaks(p verifygen.Program, seed uint64) bool {
	rng := rand.New(rand.NewPCG(seed, 0x6d656d))
	for i := range 2 + soundRandomRuns + soundHintRuns {
		mem := soundMemory(rng, p, i)
		if _, _, err := verifygen.Check(p.Insns, mem, min(p.Budget, soundPowerBudget)); err != nil {
			return true
		}
	}
	return false
}

func soundVerify(p verifygen.Program) (rep *verifier.Report, err error) {
	return soundVerifyWith(p, verifier.Limits{})
}

func soundVerifyWith(p verifygen.Program, lim verifier.Limits) (rep *verifier.Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("verifier panic: %v", r)
		}
	}()
	return verifier.Verify(p.Insns, verifier.Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: lim})
}

// soundMemory is run i's memory: all zero, all 0xff, random, or random
// with the generator's hints applied.
func soundMemory(rng *rand.Rand, p verifygen.Program, i int) []byte {
	mem := make([]byte, p.MemSize)
	switch {
	case i == 0:
	case i == 1:
		for j := range mem {
			mem[j] = 0xff
		}
	default:
		for j := range mem {
			mem[j] = byte(rng.Uint32())
		}
		if i >= 2+soundRandomRuns {
			h := i - 2 - soundRandomRuns
			for k, hint := range p.Hints {
				v := hint.Values[(h+k)%len(hint.Values)]
				if h == soundHintRuns-1 {
					v = hint.Values[rng.IntN(len(hint.Values))]
				}
				copy(mem[hint.Off:], v)
			}
		}
	}
	return mem
}

// soundOrigin names the snippet that emitted the instruction at slot.
func soundOrigin(p verifygen.Program, slot int) string {
	offsets, _ := bytecode.Slots(p.Insns)
	i := sort.SearchInts(offsets, slot)
	if i < len(p.Origin) {
		return p.Origin[i]
	}
	return "?"
}

// soundProven reports whether the generator proved the instruction at
// slot safe (verifygen.Program.Proven).
func soundProven(p verifygen.Program, slot int) bool {
	offsets, _ := bytecode.Slots(p.Insns)
	i := sort.SearchInts(offsets, slot)
	return i < len(p.Proven) && offsets[i] == slot && p.Proven[i]
}

func (c *soundChecker) fail(p verifygen.Program, rep *verifier.Report, mem []byte, m *vm.Machine, err error) {
	c.stats.failed++
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (rerun: NAAM_SOUND_SEED=%d NAAM_SOUND_N=1 go test ./tests -run TestVerifierSoundness -v): %v\n", p.Seed, p.Seed, err)
	if rep != nil {
		fmt.Fprintf(&b, "verifier: accepted, %s\n", rep)
	}
	if m != nil {
		fmt.Fprintf(&b, "executed: %d instructions\n", m.Executed())
	}
	fmt.Fprintf(&b, "memory: %d bytes, budget %d\n", p.MemSize, p.Budget)
	if mem != nil {
		fmt.Fprintf(&b, "initial memory: %x\n", mem)
	}
	if len(p.Defects) > 0 {
		fmt.Fprintf(&b, "generator's boundary steps: %s\n", strings.Join(p.Defects, "; "))
	}
	b.WriteString(soundListing(p))
	c.stats.addFailure(soundFailureKind(p, err), &soundFailure{count: 1, insns: len(p.Insns), example: b.String()})
}

// soundFailureKind names a failure by what broke and where: the rule (or
// the VM fault) and the snippet of the instruction.
func soundFailureKind(p verifygen.Program, err error) string {
	var v *verifygen.Violation
	var f *vm.Fault
	switch {
	case errors.As(err, &v):
		return v.Rule + " at " + soundOrigin(p, v.PC)
	case errors.As(err, &f):
		return "vm " + f.Kind.String() + " at " + soundOrigin(p, f.PC)
	}
	msg := err.Error()
	if i := strings.IndexAny(msg, ":0123456789"); i > 0 {
		msg = msg[:i]
	}
	return msg
}

// soundListing is the disassembly with slot numbers and each instruction's
// snippet.
func soundListing(p verifygen.Program) string {
	var b strings.Builder
	offsets, _ := bytecode.Slots(p.Insns)
	for i := range p.Insns {
		text, err := bytecode.Disassemble(p.Insns[i : i+1])
		if err != nil {
			text = fmt.Sprintf("(%v) %v\n", err, p.Insns[i])
		}
		fmt.Fprintf(&b, "%4d  %-34s ; %s\n", offsets[i], strings.TrimSuffix(text, "\n"), p.Origin[i])
	}
	return b.String()
}

// runSoundness checks programs seed .. seed+n-1 on every core.
func runSoundness(n int, seed uint64) *soundStats {
	var next atomic.Int64
	workers := runtime.GOMAXPROCS(0)
	parts := make([]*soundStats, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = newSoundStats()
		wg.Go(func() {
			c := &soundChecker{stats: parts[w]}
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				c.checkSeed(seed + uint64(i))
			}
		})
	}
	wg.Wait()
	total := newSoundStats()
	for _, p := range parts {
		total.merge(p)
	}
	return total
}

// TestVerifierSoundness generates programs near the verifier's decision
// boundary (internal/testing/verifygen) and runs every one the verifier accepts in
// the checked VM, with the budget set to the proven bound, on all-zero,
// all-0xff, random and hint-shaped memory: no run may fault or execute
// more than Report.MaxInsns instructions. NAAM_SOUND_N sets the number of
// programs (1000000 for the full run), NAAM_SOUND_SEED the first seed.
func TestVerifierSoundness(t *testing.T) {
	n, seed := soundConfig(t)
	if testing.Short() && os.Getenv("NAAM_SOUND_N") == "" {
		n /= 10
	}
	start := time.Now()
	s := runSoundness(n, seed)
	elapsed := time.Since(start)
	t.Logf("%d programs from seed %d in %v (%.0f programs/s on %d cores), %d VM runs",
		s.programs, seed, elapsed.Round(time.Millisecond), float64(s.programs)/elapsed.Seconds(), runtime.GOMAXPROCS(0), s.runs)
	rejected := s.programs - s.accepted
	t.Logf("accepted %d (%.1f%%; %d of them with a boundary step the verifier found safe), rejected %d (%.1f%%)",
		s.accepted, soundPct(s.accepted, s.programs), s.defectAccepted, rejected, soundPct(rejected, s.programs))
	t.Logf("with shared call contexts, %d of %d accepted programs with calls are accepted again and run", s.sharedAccepted, s.shared)
	t.Logf("rejections by code:\n%s", soundHistogram(codeCounts(s.rejected), 0))
	if len(s.cleanRejected) > 0 {
		t.Logf("rejections of programs the generator meant to be safe (imprecision, or generator slips), top 10:\n%s",
			soundHistogram(s.cleanRejected, 10))
	}
	t.Log(soundTightness(s.tightness))
	t.Logf("power: %d of %d sampled rejected programs (%.1f%%) break a rule when run, so would fail this test had the verifier accepted them",
		s.powerCaught, s.powerSampled, soundPct(s.powerCaught, s.powerSampled))
	soundReportFailures(t, s)
	if n >= 1000 {
		if soundPct(s.accepted, s.programs) < 100*soundMinShare || soundPct(rejected, s.programs) < 100*soundMinShare {
			t.Errorf("the mix is %d accepted / %d rejected: each must be at least %.0f%% or the test proves little",
				s.accepted, rejected, 100*soundMinShare)
		}
	}
}

// BenchmarkVerifierSoundness is the soundness fuzzer as a benchmark: one
// op is one program generated, verified and, if accepted, run 8 times.
// The full run, a million programs:
//
//	go test ./tests -run '^$' -bench VerifierSoundness -benchtime 1000000x -timeout 2h
func BenchmarkVerifierSoundness(b *testing.B) {
	_, seed := soundConfig(b)
	c := &soundChecker{stats: newSoundStats()}
	i := uint64(0)
	start := time.Now()
	for b.Loop() {
		c.checkSeed(seed + i)
		i++
	}
	rate := float64(i) / time.Since(start).Seconds()
	b.ReportMetric(rate, "programs/s")
	b.ReportMetric(soundPct(c.stats.accepted, c.stats.programs), "%accepted")
	b.Logf("%d programs from seed %d on one core: %.0f programs/s, %.1f%% accepted", i, seed, rate, soundPct(c.stats.accepted, c.stats.programs))
	soundReportFailures(b, c.stats)
}

// soundReportFailures fails tb with one example, the shortest, of each
// kind of failure.
func soundReportFailures(tb testing.TB, s *soundStats) {
	if s.failed == 0 {
		return
	}
	counts := map[string]int{}
	for k, f := range s.failures {
		counts[k] = f.count
	}
	tb.Errorf("%d accepted programs faulted, broke a rule or passed their bound; by kind:\n%s", s.failed, soundHistogram(counts, 0))
	kinds := slices.Sorted(maps.Keys(s.failures))
	for _, k := range kinds {
		tb.Errorf("%s (%d programs), the shortest:\n%s", k, s.failures[k].count, s.failures[k].example)
	}
}

func soundPct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func codeCounts(m map[verifier.Code]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// soundHistogram prints counts, largest first, at most top lines (0: all).
func soundHistogram(m map[string]int, top int) string {
	keys := make([]string, 0, len(m))
	total := 0
	for k, v := range m {
		keys = append(keys, k)
		total += v
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if top > 0 && len(keys) > top {
		keys = keys[:top]
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%8d  %5.1f%%  %s\n", m[k], soundPct(m[k], total), k)
	}
	return b.String()
}

// soundTightness summarises MaxInsns / observed maximum over loop programs.
func soundTightness(ratios []float64) string {
	if len(ratios) == 0 {
		return "tightness: no accepted loop programs"
	}
	sort.Float64s(ratios)
	q := func(p float64) float64 { return ratios[min(len(ratios)-1, int(p*float64(len(ratios))))] }
	within2 := sort.SearchFloat64s(ratios, 2.0000001)
	return fmt.Sprintf("tightness (MaxInsns / most executed) over %d accepted loop programs: median %.2f, p90 %.2f, p99 %.2f, max %.1f; %.1f%% within 2x",
		len(ratios), q(0.5), q(0.9), q(0.99), ratios[len(ratios)-1], soundPct(within2, len(ratios)))
}
