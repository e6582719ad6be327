package tests

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/internal/testing/verifygen"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

const (
	// defaultCrossN programs take a few seconds; NAAM_CROSS_N changes it.
	defaultCrossN    = 5000
	defaultCrossSeed = 0x4b45524e
	// crossRuns is how many memories each program both verifiers accept
	// runs on in the VM and in the kernel.
	crossRuns = 4
	// kernelBodyOffset is the number of wrapper slots before the body in
	// the kernel's program (see internal/bench/kernel): the kernel's log numbers
	// body slot K as K+9.
	kernelBodyOffset = 9
	maxCrossExamples = 3
)

// crossAllowed is a difference between our verifier and Linux 6.18's
// that is known and justified: ours accepts, the kernel refuses with a
// memory-safety message, and ours is right. An entry matches a refusal
// by the kernel's log; a match is accepted only if the program also runs
// clean (VM and verifygen.Check) on every test memory.
type crossAllowed struct {
	name string
	why  string
	// match gets the refusal: its message, the failing instruction and
	// its snippet, and the log.
	match func(r kernelRefusal) bool
}

var crossAllowList = []crossAllowed{
	{
		name: "kernel-less-precise",
		why: "the generator proved the access inside for every input (it enumerated all values of the input byte the offset " +
			"depends on, or the offset is a mask or modulus of a limit); the kernel's bounds lose the precision on the way: " +
			"no range through div, mod or byte swaps, looser movsx, mul, JSET and JMP32 refinement, range ends not narrowed " +
			"to the known bits",
		match: func(r kernelRefusal) bool { return r.boundsMessage() && r.proven },
	},
	{
		name: "kernel-var-off-sign",
		why: "the kernel bounds a map value pointer's variable offset by its unsigned range, so an offset that may be " +
			"negative is refused even when the constant offset keeps every access inside; ours checks the signed range of the sum",
		match: func(r kernelRefusal) bool {
			return r.boundsMessage() && r.baseState() != "" && negativeVarOff.MatchString(r.baseState())
		},
	},
	{
		name: "kernel-jset-refine",
		why: "on the taken edge of `if x & K` ours knows x >= the lowest bit of K, and on the other edge that K's bits are " +
			"clear; the kernel refines neither, so it cannot bound an offset a JSET check bounded",
		match: func(r kernelRefusal) bool {
			return r.boundsMessage() && jsetJump.MatchString(r.logText) && strings.Contains(r.origin, "jset")
		},
	},
	{
		name: "kernel-ptr-diff",
		why: "the kernel lets root subtract two pointers but knows nothing of the result (scalar()); ours knows the " +
			"difference of two pointers into one object from their offsets, so it can use it as a bounded index",
		match: func(r kernelRefusal) bool {
			return (r.boundsMessage() || strings.Contains(r.msg, "unbounded min value")) && pointerDiff.MatchString(r.logText) &&
				strings.HasPrefix(r.origin, "ptr-arith/") && strings.HasSuffix(r.origin, "diff")
		},
	},
	{
		name: "kernel-ptr-offset-limit",
		why: "the kernel refuses to move a map value pointer 2^29 or more bytes away at the arithmetic itself; ours " +
			"allows any pointer offset and checks every access",
		match: func(r kernelRefusal) bool {
			return strings.Contains(r.msg, "makes map_value pointer be out of bounds") ||
				(strings.Contains(r.msg, "math between map_value pointer and") && !strings.Contains(r.msg, "register"))
		},
	},
	{
		name: "kernel-caller-stack-return",
		why: "a callee may return a pointer into a caller's frame, which outlives it; the kernel refuses every stack " +
			"pointer in r0 at a subprogram's exit (ours refuses only the callee's own frame)",
		match: func(r kernelRefusal) bool {
			return strings.Contains(r.msg, "cannot return stack pointer to the caller")
		},
	},
}

var (
	negativeVarOff = regexp.MustCompile(`map_value\([^)]*\bsmin(32)?=(?:[a-z0-9]+=)*(-|0x[89a-f][0-9a-f]{15}\b)`)
	untrackedOp    = regexp.MustCompile(`\) [rw]\d+ (s?/=|s?%=|= (bswap|be|le)\d+ )[^\n]*;[^\n]*=scalar\(\)`)
	jsetJump       = regexp.MustCompile(`if [rw]\d+ & `)
	pointerDiff    = regexp.MustCompile(`\(1f\) r\d+ -= r\d+ .*R\d+=(fp|map_value)[^\n]*=scalar\(\)|\(1f\) r\d+ -= r\d+ .*=scalar\(\)[^\n]*R\d+=(fp|map_value)`)
	umaxField      = regexp.MustCompile(`\bumax=(?:[a-z0-9]+=)*(\d+|0x[0-9a-f]+)`)
	varOffField    = regexp.MustCompile(`var_off=\((0x[0-9a-f]+); (0x[0-9a-f]+)\)`)
	kernelInsn     = regexp.MustCompile(`^(\d+): \([0-9a-f]{2}\) (.*?)(\s+;.*)?$`)
	baseRegister   = regexp.MustCompile(`\*\(\w+ \*\)\((r\d+) `)
	addRegister    = regexp.MustCompile(`^(r\d+) [+-]= (r\d+)`)
)

// kernelRefusal is the end of a kernel verifier log, taken apart.
type kernelRefusal struct {
	msg     string   // the complaint: the log's last lines after the failing instruction
	insn    int      // the kernel's number of the failing instruction, -1 if unknown
	text    string   // the instruction's text
	logText string   // the whole log
	lines   []string // the whole log, line by line
	// origin is the generator's snippet of the failing instruction, e.g.
	// "chain/Mod,Add": the operations its value went through.
	origin string
	// proven: the generator proved the failing instruction's access
	// inside for every input (verifygen.Program.Proven).
	proven bool
}

func parseRefusal(log []string) kernelRefusal {
	r := kernelRefusal{insn: -1, logText: strings.Join(log, "\n"), lines: log}
	var msg []string
	for i := len(log) - 1; i >= 0; i-- {
		l := strings.TrimSpace(log[i])
		if m := kernelInsn.FindStringSubmatch(l); m != nil {
			r.insn, _ = strconv.Atoi(m[1])
			r.text = m[2]
			break
		}
		if l == "" || strings.HasPrefix(l, "processed ") || strings.HasPrefix(l, "verification time") ||
			strings.HasPrefix(l, "stack depth") || strings.HasPrefix(l, "mark_precise") {
			continue
		}
		msg = append([]string{l}, msg...)
	}
	r.msg = strings.Join(msg, " / ")
	return r
}

// baseState is the kernel's last description of the register the failing
// instruction accesses memory through or adds to a pointer.
func (r kernelRefusal) baseState() string {
	reg := ""
	if m := baseRegister.FindStringSubmatch(r.text); m != nil {
		reg = m[1]
	} else if m := addRegister.FindStringSubmatch(r.text); m != nil {
		reg = m[1]
	}
	if reg == "" {
		return ""
	}
	want := "R" + reg[1:] + "="
	for i := len(r.lines) - 1; i >= 0; i-- {
		l := r.lines[i]
		if j := strings.Index(l, " "+want); j >= 0 {
			rest := l[j+1:]
			if k := strings.Index(rest, " R"); k > 0 {
				rest = rest[:k]
			}
			return rest
		}
	}
	return ""
}

// boundsMessage: the kernel could not prove an access or pointer inside.
func (r kernelRefusal) boundsMessage() bool {
	for _, s := range []string{"unbounded memory access", "min value is negative", "value is outside of the allowed memory range",
		"invalid access to map value", "unbounded min value"} {
		if strings.Contains(r.msg, s) {
			return true
		}
	}
	return false
}

// memorySafety reports whether a refusal is about memory safety (bounds,
// initialisation, pointer leaks and pointer rules) rather than about
// program shape, alignment, size or features.
func (r kernelRefusal) memorySafety() bool {
	for _, s := range []string{"misaligned", "back-edge", "too large", "unreachable insn", "infinite loop", "jump out of range",
		"combined stack size", "call stack of", "invalid shift", "div by zero", "cannot use helper", "unknown opcode",
		"invalid func", "BPF_LD_[ABS|IND]", "loop detected", "is not a valid", "too many states"} {
		if strings.Contains(r.msg, s) {
			return false
		}
	}
	return true
}

// crossReason is a refusal's message with numbers and register names
// replaced, for counting.
var crossNumbers = regexp.MustCompile(`(0x[0-9a-f]+|-?\d+)`)

func (r kernelRefusal) reason() string {
	return crossNumbers.ReplaceAllString(r.msg, "N")
}

// tail is the last n lines of the log.
func (r kernelRefusal) tail(n int) string {
	return strings.Join(r.lines[max(0, len(r.lines)-n):], "\n")
}

func crossConfig(t *testing.T) (int, uint64) {
	n, seed := defaultCrossN, uint64(defaultCrossSeed)
	if s := os.Getenv("NAAM_CROSS_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("NAAM_CROSS_N=%q: want a positive count", s)
		}
		n = v
	}
	if s := os.Getenv("NAAM_CROSS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("NAAM_CROSS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	return n, seed
}

// crossTally counts one class of outcomes, with a few examples.
type crossTally struct {
	counts   map[string]int
	examples map[string][]string
}

func newCrossTally() *crossTally {
	return &crossTally{counts: map[string]int{}, examples: map[string][]string{}}
}

func (c *crossTally) add(key, example string) {
	c.counts[key]++
	if example != "" && len(c.examples[key]) < maxCrossExamples {
		c.examples[key] = append(c.examples[key], example)
	}
}

func (c *crossTally) total() int {
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// TestVerifierKernelCrossCheck runs generated raw-mode programs (loop-free
// or with small constant loops) through our verifier and the running
// kernel's, and classifies every program:
//
//   - ours accepts, the kernel refuses: a memory-safety refusal is a
//     failure unless crossAllowList explains it (and the program runs
//     clean); other refusals (shape, alignment, sizes) are counted;
//   - ours refuses, the kernel accepts: our imprecision or a stricter
//     rule (the kernel lets root leak pointers and read uninitialised
//     stack), counted by our code;
//   - both accept: the program runs in the VM and in the kernel on the
//     same memories and r0 and the memory must agree;
//   - both refuse: counted.
//
// NAAM_CROSS_N and NAAM_CROSS_SEED change the number of programs and the
// first seed.
func TestVerifierKernelCrossCheck(t *testing.T) {
	if err := kernel.Available(); err != nil {
		t.Skip(err)
	}
	n, seed := crossConfig(t)
	var (
		bothAccept, bothReject, ranBoth int
		unsafeDiff                      = newCrossTally() // (a), memory safety, not allowed
		provenWrong                     = newCrossTally() // (a), and a run breaks a rule
		allowed                         = newCrossTally() // (a), memory safety, allow-listed
		otherDiff                       = newCrossTally() // (a), other reasons
		oursStricter                    = newCrossTally() // (b)
		agreeReject                     = newCrossTally()
		mismatches                      []string
	)
	start := time.Now()
	for i := range n {
		s := seed + uint64(i)
		p := verifygen.Generate(s, verifygen.Options{Kernel: true})
		rep, ours := verifier.Verify(p.Insns, verifier.Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget})
		var verr *verifier.Error
		if ours != nil && !errors.As(ours, &verr) {
			t.Fatalf("seed %d: the verifier failed without a rejection: %v", s, ours)
		}
		kp, kerr := kernel.Load(p.Insns, int(p.MemSize))
		var kref kernelRefusal
		if kerr != nil {
			var ve *ebpf.VerifierError
			if !errors.Is(kerr, kernel.ErrRejected) || !errors.As(kerr, &ve) {
				t.Fatalf("seed %d: loading into the kernel failed other than by a refusal: %v", s, kerr)
			}
			kref = parseRefusal(ve.Log)
			if kref.insn >= kernelBodyOffset {
				kref.origin = soundOrigin(p, kref.insn-kernelBodyOffset)
				kref.proven = soundProven(p, kref.insn-kernelBodyOffset)
			}
		}
		switch {
		case ours != nil && kerr != nil:
			bothReject++
			agreeReject.add(string(verr.Code), "")
		case ours != nil:
			kp.Close()
			oursStricter.add(string(verr.Code), fmt.Sprintf("seed %d: %v (at %s)", s, verr, soundOrigin(p, verr.Insn)))
		case kerr != nil:
			example := crossExample(p, rep, kref)
			if !kref.memorySafety() {
				otherDiff.add(kref.reason(), "")
				continue
			}
			// Whatever the kernel says, a run that breaks a rule is ours.
			if err := crossRunClean(p, rep); err != nil {
				provenWrong.add(soundFailureKind(p, err), example+"\na run shows ours wrong: "+err.Error())
				continue
			}
			name := ""
			for _, a := range crossAllowList {
				if a.match(kref) {
					name = a.name
					break
				}
			}
			if name == "" {
				unsafeDiff.add(kref.reason(), example)
			} else {
				allowed.add(name, "")
			}
		default:
			bothAccept++
			if err := crossCompare(p, rep, kp); err != nil {
				mismatches = append(mismatches, fmt.Sprintf("seed %d: %v\n%s", s, err, soundListing(p)))
			} else {
				ranBoth++
			}
			kp.Close()
		}
	}
	t.Logf("%d programs from seed %d (NAAM_CROSS_SEED=%d NAAM_CROSS_N=%d) in %v: both accept %d, both refuse %d, ours only %d, kernel only %d",
		n, seed, seed, n, time.Since(start).Round(time.Millisecond), bothAccept, bothReject,
		unsafeDiff.total()+allowed.total()+otherDiff.total()+provenWrong.total(), oursStricter.total())
	t.Logf("(a) ours accepts, the kernel refuses for a reason other than memory safety: %d\n%s", otherDiff.total(), soundHistogram(otherDiff.counts, 0))
	t.Logf("(a) ours accepts, the kernel refuses for memory safety, explained by the allow-list: %d\n%s", allowed.total(), crossAllowTable(allowed.counts))
	t.Logf("(b) ours refuses, the kernel accepts: %d, by our code\n%s", oursStricter.total(), soundHistogram(oursStricter.counts, 0))
	for _, code := range slices.Sorted(maps.Keys(oursStricter.examples)) {
		if oursStricter.counts[code]*20 >= oursStricter.total() { // the top codes
			t.Logf("(b) %s, e.g.:\n\t%s", code, strings.Join(oursStricter.examples[code], "\n\t"))
		}
	}
	t.Logf("(c) both accept: %d, %d of them ran alike in the VM and the kernel on %d memories each", bothAccept, ranBoth, crossRuns)
	t.Logf("(d) both refuse: %d, by our code\n%s", bothReject, soundHistogram(agreeReject.counts, 0))
	if provenWrong.total() > 0 {
		t.Errorf("(a) ours accepts, the kernel refuses, and a run in the VM or verifygen.Check shows ours wrong: %d, by what the run broke\n%s",
			provenWrong.total(), soundHistogram(provenWrong.counts, 0))
		for _, kind := range slices.Sorted(maps.Keys(provenWrong.examples)) {
			t.Errorf("%s, e.g.:\n%s", kind, provenWrong.examples[kind][0])
		}
	}
	if unsafeDiff.total() > 0 {
		t.Errorf("(a) ours accepts, the kernel refuses for memory safety, not explained: %d\n%s", unsafeDiff.total(), soundHistogram(unsafeDiff.counts, 0))
		for _, reason := range slices.Sorted(maps.Keys(unsafeDiff.examples)) {
			for _, ex := range unsafeDiff.examples[reason] {
				t.Errorf("kernel: %s\n%s", reason, ex)
			}
		}
	}
	for i, m := range mismatches {
		if i == maxCrossExamples {
			t.Errorf("... %d more programs where the VM and the kernel disagree", len(mismatches)-i)
			break
		}
		t.Errorf("the VM and the kernel disagree on a program both verifiers accept: %s", m)
	}
}

func crossAllowTable(counts map[string]int) string {
	var b strings.Builder
	for _, a := range crossAllowList {
		fmt.Fprintf(&b, "\t%6d  %s: %s\n", counts[a.name], a.name, a.why)
	}
	return b.String()
}

// crossExample describes an (a) disagreement: seed, the kernel log's end,
// the snippet of the failing instruction, the program.
func crossExample(p verifygen.Program, rep *verifier.Report, r kernelRefusal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (NAAM_CROSS_SEED=%d NAAM_CROSS_N=1), memory %d bytes; ours: %s\n", p.Seed, p.Seed, p.MemSize, rep)
	if r.insn >= kernelBodyOffset {
		fmt.Fprintf(&b, "the kernel fails at body insn %d (%s)\n", r.insn-kernelBodyOffset, soundOrigin(p, r.insn-kernelBodyOffset))
	}
	fmt.Fprintf(&b, "kernel log, last lines:\n%s\n", r.tail(8))
	b.WriteString(soundListing(p))
	return b.String()
}

// crossMemories are the memories a program runs on: zero, 0xff, and
// random ones shaped by the generator's hints.
func crossMemories(p verifygen.Program, runs int) [][]byte {
	rng := rand.New(rand.NewPCG(p.Seed, 0x78))
	out := make([][]byte, runs)
	for i := range out {
		out[i] = soundMemory(rng, p, min(i, 1+soundRandomRuns+i%2*soundHintRuns))
	}
	return out
}

// crossRunClean runs an accepted program in the VM and the reference
// interpreter on many memories and reports the first fault or violation
// (a *vm.Fault or a *verifygen.Violation).
func crossRunClean(p verifygen.Program, rep *verifier.Report) error {
	prog, err := vm.Load(p.Insns)
	if err != nil {
		return err
	}
	m := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
	for _, mem := range crossMemories(p, 32) {
		init := slices.Clone(mem)
		if _, err := m.RunRaw(prog, mem); err != nil {
			return fmt.Errorf("VM on memory %x: %w", init, err)
		}
		if _, _, err := verifygen.Check(p.Insns, init, rep.MaxInsns); err != nil {
			return fmt.Errorf("verifygen.Check on memory %x: %w", init, err)
		}
	}
	return nil
}

// crossCompare runs a program both verifiers accepted in the VM (checked,
// budget MaxInsns) and in the kernel on the same memories.
func crossCompare(p verifygen.Program, rep *verifier.Report, kp *kernel.Program) error {
	prog, err := vm.Load(p.Insns)
	if err != nil {
		return err
	}
	m := vm.NewMachine(vm.Options{Budget: rep.MaxInsns})
	for _, mem := range crossMemories(p, crossRuns) {
		init := slices.Clone(mem)
		kmem := slices.Clone(mem)
		r0, err := m.RunRaw(prog, mem)
		if err != nil {
			return fmt.Errorf("VM fault on memory %x: %w", init, err)
		}
		kr0, err := kp.Run(kmem)
		if err != nil {
			return fmt.Errorf("kernel run: %w", err)
		}
		if r0 != kr0 || !bytes.Equal(mem, kmem) {
			return fmt.Errorf("on memory %x: r0 VM %#x kernel %#x; memory VM %x kernel %x", init, r0, kr0, mem, kmem)
		}
	}
	return nil
}
