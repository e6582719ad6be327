package tests

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// The execution corpus: every program in testdata/corpus is compiled,
// verified (it must be accepted), loaded and run in the VM, checked and
// unchecked, on hand-picked edge cases and on random requests from a fixed
// seed. Each request's reply or fail code, and the rw regions after it,
// are compared with the same logic written in Go (the references below),
// and each run's instruction count with the verifier's bound.
//
// Region state carries over from one request to the next within a program
// (a PUT is seen by the GETs after it); when the VM and the reference
// disagree, the VM's regions are reset to the reference's, so that one bug
// is reported once.

// corpusDir holds the programs, one handler program per .naam file.
const corpusDir = "testdata/corpus"

// corpusRandomCalls is how many random requests each program gets after
// its edge cases, unless it says otherwise.
const corpusRandomCalls = 300

// corpusSeed seeds region setup and random requests; each program mixes in
// a hash of its file name.
const corpusSeed = 0x6e61616d

// maxCorpusErrors stops reporting a program's mismatches after this many.
const maxCorpusErrors = 12

// corpusProgram is one file of the corpus with its Go reference.
type corpusProgram struct {
	file string
	// regions are the expected region sizes in declaration order; the
	// object's region table must agree.
	regions []uint64
	// setup fills the regions (zeroed, sized as above) before the first
	// request. Region setup uses its own generator from the fixed seed, so
	// both machines see the same contents. nil leaves them zero.
	setup    func(r *rand.Rand, rg [][]byte)
	handlers []corpusHandler
	// calls, if set, returns extra edge cases that depend on the setup
	// (it runs after setup).
	calls func() []corpusCall
	// random is how many random requests to make (0: corpusRandomCalls).
	random int
	// pick chooses the handler of a random request (nil: uniformly).
	pick func(r *rand.Rand) int
}

// corpusHandler is one handler's layout, edge cases and Go reference.
type corpusHandler struct {
	name string
	// argsEnd is where the last argument ends, req the request layout's
	// size (argsEnd rounded up to the largest alignment), reply the reply
	// layout's size. A request shorter than argsEnd must fail with
	// FailShortRequest. (Lengths in [argsEnd, req) are not tested: the
	// spec does not say which of the two is the minimum.)
	argsEnd, req, reply int
	// edges are hand-picked requests, run in order before the random ones.
	edges [][]byte
	// gen makes a random request, given the reference's current regions
	// (nil: random bytes, biased towards 0x00, 0xff, 0x7f and 0x80).
	gen func(r *rand.Rand, rg [][]byte) []byte
	// ref computes the reply (exactly reply bytes) or a fail code (then
	// reply is nil) from the request and the regions, changing the rw
	// regions as the handler must, in place.
	ref func(req []byte, rg [][]byte) (reply []byte, code uint32)
}

// corpusCall is one request to a handler, by name.
type corpusCall struct {
	handler string
	req     []byte
}

func TestCorpus(t *testing.T) {
	programs := corpusPrograms()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.naam"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range programs {
		if listed[p.file] {
			t.Errorf("%s is listed twice", p.file)
		}
		listed[p.file] = true
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s has no entry in corpusPrograms", f)
		}
	}
	if len(programs) < 40 {
		t.Errorf("%d programs, the corpus needs at least 40", len(programs))
	}
	for _, p := range programs {
		t.Run(strings.TrimSuffix(p.file, ".naam"), func(t *testing.T) {
			t.Parallel()
			runCorpusProgram(t, p)
		})
	}
}

// corpusBuild is a compiled, verified and loaded program.
type corpusBuild struct {
	obj      *bytecode.Object
	prog     *vm.Program
	maxInsns map[string]uint64 // the verifier's bound per handler
}

func buildCorpusProgram(t *testing.T, p corpusProgram) *corpusBuild {
	t.Helper()
	path := filepath.Join(corpusDir, p.file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := lang.NewFileSet()
	obj, err := compiler.Compile(fset, path, src)
	if err != nil {
		var buf bytes.Buffer
		lang.Print(&buf, fset, err)
		t.Fatalf("compile: %v\n%s", err, buf.String())
	}
	insns, err := obj.Insns()
	if err != nil {
		t.Fatalf("object: %v", err)
	}
	rep, err := verifier.Verify(insns, verifier.ObjectConfig(obj, verifier.Config{}))
	if err != nil {
		t.Fatalf("verifier rejects the compiled program: %+v", err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		t.Fatalf("vm.Load: %v", err)
	}
	b := &corpusBuild{obj: obj, prog: prog, maxInsns: map[string]uint64{}}
	for _, e := range rep.Entries {
		b.maxInsns[e.Name] = e.MaxInsns
	}
	return b
}

func runCorpusProgram(t *testing.T, p corpusProgram) {
	b := buildCorpusProgram(t, p)
	checkCorpusLayout(t, p, b.obj)
	if t.Failed() {
		return
	}
	for _, unchecked := range []bool{false, true} {
		name := "checked"
		if unchecked {
			name = "unchecked"
		}
		t.Run(name, func(t *testing.T) {
			m := vm.NewMachine(vm.Options{Unchecked: unchecked, Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
			r := &corpusRun{t: t, p: p, eng: vmEngine(b, m)}
			r.run()
		})
		t.Run("jit-"+name, func(t *testing.T) {
			if err := jit.Available(); err != nil {
				t.Skip(err)
			}
			r := &corpusRun{t: t, p: p, eng: jitEngine(t, b, unchecked)}
			r.run()
		})
	}
}

// jitEngine runs b through the JIT tier, compiled with every handler's
// entry, checked or (the verifier accepted b) unchecked.
func jitEngine(t *testing.T, b *corpusBuild, unchecked bool) corpusEngine {
	insns, err := b.obj.Insns()
	if err != nil {
		t.Fatal(err)
	}
	var entries []int
	for _, h := range b.obj.Handlers {
		entries = append(entries, h.Entry)
	}
	code, err := jit.Compile(insns, jit.Options{Unchecked: unchecked, Entries: entries})
	if err != nil {
		t.Fatalf("jit: %v", err)
	}
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
	t.Cleanup(m.Close)
	e := vmEngine(b, m)
	mems := make([]vm.RegionMem, len(e.regions))
	for i, r := range b.obj.Regions {
		mems[i] = vm.RegionMem{Data: e.regions[i], Writable: r.Writable}
	}
	e.invoke = func(hi int, req []byte, replySize int) (vm.Result, error) {
		oh := b.obj.Handlers[hi]
		return m.Invoke(code, &vm.Invocation{
			Entry:   oh.Entry,
			Handler: oh.ID,
			Request: req,
			Reply:   alignedBytes(replySize),
			Regions: mems,
		})
	}
	return e
}

// checkCorpusLayout compares the object's region table and handler
// layouts with the reference's.
func checkCorpusLayout(t *testing.T, p corpusProgram, obj *bytecode.Object) {
	var sizes []uint64
	for _, r := range obj.Regions {
		sizes = append(sizes, r.Size)
	}
	if !slices.Equal(sizes, p.regions) {
		t.Errorf("region sizes %v, want %v", sizes, p.regions)
	}
	if len(obj.Handlers) != len(p.handlers) {
		t.Errorf("%d handlers in the object, %d in the reference", len(obj.Handlers), len(p.handlers))
	}
	for i, h := range p.handlers {
		if i >= len(obj.Handlers) {
			break
		}
		oh := obj.Handlers[i]
		if oh.Name != h.name || oh.ID != uint32(i) {
			t.Errorf("handler %d is %s (id %d), want %s", i, oh.Name, oh.ID, h.name)
			continue
		}
		if end := fieldsEnd(oh.Args); end != h.argsEnd {
			t.Errorf("%s: arguments end at %d, want %d", h.name, end, h.argsEnd)
		}
		if end := fieldsEnd(oh.Results); end > h.reply || h.reply-end >= 8 {
			t.Errorf("%s: results end at %d, the reply layout is %d bytes", h.name, end, h.reply)
		}
	}
}

func fieldsEnd(fs []bytecode.Field) int {
	end := 0
	for _, f := range fs {
		end = max(end, int(f.Offset+f.Size))
	}
	return end
}

// corpusEngine runs one program's handlers on region memory of its own.
type corpusEngine struct {
	regionNames []string
	regions     [][]byte          // sized as corpusProgram.regions
	maxInsns    map[string]uint64 // per handler; nil: no bound to check
	invoke      func(hi int, req []byte, replySize int) (vm.Result, error)
}

// vmEngine runs b on m.
func vmEngine(b *corpusBuild, m *vm.Machine) corpusEngine {
	e := corpusEngine{maxInsns: b.maxInsns}
	var mems []vm.RegionMem
	for _, r := range b.obj.Regions {
		mem := vm.RegionMem{Data: alignedBytes(int(r.Size)), Writable: r.Writable}
		mems = append(mems, mem)
		e.regions = append(e.regions, mem.Data)
		e.regionNames = append(e.regionNames, r.Name)
	}
	e.invoke = func(hi int, req []byte, replySize int) (vm.Result, error) {
		oh := b.obj.Handlers[hi]
		return m.Invoke(b.prog, &vm.Invocation{
			Entry:   oh.Entry,
			Handler: oh.ID,
			Request: req,
			Reply:   alignedBytes(replySize),
			Regions: mems,
		})
	}
	return e
}

// corpusRun runs one program's requests on one engine.
type corpusRun struct {
	t      *testing.T
	p      corpusProgram
	eng    corpusEngine
	refRgs [][]byte // the reference's regions
	errors int
	// replies counts the requests each handler answered in the reference:
	// inputs that only ever fail would leave the handler's body untested.
	replies []int
}

func (r *corpusRun) run() {
	p := r.p
	seed := corpusSeed ^ fnvString(p.file)
	for _, size := range p.regions {
		r.refRgs = append(r.refRgs, make([]byte, size))
	}
	if p.setup != nil {
		p.setup(rand.New(rand.NewPCG(seed, 1)), r.refRgs)
	}
	for i := range r.refRgs {
		copy(r.eng.regions[i], r.refRgs[i])
	}
	r.replies = make([]int, len(p.handlers))
	for hi, h := range p.handlers {
		for _, req := range h.edges {
			r.call(hi, req)
		}
	}
	if p.calls != nil {
		for _, c := range p.calls() {
			r.call(r.handlerIndex(c.handler), c.req)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	n := p.random
	if n == 0 {
		n = corpusRandomCalls
	}
	for range n {
		hi := rng.IntN(len(p.handlers))
		if p.pick != nil {
			hi = p.pick(rng)
		}
		h := p.handlers[hi]
		var req []byte
		if h.gen != nil {
			req = h.gen(rng, r.refRgs)
		} else {
			req = edgyBytes(rng, h.req)
		}
		if rng.IntN(4) == 0 {
			req = append(req, edgyBytes(rng, 1+rng.IntN(16))...) // ignored
		}
		r.call(hi, req)
	}
	for hi, h := range p.handlers {
		r.short(hi, h)
		if r.replies[hi] == 0 {
			r.t.Errorf("%s: no request got a reply from the reference; the inputs test only failures", h.name)
		}
	}
}

func (r *corpusRun) handlerIndex(name string) int {
	for i, h := range r.p.handlers {
		if h.name == name {
			return i
		}
	}
	r.t.Fatalf("no handler %q in the reference", name)
	return -1
}

// call runs one request in the VM and in the reference and compares.
func (r *corpusRun) call(hi int, req []byte) {
	h := r.p.handlers[hi]
	wantReply, wantCode := h.ref(req, r.refRgs)
	if wantCode == 0 && len(wantReply) != h.reply {
		panic(fmt.Sprintf("%s/%s: reference reply of %d bytes, the layout has %d", r.p.file, h.name, len(wantReply), h.reply))
	}
	if wantCode == 0 {
		r.replies[hi]++
	}
	res, err := r.invoke(hi, req, h.reply)
	var problems []string
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("fault: %v", err))
	case wantCode != 0:
		if res.Outcome != bytecode.OutcomeError || uint32(res.Code) != wantCode {
			problems = append(problems, fmt.Sprintf("got %s, want fail(%#x)", describeResult(res), wantCode))
		}
	default:
		if res.Outcome != bytecode.OutcomeReply || !bytes.Equal(res.Reply, wantReply) {
			problems = append(problems, fmt.Sprintf("got %s, want reply % x", describeResult(res), wantReply))
		}
	}
	for i, rg := range r.eng.regions {
		if !bytes.Equal(rg, r.refRgs[i]) {
			problems = append(problems, fmt.Sprintf("region %s: %s", r.eng.regionNames[i], firstDiff(rg, r.refRgs[i])))
			copy(rg, r.refRgs[i])
		}
	}
	if max, ok := r.eng.maxInsns[h.name]; ok && err == nil && res.Insns > max {
		problems = append(problems, fmt.Sprintf("ran %d instructions, the verifier's bound is %d", res.Insns, max))
	}
	if len(problems) > 0 {
		r.report("%s(% x): %s", h.name, req, strings.Join(problems, "; "))
	}
}

// short checks the generic failures: a request shorter than the arguments
// (before the body runs, so no region changes) and a reply buffer shorter
// than the results (regions not compared: the spec does not say when the
// check happens).
func (r *corpusRun) short(hi int, h corpusHandler) {
	snapshot := r.snapshot()
	defer r.restore(snapshot)
	for _, n := range []int{0, h.argsEnd - 1} {
		if n < 0 || n >= h.argsEnd {
			continue
		}
		res, err := r.invoke(hi, bytes.Repeat([]byte{0x5a}, n), h.reply)
		if err != nil || res.Outcome != bytecode.OutcomeError || res.Code != bytecode.FailShortRequest {
			r.report("%s with a %d-byte request: got %s (err %v), want FailShortRequest", h.name, n, describeResult(res), err)
		}
		for i, rg := range r.eng.regions {
			if !bytes.Equal(rg, snapshot[i]) {
				r.report("%s with a %d-byte request: region %s changed: %s", h.name, n, r.eng.regionNames[i], firstDiff(rg, snapshot[i]))
			}
		}
	}
	if h.reply > 0 {
		r.restore(snapshot)
		res, err := r.invoke(hi, make([]byte, h.req), h.reply-1)
		if err != nil || res.Outcome != bytecode.OutcomeError || res.Code != bytecode.FailShortReply {
			r.report("%s with a %d-byte reply buffer: got %s (err %v), want FailShortReply", h.name, h.reply-1, describeResult(res), err)
		}
	}
}

func (r *corpusRun) snapshot() [][]byte {
	var s [][]byte
	for _, rg := range r.eng.regions {
		s = append(s, slices.Clone(rg))
	}
	return s
}

func (r *corpusRun) restore(s [][]byte) {
	for i, rg := range r.eng.regions {
		copy(rg, s[i])
	}
}

func (r *corpusRun) invoke(hi int, req []byte, replySize int) (vm.Result, error) {
	// The request is copied so that a handler writing into it would show.
	reqCopy := slices.Clone(req)
	res, err := r.eng.invoke(hi, reqCopy, replySize)
	if err == nil && !bytes.Equal(reqCopy, req) {
		err = errors.New("the handler changed its request")
	}
	return res, err
}

func (r *corpusRun) report(format string, args ...any) {
	r.t.Helper()
	r.errors++
	if r.errors > maxCorpusErrors {
		if r.errors == maxCorpusErrors+1 {
			r.t.Errorf("(further mismatches not shown)")
		}
		return
	}
	r.t.Errorf(format, args...)
}

func describeResult(res vm.Result) string {
	switch res.Outcome {
	case bytecode.OutcomeReply:
		return fmt.Sprintf("reply % x", res.Reply)
	case bytecode.OutcomeError:
		return fmt.Sprintf("fail(%#x)", uint32(res.Code))
	}
	return fmt.Sprintf("%v (r0 %#x)", res.Outcome, uint64(res.R0))
}

func firstDiff(got, want []byte) string {
	for i := range got {
		if got[i] != want[i] {
			lo, hi := max(0, i-4), min(len(got), i+12)
			return fmt.Sprintf("first difference at byte %d: got % x, want % x (from byte %d)", i, got[lo:hi], want[lo:hi], lo)
		}
	}
	return "lengths differ"
}

// alignedBytes returns n zero bytes starting on an 8-byte boundary, as
// writable VM memory must.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

func fnvString(s string) uint64 { return fnv1a([]byte(s)) }

// fnv1a is FNV-1a 64, the hash builtin, written here from the library so
// that the reference does not borrow the VM's.
func fnv1a(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// --- encoding helpers ------------------------------------------------------

var le = binary.LittleEndian

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func sizeOf[T integer]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// get reads a little-endian T at off.
func get[T integer](b []byte, off int) T {
	switch sizeOf[T]() {
	case 1:
		return T(b[off])
	case 2:
		return T(le.Uint16(b[off:]))
	case 4:
		return T(le.Uint32(b[off:]))
	}
	return T(le.Uint64(b[off:]))
}

// put writes v little-endian at off.
func put[T integer](b []byte, off int, v T) {
	switch sizeOf[T]() {
	case 1:
		b[off] = byte(v)
	case 2:
		le.PutUint16(b[off:], uint16(v))
	case 4:
		le.PutUint32(b[off:], uint32(v))
	default:
		le.PutUint64(b[off:], uint64(v))
	}
}

func getBool(b []byte, off int) bool { return b[off] != 0 }

func putBool(b []byte, off int, v bool) {
	b[off] = 0
	if v {
		b[off] = 1
	}
}

func b2u[T integer](v bool) T {
	if v {
		return 1
	}
	return 0
}

// msg builds a request: n zero bytes to fill with w.
type msg []byte

func mk(n int) msg { return make(msg, n) }

// u puts the low size bytes of v at off.
func (m msg) u(off, size int, v uint64) msg {
	for i := range size {
		m[off+i] = byte(v >> (8 * i))
	}
	return m
}

// s puts a signed value (two's complement) at off.
func (m msg) s(off, size int, v int64) msg { return m.u(off, size, uint64(v)) }

// raw copies data to off.
func (m msg) raw(off int, data []byte) msg {
	copy(m[off:], data)
	return m
}

func replied(b []byte) ([]byte, uint32)   { return b, 0 }
func failed(code uint32) ([]byte, uint32) { return nil, code }

// edgyBytes returns n random bytes, a third of them 0x00, 0xff, 0x7f or
// 0x80, so that random integers often sit at the edges of their range.
func edgyBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = []byte{0x00, 0xff, 0x7f, 0x80}[r.IntN(4)]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// edgy64 returns a random value that is often an edge: 0, ±1, a power of
// two and its neighbours, the extremes of a narrower type.
func edgy64(r *rand.Rand) uint64 {
	switch r.IntN(6) {
	case 0:
		return uint64(r.IntN(5)) - 2
	case 1:
		return 1 << r.IntN(64)
	case 2:
		return 1<<r.IntN(64) - 1
	case 3:
		return 1<<r.IntN(64) + 1
	case 4:
		w := []uint{8, 16, 32}[r.IntN(3)]
		return uint64(int64(int8(r.IntN(3)-1))) + 1<<(w-1) // around a signed extreme
	}
	return r.Uint64()
}

// widthEdges are interesting values of a w-bit type, as raw bits.
func widthEdges(w uint) []uint64 {
	mask := uint64(1)<<w - 1
	if w == 64 {
		mask = ^uint64(0)
	}
	vals := []uint64{0, 1, 2, 3, 7, 0x40, 1<<(w-1) - 1, 1 << (w - 1), 1<<(w-1) + 1, mask, mask - 1}
	for i := range vals {
		vals[i] &= mask
	}
	return vals
}

// boolBytes returns n random bools as bytes 0 or 1.
func boolBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(2))
	}
	return b
}

// pairs returns a request of n bytes for every pair (a, b) of vals: two
// size-byte integers, a at offset 0 and b at offset size.
func pairs(vals []uint64, size int, n int) [][]byte {
	var out [][]byte
	for _, a := range vals {
		for _, b := range vals {
			out = append(out, mk(n).u(0, size, a).u(size, size, b))
		}
	}
	return out
}

// --- the programs ------------------------------------------------------------

func corpusPrograms() []corpusProgram {
	return []corpusProgram{
		arithProgram[uint8]("arith_u8.naam"),
		arithProgram[uint16]("arith_u16.naam"),
		arithProgram[uint32]("arith_u32.naam"),
		arithProgram[uint64]("arith_u64.naam"),
		arithProgram[int8]("arith_i8.naam"),
		arithProgram[int16]("arith_i16.naam"),
		arithProgram[int32]("arith_i32.naam"),
		arithProgram[int64]("arith_i64.naam"),
		shiftsProgram(),
		castsProgram(),
		compareProgram(),
		shortCircuitProgram(),
		constLoopProgram(),
		cappedLoopProgram(),
		breakContinueProgram(),
		nestedLoopsProgram(),
		loopTypesProgram(),
		structLayoutProgram(),
		arrayOfStructsProgram(),
		arrayEqProgram(),
		structCopyProgram(),
		indexOOBProgram(),
		divZeroProgram(),
		shortRequestProgram(),
		fnsProgram(),
		deepCallsProgram(),
		atomicsU64Program(),
		atomicsU32Program(),
		atomicsI32Program(),
		hashProgram(),
		copyProgram(),
		resultsProgram(),
		earlyReturnProgram(),
		failCodesProgram(),
		kvGetProgram(),
		kvPutProgram(),
		listWalkProgram(),
		binarySearchProgram(),
		histogramProgram(),
		bitsetProgram(),
		checksumProgram(),
		crc32Program(),
		ringBufferProgram(),
		stateMachineProgram(),
		numberTheoryProgram(),
		bitTricksProgram(),
		matrixProgram(),
		minmaxProgram(),
		sortProgram(),
		localsProgram(),
		refsProgram(),
		multiRegionProgram(),
		shadowingProgram(),
		pow2Program(),
		immediatesProgram(),
		canonicalProgram(),
		bigValuesProgram(),
		registerPressureProgram(),
		boolsOutsideProgram(),
		evalOrderProgram(),
		bigCompareProgram(),
		bigCompareReqProgram(),
	}
}

// arithProgram is arith_T.naam for one integer type T: ops, compound, poly.
func arithProgram[T integer](file string) corpusProgram {
	sz := sizeOf[T]()
	edges := widthEdges(uint(8 * sz))
	var single [][]byte
	for _, v := range edges {
		single = append(single, mk(sz).u(0, sz, v))
	}
	return corpusProgram{
		file: file,
		handlers: []corpusHandler{
			{
				name: "ops", argsEnd: 2 * sz, req: 2 * sz, reply: 10 * sz,
				edges: pairs(edges, sz, 2*sz),
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[T](req, 0), get[T](req, sz)
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					out := make([]byte, 10*sz)
					for i, v := range []T{a + b, a - b, a * b, a / b, a % b, -a, ^a, a & b, a | b, a ^ b} {
						put(out, i*sz, v)
					}
					return replied(out)
				},
			},
			{
				name: "compound", argsEnd: 2 * sz, req: 2 * sz, reply: sz,
				edges: pairs(edges, sz, 2*sz),
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[T](req, 0), get[T](req, sz)
					x := a
					x += b
					x *= a
					x -= 7
					x ^= b
					x /= b | 1
					x %= a | 3
					x |= a & 0x11
					x &= ^(b & 0x40)
					out := make([]byte, sz)
					put(out, 0, x)
					return replied(out)
				},
			},
			{
				name: "poly", argsEnd: sz, req: sz, reply: sz,
				edges: single,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a := get[T](req, 0)
					out := make([]byte, sz)
					put(out, 0, a*a*3+a*5-9)
					return replied(out)
				},
			},
		},
	}
}

func shlW[T integer](x, n uint64) T { return T(x) << (n % uint64(8*sizeOf[T]())) }
func shrW[T integer](x, n uint64) T { return T(x) >> (n % uint64(8*sizeOf[T]())) }
func roundW[T integer](x, n uint64) T {
	s := n % uint64(8*sizeOf[T]())
	return (T(x) << s) >> s
}

func shiftsProgram() corpusProgram {
	xs := []uint64{0, 1, 0x80, 0xff, 0x8000, 0x8000_0000, 0x8000_0000_0000_0000, ^uint64(0), 0x0123_4567_89ab_cdef, 0x7f7f_7f7f_7f7f_7f7f}
	ns := []uint64{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 200, 255}
	var byteCounts, wideCounts, fixedCounts [][]byte
	for _, x := range xs {
		for _, n := range ns {
			byteCounts = append(byteCounts, mk(16).u(0, 8, x).u(8, 1, n))
		}
		for _, n := range []uint64{3, 1<<32 + 3, 64, 1 << 63, ^uint64(0), 8, 16, 32} {
			wideCounts = append(wideCounts, mk(16).u(0, 8, x).u(8, 8, n))
		}
		for _, n := range []uint64{0, 1, 62, 63, 64, 0xffff_ffff, 0xffff_fffe} {
			fixedCounts = append(fixedCounts, mk(16).u(0, 8, x).u(8, 4, n))
		}
	}
	eight := func(f func(x, n uint64, out []byte)) func(req []byte, _ [][]byte) ([]byte, uint32) {
		return func(req []byte, _ [][]byte) ([]byte, uint32) {
			out := make([]byte, 32)
			f(get[uint64](req, 0), uint64(req[8]), out)
			return replied(out)
		}
	}
	return corpusProgram{
		file: "shifts.naam",
		handlers: []corpusHandler{
			{
				name: "shl", argsEnd: 9, req: 16, reply: 32, edges: byteCounts,
				ref: eight(func(x, n uint64, out []byte) {
					put(out, 0, shlW[uint8](x, n))
					put(out, 2, shlW[uint16](x, n))
					put(out, 4, shlW[uint32](x, n))
					put(out, 8, shlW[uint64](x, n))
					put(out, 16, shlW[int8](x, n))
					put(out, 18, shlW[int16](x, n))
					put(out, 20, shlW[int32](x, n))
					put(out, 24, shlW[int64](x, n))
				}),
			},
			{
				name: "shr", argsEnd: 9, req: 16, reply: 32, edges: byteCounts,
				ref: eight(func(x, n uint64, out []byte) {
					put(out, 0, shrW[uint8](x, n))
					put(out, 2, shrW[uint16](x, n))
					put(out, 4, shrW[uint32](x, n))
					put(out, 8, shrW[uint64](x, n))
					put(out, 16, shrW[int8](x, n))
					put(out, 18, shrW[int16](x, n))
					put(out, 20, shrW[int32](x, n))
					put(out, 24, shrW[int64](x, n))
				}),
			},
			{
				name: "wide", argsEnd: 16, req: 16, reply: 16, edges: wideCounts,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, n := get[uint64](req, 0), get[uint64](req, 8)
					out := make([]byte, 16)
					put(out, 0, shrW[uint8](x, n))
					put(out, 2, shrW[int16](x, n))
					put(out, 4, shlW[uint32](x, n))
					put(out, 8, shrW[int64](x, n))
					return replied(out)
				},
			},
			{
				name: "roundtrip", argsEnd: 9, req: 16, reply: 32, edges: byteCounts,
				ref: eight(func(x, n uint64, out []byte) {
					put(out, 0, roundW[uint8](x, n))
					put(out, 2, roundW[uint16](x, n))
					put(out, 4, roundW[uint32](x, n))
					put(out, 8, roundW[uint64](x, n))
					put(out, 16, roundW[int8](x, n))
					put(out, 18, roundW[int16](x, n))
					put(out, 20, roundW[int32](x, n))
					put(out, 24, roundW[int64](x, n))
				}),
			},
			{
				name: "fixed", argsEnd: 12, req: 16, reply: 32, edges: fixedCounts,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, n := get[uint64](req, 0), get[uint32](req, 8)
					out := make([]byte, 32)
					put(out, 0, int8(x)>>7)
					put(out, 4, uint32(x)>>31)
					put(out, 8, int64(x)<<63>>63)
					put(out, 16, uint16(x)<<15|uint16(x)>>1)
					v := x
					v <<= n % 64
					v >>= (n + 1) % 64
					v ^= x
					put(out, 24, v)
					return replied(out)
				},
			},
		},
	}
}

func castsProgram() corpusProgram {
	var xs [][]byte
	for _, x := range []uint64{0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x1_0000, 0x7fff_ffff, 0x8000_0000,
		0xffff_ffff, 0x1_0000_0000, 0x8000_0000_0000_0000, ^uint64(0), 0xffff_ffff_ffff_ff80, 0x0123_4567_89ab_cdef} {
		xs = append(xs, mk(8).u(0, 8, x))
	}
	var ab [][]byte
	for _, a := range []int64{0, 1, -1, 2, -2, 127, -128, 255, 256, 1<<31 - 1, -1 << 31, 0x1234_5678} {
		for _, b := range []int64{0, 1, -1, -128, 255, -1 << 31, 0x7fff, -0x8000} {
			ab = append(ab, mk(8).s(0, 4, a).s(4, 4, b))
		}
	}
	return corpusProgram{
		file: "casts.naam",
		handlers: []corpusHandler{
			{
				name: "trunc", argsEnd: 8, req: 8, reply: 24, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint64](req, 0)
					out := make([]byte, 24)
					put(out, 0, uint8(x))
					put(out, 2, uint16(x))
					put(out, 4, uint32(x))
					put(out, 8, int8(x))
					put(out, 10, int16(x))
					put(out, 12, int32(x))
					put(out, 16, int64(x))
					return replied(out)
				},
			},
			{
				name: "extend", argsEnd: 8, req: 8, reply: 96, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint64](req, 0)
					out := make([]byte, 96)
					for i, v := range []uint64{
						uint64(int64(int8(x))),
						uint64(int64(int16(x))),
						uint64(int64(int32(x))),
						uint64(uint8(x)),
						uint64(uint16(x)),
						uint64(uint32(x)),
						uint64(int8(x)),
						uint64(int64(uint8(x))),
						uint64(uint32(int8(x))),
						uint64(uint8(int16(x))),
						uint64(int64(int16(uint16(int32(x))))),
						uint64(int64(int32(uint32(x)))),
					} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "bools", argsEnd: 8, req: 8, reply: 40, edges: ab,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[int32](req, 0), get[int32](req, 4)
					out := make([]byte, 40)
					put(out, 0, b2u[uint8](a < b))
					put(out, 2, b2u[uint16](a == b))
					put(out, 4, b2u[uint32](a > b))
					put(out, 8, b2u[uint64](a != b))
					put(out, 16, b2u[int8](a < 0))
					put(out, 24, b2u[int64](a < 0)+b2u[int64](b < 0)*2)
					putBool(out, 32, a&b != 0)
					return replied(out)
				},
			},
			{
				name: "narrow", argsEnd: 8, req: 8, reply: 40, edges: ab,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					out := make([]byte, 40)
					put(out, 0, uint64(uint8(a)+uint8(b)))
					put(out, 8, uint64(int64(int8(a)*int8(b))))
					put(out, 16, uint64(uint16(a)-uint16(b)))
					put(out, 24, uint64(int64(int16(a)/(int16(b)|1))))
					put(out, 32, uint64(int32(int8(a))+int32(uint8(b))))
					return replied(out)
				},
			},
			{
				name: "consts", argsEnd: 0, req: 0, reply: 32, edges: [][]byte{{}},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 32)
					put(out, 0, uint32(0xffff_ffff))
					put(out, 4, uint8(44))
					put(out, 5, int8(127))
					put(out, 8, uint64(0xffff_ffff_ffff_fffe))
					put(out, 16, int64(-2))
					put(out, 24, uint16(0xfffe))
					return replied(out)
				},
			},
		},
	}
}

func cmpBits[T integer](x, y T) uint64 {
	return b2u[uint64](x < y) | b2u[uint64](x <= y)<<1 | b2u[uint64](x > y)<<2 |
		b2u[uint64](x >= y)<<3 | b2u[uint64](x == y)<<4 | b2u[uint64](x != y)<<5
}

func compareProgram() corpusProgram {
	vals := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff,
		0x1_0000_0000, 1<<63 - 1, 1 << 63, ^uint64(0), 0xffff_ffff_0000_0080}
	as := []int64{-7, -6, -5, -4, -1, 0, 1, 1000, 1001, -1 << 31, 1<<31 - 1, 0x80, -0x81}
	bs := []uint64{0, 4, 5, 0x8000_0000, 0x8000_0001, 0xffff_fffe, 0xffff_ffff, 0x80, 0x7f}
	cs := []int64{1<<32 - 1, 1 << 32, -1 << 32, -1<<32 + 1, 0, -1, 0x8000, -1 << 63}
	ds := []uint64{0xffff_ffff_0000_0000, 0xffff_ffff_0000_0001, 0x7fff_ffff, 0x8000_0000, 0, ^uint64(0), 0x1_7fff_ffff}
	var consts [][]byte
	for i := range 120 {
		consts = append(consts, mk(24).s(0, 4, as[i%len(as)]).u(4, 4, bs[i%len(bs)]).s(8, 8, cs[i%len(cs)]).u(16, 8, ds[i%len(ds)]))
	}
	return corpusProgram{
		file: "compare.naam",
		handlers: []corpusHandler{
			{
				name: "all", argsEnd: 16, req: 16, reply: 8, edges: pairs(vals, 8, 16),
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint64](req, 0), get[uint64](req, 8)
					r := cmpBits(uint8(a), uint8(b)) | cmpBits(uint16(a), uint16(b))<<6 |
						cmpBits(uint32(a), uint32(b))<<12 | cmpBits(a, b)<<18 |
						cmpBits(int8(a), int8(b))<<24 | cmpBits(int16(a), int16(b))<<30 |
						cmpBits(int32(a), int32(b))<<36 | cmpBits(int64(a), int64(b))<<42
					return replied(le.AppendUint64(nil, r))
				},
			},
			{
				name: "consts", argsEnd: 24, req: 24, reply: 4, edges: consts,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b, c, d := get[int32](req, 0), get[uint32](req, 4), get[int64](req, 8), get[uint64](req, 16)
					var bits uint32
					for i, v := range []bool{
						a < -5, a <= -1, a > 1000, a >= 0, b < 5, b > 0x8000_0000, a == -7, b != 0xffff_ffff,
						c < 0x1_0000_0000, c > -0x1_0000_0000, d > 0xffff_ffff_0000_0000, d >= 0x8000_0000,
						int8(a) > -128, uint8(b) >= 0x80, int16(c) < 0, uint32(d) <= 0x7fff_ffff, -1 < a, 0xffff_fffe < b,
					} {
						bits |= b2u[uint32](v) << i
					}
					return replied(le.AppendUint32(nil, bits))
				},
			},
		},
	}
}

func shortCircuitProgram() corpusProgram {
	probe := func(rg [][]byte, i int, v bool) bool {
		put(rg[0], 8*i, get[uint64](rg[0], 8*i)+1)
		return v
	}
	var logic, guard, chain [][]byte
	for m := range 8 {
		logic = append(logic, mk(3).u(0, 1, uint64(m&1)).u(1, 1, uint64(m>>1&1)).u(2, 1, uint64(m>>2)))
	}
	for _, xy := range [][2]uint64{{0, 0}, {5, 0}, {7, 2}, {6, 2}, {6, 3}, {9, 3}, {10, 3}, {1, 1}, {0xffff_ffff, 1}, {0xffff_ffff, 0xffff_ffff}, {3, 2}} {
		guard = append(guard, mk(8).u(0, 4, xy[0]).u(4, 4, xy[1]))
	}
	for _, m := range []uint64{0, 0x3f, 0xbf, 0xff, 0x80, 0x15, 0x2a, 0x01} {
		chain = append(chain, mk(1).u(0, 1, m))
	}
	return corpusProgram{
		file:    "short_circuit.naam",
		regions: []uint64{48},
		handlers: []corpusHandler{
			{
				name: "logic", argsEnd: 3, req: 3, reply: 4, edges: logic,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return boolBytes(r, 3) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b, c := getBool(req, 0), getBool(req, 1), getBool(req, 2)
					out := make([]byte, 4)
					putBool(out, 0, probe(rg, 0, a) && probe(rg, 1, b))
					putBool(out, 1, probe(rg, 2, a) || probe(rg, 3, b))
					putBool(out, 2, probe(rg, 4, a) && probe(rg, 4, b) || probe(rg, 5, c))
					putBool(out, 3, !(probe(rg, 0, c) || !probe(rg, 1, a)))
					return replied(out)
				},
			},
			{
				name: "guard", argsEnd: 8, req: 8, reply: 12, edges: guard,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).u(0, 4, uint64(r.IntN(40))).u(4, 4, uint64(r.IntN(5)))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, y := get[uint32](req, 0), get[uint32](req, 4)
					out := make([]byte, 12)
					putBool(out, 0, y != 0 && x/y > 2)
					if !(y == 0 || x%y == 0) {
						put(out, 4, x/y)
					}
					if !(y == 0) && (x/y == 1 || x%y == 1) {
						put(out, 8, uint32(1))
					}
					return replied(out)
				},
			},
			{
				name: "chain", argsEnd: 1, req: 1, reply: 4, edges: chain,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					mask := req[0]
					var n uint32
					for i := range 6 {
						if (mask>>i)&1 == 1 && probe(rg, i, mask&0x80 == 0) {
							n++
						}
					}
					return replied(le.AppendUint32(nil, n))
				},
			},
		},
	}
}

func constLoopProgram() corpusProgram {
	var xs, bases [][]byte
	for _, x := range []uint64{0, 1, 2, 3, 10, 0xffff, 0xffff_ffff, 0x8000_0000} {
		xs = append(xs, mk(4).u(0, 4, x))
	}
	for _, b := range []uint64{0, 1, 100, 4095, 4096, 65519, 65520, 65530, 65535} {
		bases = append(bases, mk(2).u(0, 2, b))
	}
	return corpusProgram{
		file: "const_loop.naam",
		handlers: []corpusHandler{
			{
				name: "sums", argsEnd: 4, req: 4, reply: 40, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint32](req, 0)
					var tri, fact uint64
					var poly uint32
					for i := range uint64(100) {
						tri += i
					}
					for i := uint32(1); i < 13; i++ {
						poly = poly*x + i
					}
					fact = 1
					for i := uint64(1); i < 26; i++ {
						fact *= i
					}
					var down int64
					for i := int64(-20); i < 20; i++ {
						down = down*3 - i
					}
					out := make([]byte, 40)
					put(out, 0, tri)
					put(out, 8, poly)
					put(out, 16, fact)
					put(out, 32, down)
					return replied(out)
				},
			},
			{
				name: "squares", argsEnd: 2, req: 2, reply: 64, edges: bases,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					base := get[uint16](req, 0)
					out := make([]byte, 64)
					for i := range uint16(16) {
						put(out, 4*int(i), uint32(base+i)*uint32(base+i))
					}
					return replied(out)
				},
			},
		},
	}
}

func cappedLoopProgram() corpusProgram {
	u32s := func(pairs ...[2]uint64) [][]byte {
		var out [][]byte
		for _, p := range pairs {
			out = append(out, mk(8).u(0, 4, p[0]).u(4, 4, p[1]))
		}
		return out
	}
	const maxU32 = 0xffff_ffff
	var signed, wide, small [][]byte
	for _, p := range [][2]int64{{-1 << 31, 1<<31 - 1}, {-50, 50}, {-50, 51}, {1<<31 - 4, 1<<31 - 1}, {10, -10},
		{1<<31 - 1, -1 << 31}, {-1 << 31, -1<<31 + 100}, {-1 << 31, -1<<31 + 101}, {0, 0}, {-3, 3}} {
		signed = append(signed, mk(8).s(0, 4, p[0]).s(4, 4, p[1]))
	}
	for _, p := range [][2]uint64{{0, 32}, {0, 33}, {^uint64(0) - 32, ^uint64(0)}, {^uint64(0), 0}, {0, ^uint64(0)},
		{1 << 63, 1<<63 + 32}, {1<<63 - 1, 1<<63 + 5}, {5, 5}, {7, 3}} {
		wide = append(wide, mk(16).u(0, 8, p[0]).u(8, 8, p[1]))
	}
	for _, p := range [][2]int64{{-128, 127}, {-100, 100}, {-100, 101}, {127, -128}, {-128, 72}, {-128, 73}, {0, 0}, {-1, 1}} {
		small = append(small, mk(2).s(0, 1, p[0]).s(1, 1, p[1]))
	}
	var exact [][]byte
	for n := range 13 {
		exact = append(exact, mk(1).u(0, 1, uint64(n)))
	}
	exact = append(exact, mk(1).u(0, 1, 255))
	near := func(r *rand.Rand, span int) (lo, hi int64) {
		lo = r.Int64N(600) - 300
		return lo, lo + r.Int64N(int64(span)) - 8
	}
	return corpusProgram{
		file:    "capped_loop.naam",
		regions: []uint64{1024},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 256 {
				put(rg[0], 4*i, r.Uint32())
			}
		},
		handlers: []corpusHandler{
			{
				name: "sum_range", argsEnd: 8, req: 8, reply: 8,
				edges: u32s([2]uint64{0, 0}, [2]uint64{5, 3}, [2]uint64{0, 64}, [2]uint64{0, 65}, [2]uint64{200, 264},
					[2]uint64{250, 256}, [2]uint64{192, 256}, [2]uint64{10, 5}, [2]uint64{maxU32, 0}, [2]uint64{0, maxU32},
					[2]uint64{maxU32 - 15, maxU32}, [2]uint64{255, 256}, [2]uint64{256, 257}),
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					lo, hi := near(r, 80)
					return mk(8).u(0, 4, uint64(lo)).u(4, 4, uint64(hi))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					lo, hi := get[uint32](req, 0), get[uint32](req, 4)
					var total uint64
					for i := uint64(lo); i < uint64(hi); i++ {
						if i-uint64(lo) == 64 { // max 64: a 65th iteration fails
							return failed(bytecode.FailLoopCap)
						}
						if i >= 256 {
							return failed(bytecode.FailIndexOutOfRange)
						}
						total += uint64(get[uint32](rg[0], 4*int(i)))
					}
					return replied(le.AppendUint64(nil, total))
				},
			},
			{
				name: "signed", argsEnd: 8, req: 8, reply: 16, edges: signed,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					lo, hi := near(r, 120)
					return mk(8).s(0, 4, lo).s(4, 4, hi)
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					lo, hi := int64(get[int32](req, 0)), int64(get[int32](req, 4))
					if hi-lo > 100 {
						return failed(bytecode.FailLoopCap)
					}
					var sum int64
					var n uint32
					for i := lo; i < hi; i++ {
						sum += i * 3
						n++
					}
					out := make([]byte, 16)
					put(out, 0, sum)
					put(out, 8, n)
					return replied(out)
				},
			},
			{
				name: "exact", argsEnd: 1, req: 1, reply: 4, edges: exact,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					n := req[0]
					if n > 10 {
						return failed(bytecode.FailLoopCap)
					}
					var c uint32
					for i := range uint32(n) {
						c += i + 1
					}
					return replied(le.AppendUint32(nil, c))
				},
			},
			{
				name: "wide", argsEnd: 16, req: 16, reply: 8, edges: wide,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					lo := edgy64(r)
					return mk(16).u(0, 8, lo).u(8, 8, lo+uint64(r.IntN(40))-4)
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					lo, hi := get[uint64](req, 0), get[uint64](req, 8)
					if hi > lo && hi-lo > 32 {
						return failed(bytecode.FailLoopCap)
					}
					var x uint64
					for i := lo; i < hi; i++ {
						x = x*31 + i
					}
					return replied(le.AppendUint64(nil, x))
				},
			},
			{
				name: "small", argsEnd: 2, req: 2, reply: 4, edges: small,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					lo, hi := int(int8(req[0])), int(int8(req[1]))
					if hi-lo > 200 {
						return failed(bytecode.FailLoopCap)
					}
					var x int32
					for i := lo; i < hi; i++ {
						x += int32(i)
					}
					return replied(le.AppendUint32(nil, uint32(x)))
				},
			},
		},
	}
}

func breakContinueProgram() corpusProgram {
	var limits [][]byte
	for _, l := range []uint64{0, 1, 2, 5, 20, 500, 999, 1000, 0xffff_ffff} {
		limits = append(limits, mk(4).u(0, 4, l))
	}
	gen := func(r *rand.Rand, _ [][]byte) []byte { return mk(4).u(0, 4, uint64(r.IntN(1100))) }
	return corpusProgram{
		file:    "break_continue.naam",
		regions: []uint64{256},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 64 {
				put(rg[0], 4*i, uint32(r.IntN(1000)))
			}
		},
		handlers: []corpusHandler{
			{
				name: "first_over", argsEnd: 4, req: 4, reply: 16, edges: limits, gen: gen,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					limit := get[uint32](req, 0)
					idx, skipped, sum := uint32(0xffff_ffff), uint32(0), uint64(0)
					for i := range uint32(64) {
						v := get[uint32](rg[0], 4*int(i))
						if v%3 == 0 {
							skipped++
							continue
						}
						if v > limit {
							idx = i
							break
						}
						sum += uint64(v)
					}
					out := make([]byte, 16)
					put(out, 0, idx)
					put(out, 4, skipped)
					put(out, 8, sum)
					return replied(out)
				},
			},
			{
				name: "inner", argsEnd: 4, req: 4, reply: 8, edges: limits, gen: gen,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					limit := get[uint32](req, 0)
					var rows, cells uint32
					for r := range uint32(8) {
						for c := range uint32(8) {
							if get[uint32](rg[0], 4*int(r*8+c)) > limit {
								break
							}
							if c == r {
								continue
							}
							cells++
						}
						rows++
						if rows*3 > limit {
							break
						}
					}
					out := make([]byte, 8)
					put(out, 0, rows)
					put(out, 4, cells)
					return replied(out)
				},
			},
		},
	}
}

func nestedLoopsProgram() corpusProgram {
	var grid, seeds [][]byte
	for w := range 19 {
		for h := range 19 {
			grid = append(grid, mk(2).u(0, 1, uint64(w)).u(1, 1, uint64(h)))
		}
	}
	for s := range 4 {
		seeds = append(seeds, mk(4).u(0, 4, uint64(s)))
	}
	return corpusProgram{
		file: "nested_loops.naam",
		handlers: []corpusHandler{
			{
				name: "grid", argsEnd: 2, req: 2, reply: 12, edges: grid,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					w, h := req[0], req[1]
					var cells, diag, upper uint32
					for y := range h {
						if y == 16 { // max 16
							return failed(bytecode.FailLoopCap)
						}
						for x := range w {
							if x == 16 { // max 16; a break before it ends the loop
								return failed(bytecode.FailLoopCap)
							}
							cells++
							if x == y {
								diag++
							}
							if x > y {
								upper++
								break
							}
						}
					}
					out := make([]byte, 12)
					put(out, 0, cells)
					put(out, 4, diag)
					put(out, 8, upper)
					return replied(out)
				},
			},
			{
				name: "cube", argsEnd: 4, req: 4, reply: 8, edges: seeds,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					seed := get[uint32](req, 0)
					var sum, count uint32
					for i := range uint32(10) {
						for j := range uint32(10) {
							for k := range uint32(10) {
								if (i+j+k)%3 == seed%3 {
									sum += i*100 + j*10 + k
									count++
								}
							}
						}
					}
					out := make([]byte, 8)
					put(out, 0, sum)
					put(out, 4, count)
					return replied(out)
				},
			},
		},
		random: 50,
	}
}

func loopTypesProgram() corpusProgram {
	var u8s, u16s, i64s [][]byte
	for _, lo := range []uint64{0, 1, 200, 254, 255} {
		u8s = append(u8s, mk(1).u(0, 1, lo))
	}
	for _, p := range [][2]uint64{{65500, 65535}, {65535, 65535}, {65530, 65535}, {0, 40}, {0, 41}, {65535, 0}, {65495, 65535}, {65494, 65535}} {
		u16s = append(u16s, mk(4).u(0, 2, p[0]).u(2, 2, p[1]))
	}
	const minI, maxI = -1 << 63, 1<<63 - 1
	for _, p := range [][2]int64{{minI, maxI}, {maxI - 5, maxI}, {minI, minI + 3}, {maxI, minI}, {-10, 10}, {-10, 11}, {-1, 0}, {maxI - 20, maxI}, {maxI - 21, maxI}} {
		i64s = append(i64s, mk(16).s(0, 8, p[0]).s(8, 8, p[1]))
	}
	return corpusProgram{
		file: "loop_types.naam",
		handlers: []corpusHandler{
			{
				name: "u8_edge", argsEnd: 1, req: 1, reply: 8, edges: u8s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					var n uint32
					var last uint8
					for i := int(req[0]); i < 255; i++ {
						n++
						last = uint8(i)
					}
					out := make([]byte, 8)
					put(out, 0, n)
					put(out, 4, last)
					return replied(out)
				},
			},
			{
				name: "i8_edge", argsEnd: 0, req: 0, reply: 8, edges: [][]byte{{}},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					var n uint32
					var sum int32
					for i := -128; i < 127; i++ {
						n++
						sum += int32(i)
					}
					out := make([]byte, 8)
					put(out, 0, n)
					put(out, 4, sum)
					return replied(out)
				},
			},
			{
				name: "u16_top", argsEnd: 4, req: 4, reply: 8, edges: u16s,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					lo := 65535 - r.IntN(60)
					return mk(4).u(0, 2, uint64(lo)).u(2, 2, uint64(min(65535, lo+r.IntN(50))))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					lo, hi := int(get[uint16](req, 0)), int(get[uint16](req, 2))
					if hi-lo > 40 {
						return failed(bytecode.FailLoopCap)
					}
					var n uint32
					var last uint16
					for i := lo; i < hi; i++ {
						n++
						last = uint16(i)
					}
					out := make([]byte, 8)
					put(out, 0, n)
					put(out, 4, last)
					return replied(out)
				},
			},
			{
				name: "i64_span", argsEnd: 16, req: 16, reply: 16, edges: i64s,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					lo := int64(edgy64(r))
					return mk(16).s(0, 8, lo).s(8, 8, lo+int64(r.IntN(30))-3)
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					lo, hi := get[int64](req, 0), get[int64](req, 8)
					if hi > lo && uint64(hi)-uint64(lo) > 20 {
						return failed(bytecode.FailLoopCap)
					}
					var n uint32
					first := int64(maxI)
					for i := lo; i < hi; i++ {
						if n == 0 {
							first = i
						}
						n++
					}
					out := make([]byte, 16)
					put(out, 0, n)
					put(out, 8, first)
					return replied(out)
				},
			},
		},
	}
}

func structLayoutProgram() corpusProgram {
	const rec = 48
	var is, ij [][]byte
	for _, i := range []uint64{0, 1, 15, 16, 17, 0xffff_ffff, 0x8000_0000} {
		is = append(is, mk(4).u(0, 4, i))
	}
	for _, p := range [][2]uint64{{0, 0}, {3, 7}, {15, 16}, {255, 1}, {17, 240}} {
		ij = append(ij, mk(2).u(0, 1, p[0]).u(1, 1, p[1]))
	}
	return corpusProgram{
		file:    "struct_layout.naam",
		regions: []uint64{16 * rec},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, len(rg[0]))) // padding is garbage
			for i := range 16 {
				rg[0][i*rec+24] = byte(r.IntN(2)) // flag
			}
		},
		handlers: []corpusHandler{
			{
				name: "fields", argsEnd: 4, req: 4, reply: 40, edges: is,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(4).u(0, 4, uint64(r.IntN(20))) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := get[uint32](req, 0)
					if i >= 16 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					x := rg[0][int(i)*rec:]
					out := make([]byte, 40)
					out[0] = x[0]          // tag
					copy(out[8:16], x[8:]) // wide
					copy(out[16:18], x[16:])
					out[18] = x[18] // inner.a
					copy(out[20:22], x[20:])
					out[22] = x[22] // inner.c
					out[23] = x[24] // flag
					copy(out[24:28], x[28:])
					out[28] = x[34] // bytes[2]
					copy(out[32:40], x[40:])
					return replied(out)
				},
			},
			{
				name: "mix", argsEnd: 2, req: 2, reply: 8, edges: ij,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					x, y := rg[0][int(req[0]%16)*rec:], rg[0][int(req[1]%16)*rec:]
					s := int64(get[int16](x, 16)) - get[int64](y, 40) + int64(get[uint16](x, 20))*int64(y[22])
					if x[24] != 0 {
						s += int64(get[uint32](x, 28))
					}
					s = s + int64(x[32]) - int64(y[33])
					return replied(le.AppendUint64(nil, uint64(s)))
				},
			},
			{
				name: "inner", argsEnd: 1, req: 1, reply: 6,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := int(req[0] % 16)
					return replied(slices.Clone(rg[0][i*rec+18 : i*rec+24]))
				},
			},
		},
	}
}

func arrayOfStructsProgram() corpusProgram {
	const item = 16
	return corpusProgram{
		file:    "array_of_structs.naam",
		regions: []uint64{32 * item},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, len(rg[0])))
			for i := range 32 {
				x := rg[0][i*item:]
				put(x, 0, uint32(r.IntN(100)))
				if r.IntN(5) == 0 {
					put(x, 4, uint16(0))
				}
			}
		},
		handlers: []corpusHandler{
			{
				name: "total", argsEnd: 16, req: 16, reply: 16,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					m := mk(16)
					for k := range 4 {
						m.u(4*k, 4, uint64(r.IntN(120)))
					}
					return m
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					var value uint64
					var found uint8
					for k := range 4 {
						id := get[uint32](req, 4*k)
						for i := range 32 {
							x := rg[0][i*item:]
							if get[uint32](x, 0) == id {
								value += uint64(get[uint16](x, 4)) * get[uint64](x, 8)
								found++
								break
							}
						}
					}
					out := make([]byte, 16)
					put(out, 0, value)
					put(out, 8, found)
					return replied(out)
				},
			},
			{
				name: "pick", argsEnd: 2, req: 2, reply: 40,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := rg[0][int(req[0]%32)*item:][:item], rg[0][int(req[1]%32)*item:][:item]
					out := make([]byte, 40)
					copy(out, a)
					copy(out[16:], b)
					put(out, 32, uint32(get[uint16](a, 4))+uint32(get[uint16](b, 4)))
					return replied(out)
				},
			},
			{
				name: "cheapest", argsEnd: 0, req: 0, reply: 16, edges: [][]byte{{}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					var idx uint32
					price := ^uint64(0)
					for i := range 32 {
						x := rg[0][i*item:]
						if get[uint16](x, 4) > 0 && get[uint64](x, 8) < price {
							price = get[uint64](x, 8)
							idx = uint32(i)
						}
					}
					out := make([]byte, 16)
					put(out, 0, idx)
					put(out, 8, price)
					return replied(out)
				},
			},
		},
		random: 100,
	}
}

// mutate returns b, or with probability 1/2 a copy with one byte changed.
func mutate(r *rand.Rand, b []byte) []byte {
	b = slices.Clone(b)
	if r.IntN(2) == 0 {
		b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
	}
	return b
}

func arrayEqProgram() corpusProgram {
	return corpusProgram{
		file:    "array_eq.naam",
		regions: []uint64{128, 64},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 128))
			copy(rg[0][9*8:10*8], rg[0][3*8:4*8]) // keys[9] == keys[3]
			copy(rg[1], randBytes(r, 64))
			copy(rg[1][3*16:4*16], rg[1][1*16:2*16]) // wide[3] == wide[1]
		},
		handlers: []corpusHandler{
			{
				name: "eq", argsEnd: 66, req: 68, reply: 4,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					a, c, e := randBytes(r, 16), randBytes(r, 12), boolBytes(r, 5)
					f := slices.Clone(e)
					if r.IntN(2) == 0 {
						f[r.IntN(5)] ^= 1
					}
					return mk(68).raw(0, a).raw(16, mutate(r, a)).raw(32, c).raw(44, mutate(r, c)).raw(56, e).raw(61, f)
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					ab := bytes.Equal(req[0:16], req[16:32])
					cd := bytes.Equal(req[32:44], req[44:56])
					out := make([]byte, 4)
					putBool(out, 0, ab)
					putBool(out, 1, cd)
					putBool(out, 2, bytes.Equal(req[56:61], req[61:66]))
					putBool(out, 3, !ab || !cd)
					return replied(out)
				},
			},
			{
				name: "find", argsEnd: 8, req: 8, reply: 8,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					k := r.IntN(16)
					return mutate(r, rg[0][k*8:k*8+8])
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					out := make([]byte, 8)
					for i := range 16 {
						if bytes.Equal(rg[0][i*8:i*8+8], req[:8]) {
							put(out, 0, uint32(i))
							putBool(out, 4, true)
							break
						}
					}
					return replied(out)
				},
			},
			{
				name: "nested", argsEnd: 24, req: 24, reply: 2,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					x := randBytes(r, 12)
					return mk(24).raw(0, x).raw(12, mutate(r, x))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 2)
					putBool(out, 0, bytes.Equal(req[0:12], req[12:24]))
					for i := range 3 {
						if bytes.Equal(req[4*i:4*i+4], req[12+4*i:12+4*i+4]) {
							out[1] |= 1 << i
						}
					}
					return replied(out)
				},
			},
			{
				name: "signed", argsEnd: 16, req: 16, reply: 1,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					k := r.IntN(4)
					return mutate(r, rg[1][k*16:k*16+16])
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					var n uint8
					for i := range 4 {
						if bytes.Equal(rg[1][i*16:i*16+16], req[:16]) {
							n++
						}
					}
					return replied([]byte{n})
				},
			},
		},
	}
}

func structCopyProgram() corpusProgram {
	const box = 24
	el := func(rg [][]byte, i uint8) []byte { return rg[0][int(i%8)*box:][:box] }
	return corpusProgram{
		file:    "struct_copy.naam",
		regions: []uint64{8 * box},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, len(rg[0])))
		},
		handlers: []corpusHandler{
			{
				name: "swap", argsEnd: 2, req: 2, reply: 24,
				edges: [][]byte{{0, 0}, {0, 8}, {1, 2}, {7, 0}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := el(rg, req[0]), el(rg, req[1])
					t := slices.Clone(a)
					copy(a, b)
					copy(b, t)
					return replied(t)
				},
			},
			{
				name: "arrays", argsEnd: 16, req: 16, reply: 32,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 32)
					copy(out[0:16], req[:16])  // y = a
					put(out, 0, uint32(100))   // a[0] = 100
					copy(out[16:32], req[:16]) // z = x
					put(out, 8, 5+get[uint32](req, 4))
					return replied(out)
				},
			},
			{
				name: "fields", argsEnd: 16, req: 16, reply: 32,
				edges: [][]byte{mk(16).u(0, 1, 2).u(1, 1, 2).u(8, 8, 77), mk(16).u(0, 1, 1).u(1, 1, 3).u(8, 8, ^uint64(0))},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					p := slices.Clone(el(rg, req[0])[:16])
					out := make([]byte, 32)
					copy(out[0:16], p)
					copy(p[8:16], req[8:16])
					copy(el(rg, req[1])[:16], p)
					copy(out[16:32], p)
					return replied(out)
				},
			},
		},
		random: 100,
	}
}

func indexOOBProgram() corpusProgram {
	table := func(rg [][]byte, i uint64) []byte { return le.AppendUint32(nil, get[uint32](rg[0], 4*int(i))) }
	var get32, getS, get64, local, nested, request [][]byte
	for _, i := range []uint64{0, 9, 10, 11, 0xffff_ffff, 0x8000_0000} {
		get32 = append(get32, mk(4).u(0, 4, i))
	}
	for _, i := range []int64{-1, -32768, 0, 9, 10, 32767} {
		getS = append(getS, mk(2).s(0, 2, i))
	}
	for _, i := range []uint64{9, 10, 1 << 32, 1<<32 + 1, 1 << 63, ^uint64(0), 1<<32 + 10} {
		get64 = append(get64, mk(8).u(0, 8, i))
	}
	for _, i := range []uint64{0, 4, 5, 255, 128} {
		local = append(local, mk(8).u(0, 1, i).u(4, 4, 0xdead_beef))
	}
	for _, p := range [][2]uint64{{0, 3}, {0, 4}, {2, 3}, {3, 0}, {0, 5}, {1, 255}, {255, 0}, {2, 0}} {
		nested = append(nested, mk(2).u(0, 1, p[0]).u(1, 1, p[1]))
	}
	for _, i := range []int64{-1, 0, 5, 6, -1 << 63, 1 << 32, 3} {
		request = append(request, mk(24).raw(0, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).s(16, 8, i))
	}
	return corpusProgram{
		file:    "index_oob.naam",
		regions: []uint64{40},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 40)) },
		handlers: []corpusHandler{
			{
				name: "get", argsEnd: 4, req: 4, reply: 4, edges: get32,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := get[uint32](req, 0)
					if i >= 10 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied(table(rg, uint64(i)))
				},
			},
			{
				name: "get_signed", argsEnd: 2, req: 2, reply: 4, edges: getS,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := get[int16](req, 0)
					if i < 0 || i >= 10 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied(table(rg, uint64(i)))
				},
			},
			{
				name: "get64", argsEnd: 8, req: 8, reply: 4, edges: get64,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := get[uint64](req, 0)
					if i >= 10 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied(table(rg, i))
				},
			},
			{
				name: "local", argsEnd: 8, req: 8, reply: 20, edges: local,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					i := req[0]
					if i >= 5 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					out := make([]byte, 20)
					copy(out[4*int(i):], req[4:8])
					return replied(out)
				},
			},
			{
				name: "nested", argsEnd: 2, req: 2, reply: 1, edges: nested,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					i, j := req[0], req[1]
					if i >= 3 || j >= 4 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied([]byte{i*4 + j})
				},
			},
			{
				name: "request", argsEnd: 24, req: 24, reply: 2, edges: request,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					i := get[int64](req, 16)
					if i < 0 || i >= 6 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied(slices.Clone(req[2*i : 2*i+2]))
				},
			},
		},
	}
}

func divZeroProgram() corpusProgram {
	var u64s, i32s, i64s [][]byte
	for _, a := range []uint64{0, 7, 1 << 63, ^uint64(0), 0x1_0000_0007} {
		for _, b := range []uint64{0, 1, 3, 1 << 32, 1 << 8, 0x1_0000, 1 << 63, ^uint64(0), 0x1_0000_0100, 0x100_0000_0000} {
			u64s = append(u64s, mk(16).u(0, 8, a).u(8, 8, b))
		}
	}
	for _, a := range []int64{0, 7, -7, -1 << 31, 1<<31 - 1} {
		for _, b := range []int64{0, 1, -1, 2, -2, 3, -1 << 31} {
			i32s = append(i32s, mk(8).s(0, 4, a).s(4, 4, b))
		}
	}
	for _, a := range []int64{-32768, 7, -7, 0x1_8000} {
		for _, b := range []int64{0, -1, 1 << 16, 1<<16 - 1, 3, -1 << 63} {
			i64s = append(i64s, mk(16).s(0, 8, a).s(8, 8, b))
		}
	}
	u64 := func(req []byte) (uint64, uint64) { return get[uint64](req, 0), get[uint64](req, 8) }
	var assign [][]byte
	for _, p := range [][2]uint64{{10, 0}, {10, 0xffff_ffff}, {0xffff_ffff, 0xffff_fffe}, {100, 7}, {100, 1}} {
		assign = append(assign, mk(8).u(0, 4, p[0]).u(4, 4, p[1]))
	}
	return corpusProgram{
		file: "div_zero.naam",
		handlers: []corpusHandler{
			{
				name: "divs", argsEnd: 16, req: 16, reply: 16, edges: u64s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := u64(req)
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied(le.AppendUint64(le.AppendUint64(nil, a/b), a%b))
				},
			},
			{
				name: "div32", argsEnd: 16, req: 16, reply: 4, edges: u64s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := u64(req)
					if uint32(b) == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied(le.AppendUint32(nil, uint32(a)/uint32(b)))
				},
			},
			{
				name: "mod8", argsEnd: 16, req: 16, reply: 1, edges: u64s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := u64(req)
					if uint8(b) == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied([]byte{uint8(a) % uint8(b)})
				},
			},
			{
				name: "signed", argsEnd: 8, req: 8, reply: 8, edges: i32s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[int32](req, 0), get[int32](req, 4)
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					out := make([]byte, 8)
					put(out, 0, a/b)
					put(out, 4, a%b)
					return replied(out)
				},
			},
			{
				name: "signed16", argsEnd: 16, req: 16, reply: 2, edges: i64s,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[int64](req, 0), get[int64](req, 8)
					if int16(b) == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied(le.AppendUint16(nil, uint16(int16(a)/int16(b))))
				},
			},
			{
				name: "assign", argsEnd: 8, req: 8, reply: 4, edges: assign,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					if b == 0 || b+1 == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied(le.AppendUint32(nil, a/b%(b+1)))
				},
			},
		},
	}
}

func shortRequestProgram() corpusProgram {
	bump := func(rg [][]byte) uint64 {
		v := get[uint64](rg[0], 0) + 1
		put(rg[0], 0, v)
		return v
	}
	big := func(n int) []byte {
		return mk(n).u(0, 8, 1000).u(8+39, 1, 0xee).u(48, 2, 0x1234)
	}
	return corpusProgram{
		file:    "short_request.naam",
		regions: []uint64{8},
		handlers: []corpusHandler{
			{
				name: "big", argsEnd: 50, req: 56, reply: 8,
				edges: [][]byte{{}, big(56)[:20], big(56)[:49], big(56), big(80)},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					if len(req) < 50 {
						return failed(bytecode.FailShortRequest)
					}
					bump(rg)
					return replied(le.AppendUint64(nil, get[uint64](req, 0)+uint64(req[47])+uint64(get[uint16](req, 48))))
				},
			},
			{
				name: "one", argsEnd: 1, req: 1, reply: 1,
				edges: [][]byte{{}, {0}, {255}, {7, 1, 2, 3}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					if len(req) < 1 {
						return failed(bytecode.FailShortRequest)
					}
					bump(rg)
					return replied([]byte{req[0] + 1})
				},
			},
			{
				name: "none", argsEnd: 0, req: 0, reply: 8,
				edges: [][]byte{{}, {1, 2, 3}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint64(nil, bump(rg)))
				},
			},
		},
		random: 60,
	}
}

func fnsProgram() corpusProgram {
	clamp := func(v, lo, hi int32) int32 {
		if v < lo {
			return lo
		}
		if v > hi {
			return hi
		}
		return v
	}
	dot := func(a, b []int32) int64 {
		var s int64
		for i := range 4 {
			s += int64(a[i]) * int64(b[i])
		}
		return s
	}
	i32s := func(b []byte) []int32 {
		v := make([]int32, 4)
		for i := range v {
			v[i] = get[int32](b, 4*i)
		}
		return v
	}
	var stats [][]byte
	for _, p := range [][2]int64{{-1 << 31, 1<<31 - 1}, {0, 0}, {-100, 100}, {100, -100}, {-1 << 31, -1 << 31}, {1<<31 - 1, 1<<31 - 1}} {
		stats = append(stats, mk(8).s(0, 4, p[0]).s(4, 4, p[1]))
	}
	return corpusProgram{
		file:    "fns.naam",
		regions: []uint64{256},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 64 {
				v := int32(r.Uint32())
				if i%4 == 0 {
					v = int32(r.IntN(2001) - 1000)
				}
				put(rg[0], 4*i, v)
			}
			put(rg[0], 4*7, int32(-1<<31))
			put(rg[0], 4*8, int32(1<<31-1))
		},
		handlers: []corpusHandler{
			{
				name: "stats", argsEnd: 8, req: 8, reply: 32, edges: stats,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).s(0, 4, int64(int32(edgy64(r)))).s(4, 4, int64(int32(edgy64(r))))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					lo, hi := get[int32](req, 0), get[int32](req, 4)
					var sum, energy int64
					var count uint32
					mn, mx := int32(1<<31-1), int32(-1<<31)
					for i := range 64 {
						v := clamp(get[int32](rg[0], 4*i), lo, hi)
						sum += int64(v)
						count++
						mn, mx = min(mn, v), max(mx, v)
						energy += int64(v) * int64(v)
					}
					out := make([]byte, 32)
					put(out, 0, sum)
					put(out, 8, count)
					put(out, 12, mn)
					put(out, 16, mx)
					put(out, 24, energy)
					return replied(out)
				},
			},
			{
				name: "vectors", argsEnd: 36, req: 36, reply: 32,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b, k := i32s(req[0:]), i32s(req[16:]), get[int32](req, 32)
					c, scaled := make([]int32, 4), make([]int32, 4)
					for i := range 4 {
						c[i] = a[i] * k
						scaled[i] = b[i] * k
					}
					out := make([]byte, 32)
					put(out, 0, dot(a, b))
					for i := range 4 {
						put(out, 8+4*i, scaled[i])
					}
					put(out, 24, dot(c, scaled))
					return replied(out)
				},
			},
			{
				name: "choose", argsEnd: 24, req: 24, reply: 8,
				edges: [][]byte{mk(24).u(0, 1, 0), mk(24).u(0, 1, 64).u(8, 8, 1).u(16, 8, 2), mk(24).u(0, 1, 65), mk(24).u(0, 1, 5).u(8, 8, 10).u(16, 8, 1)},
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(24).u(0, 1, uint64(r.IntN(70))).u(8, 8, r.Uint64()).u(16, 8, edgy64(r))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					n, x, y := req[0], get[uint64](req, 8), get[uint64](req, 16)
					if n > 64 {
						return failed(bytecode.FailLoopCap)
					}
					var s uint64
					for i := range n {
						v := y
						if i%2 == 0 {
							v = x
						}
						s = s*3 + v
					}
					return replied(le.AppendUint64(nil, s))
				},
			},
		},
	}
}

func deepCallsProgram() corpusProgram {
	f7 := func(x uint64) uint64 { return x*7 + 1 }
	f6 := func(x uint64) uint64 { return f7(x^6) + 6 }
	f5 := func(x uint64) uint64 { return f6(x+5) * 5 }
	f4 := func(x uint64) uint64 {
		var s uint64
		for i := range uint64(3) {
			s += f5(x + i)
		}
		return s
	}
	f3 := func(x uint64) uint64 { return f4(x>>3) - 3 }
	f2 := func(x, y uint64) uint64 { return f3(x) ^ f3(y) }
	f1 := func(x uint64) uint64 { return f2(x, x*11) + f7(x) }
	mangle := func(a, b, c, d, e uint32) uint32 {
		var t [8]uint32
		for i := range uint32(8) {
			t[i] = a*i + b - c ^ d + e
		}
		return t[a%8] + t[7]
	}
	return corpusProgram{
		file: "deep_calls.naam",
		handlers: []corpusHandler{
			{
				name: "deep", argsEnd: 8, req: 8, reply: 8,
				edges: [][]byte{mk(8), mk(8).u(0, 8, ^uint64(0)), mk(8).u(0, 8, 12345)},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint64](req, 0)
					return replied(le.AppendUint64(nil, f1(x)+f1(x+1)))
				},
			},
			{
				name: "locals", argsEnd: 8, req: 8, reply: 16,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					m1 := mangle(a, b, 3, 4, 5)
					m2 := mangle(b, a, m1, 1, 2)
					out := make([]byte, 16)
					put(out, 0, a+m1)
					put(out, 4, b+m2)
					put(out, 8, a^b)
					put(out, 12, a+b-m1-m2)
					return replied(out)
				},
			},
		},
		random: 100,
	}
}

func atomicsU64Program() corpusProgram {
	word := func(rg [][]byte, i uint8) int { return 8 * int(i%8) }
	return corpusProgram{
		file:    "atomics_u64.naam",
		regions: []uint64{64},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 64)) },
		handlers: []corpusHandler{
			{
				name: "ops", argsEnd: 16, req: 16, reply: 64,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(16).u(0, 1, uint64(r.IntN(256))).u(8, 8, edgy64(r)) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					o, v := word(rg, req[0]), get[uint64](req, 8)
					w := get[uint64](rg[0], o)
					var res [8]uint64
					res[0] = w
					w += v
					res[1] = w
					w &= ^v
					res[2] = w
					w |= v >> 3
					res[3] = w
					w ^= 0x5555_0000_5555
					res[4] = w
					w = v * 3
					res[5] = w
					if w == v*3 {
						w = v + 1
					}
					res[6] = w
					if w == v {
						w = 0
					}
					res[7] = w
					put(rg[0], o, w)
					out := make([]byte, 64)
					for i, x := range res {
						put(out, 8*i, x)
					}
					return replied(out)
				},
			},
			{
				name: "add", argsEnd: 16, req: 16, reply: 8,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(16).u(0, 1, uint64(r.IntN(256))).u(8, 8, edgy64(r)) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					o := word(rg, req[0])
					old := get[uint64](rg[0], o)
					put(rg[0], o, old+get[uint64](req, 8))
					return replied(le.AppendUint64(nil, old))
				},
			},
			{
				name: "cas", argsEnd: 24, req: 24, reply: 1,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					i := uint8(r.IntN(256))
					old := get[uint64](rg[0], word(rg, i))
					if r.IntN(2) == 0 {
						old ^= 1 << r.IntN(64)
					}
					return mk(24).u(0, 1, uint64(i)).u(8, 8, old).u(16, 8, edgy64(r))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					o, old, nw := word(rg, req[0]), get[uint64](req, 8), get[uint64](req, 16)
					cur := get[uint64](rg[0], o)
					if cur == old {
						put(rg[0], o, nw)
					}
					return replied([]byte{b2u[uint8](cur == old)})
				},
			},
		},
	}
}

func atomicsU32Program() corpusProgram {
	slot := func(i uint8) int { return 16 * int(i%16) }
	return corpusProgram{
		file:    "atomics_u32.naam",
		regions: []uint64{256},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 256))
			for i := range 16 {
				if i%2 == 0 {
					put(rg[0], 16*i+8, uint64(0))
				} else {
					put(rg[0], 16*i+8, uint64(r.IntN(4)))
				}
			}
		},
		handlers: []corpusHandler{
			{
				name: "ops", argsEnd: 8, req: 8, reply: 28,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).u(0, 1, uint64(r.IntN(256))).u(4, 4, edgy64(r))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					s, v := rg[0][slot(req[0]):], get[uint32](req, 4)
					hits, flags := get[uint32](s, 0), get[uint32](s, 4)
					var res [7]uint32
					res[0] = hits
					hits += v
					res[1] = flags
					flags &= ^uint32(4)
					res[2] = flags
					flags |= v << 3
					res[3] = hits
					hits ^= 0x8000_0001
					res[4] = flags
					flags = v
					res[5] = flags
					if flags == v {
						flags = v ^ 0xffff
					}
					res[6] = hits
					if hits == v+1 {
						hits = 7
					}
					put(s, 0, hits)
					put(s, 4, flags)
					out := make([]byte, 28)
					for i, x := range res {
						put(out, 4*i, x)
					}
					return replied(out)
				},
			},
			{
				name: "claim", argsEnd: 16, req: 16, reply: 16,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(16).u(0, 1, uint64(r.IntN(32))).u(8, 8, uint64(r.IntN(4)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					s, me := rg[0][slot(req[0]):], get[uint64](req, 8)
					old := get[uint64](s, 8)
					if old == 0 {
						put(s, 8, me)
						put(s, 0, get[uint32](s, 0)+1)
					}
					out := make([]byte, 16)
					put(out, 0, old)
					putBool(out, 8, old == 0)
					return replied(out)
				},
			},
			{
				name: "release", argsEnd: 16, req: 16, reply: 1,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(16).u(0, 1, uint64(r.IntN(32))).u(8, 8, uint64(r.IntN(4)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					s, me := rg[0][slot(req[0]):], get[uint64](req, 8)
					old := get[uint64](s, 8)
					if old == me {
						put(s, 8, uint64(0))
					}
					return replied([]byte{b2u[uint8](old == me)})
				},
			},
		},
	}
}

func atomicsI32Program() corpusProgram {
	st := func(rg [][]byte, i uint8) []byte { return rg[0][16*int(i%4):] }
	gen := func(r *rand.Rand, _ [][]byte) []byte {
		v := int64(r.IntN(2001) - 1000)
		if r.IntN(4) == 0 {
			v = int64(int32(edgy64(r)))
		}
		return mk(8).u(0, 1, uint64(r.IntN(256))).s(4, 4, v)
	}
	return corpusProgram{
		file:    "atomics_i32.naam",
		regions: []uint64{64},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 4 {
				put(rg[0], 16*i, int32(r.IntN(200)-100))
				put(rg[0], 16*i+4, int32(-1))
				put(rg[0], 16*i+8, int64(r.IntN(1000)))
			}
		},
		handlers: []corpusHandler{
			{
				name: "adjust", argsEnd: 8, req: 8, reply: 16, gen: gen,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					s, delta := st(rg, req[0]), get[int32](req, 4)
					old := get[int32](s, 0)
					put(s, 0, old+delta)
					wide := get[int64](s, 8)
					put(s, 8, wide+int64(delta))
					if old+delta < get[int32](s, 4) {
						put(s, 4, old+delta)
					}
					out := make([]byte, 16)
					put(out, 0, old)
					putBool(out, 4, old < 0)
					put(out, 8, wide)
					return replied(out)
				},
			},
			{
				name: "swap_neg", argsEnd: 8, req: 8, reply: 8, gen: gen,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					s, v := st(rg, req[0]), get[int32](req, 4)
					old := get[int32](s, 0)
					put(s, 0, -v)
					casOld := get[int32](s, 4)
					if casOld == -1 {
						put(s, 4, v)
					}
					put(s, 8, get[int64](s, 8)&-4)
					put(s, 4, get[int32](s, 4)|-0x8000_0000)
					put(s, 0, get[int32](s, 0)^-1)
					out := make([]byte, 8)
					put(out, 0, old)
					put(out, 4, casOld)
					return replied(out)
				},
			},
		},
	}
}

func hashProgram() corpusProgram {
	return corpusProgram{
		file:    "hash.naam",
		regions: []uint64{128, 32},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 128))
			copy(rg[1], randBytes(r, 32))
		},
		handlers: []corpusHandler{
			{
				name: "args", argsEnd: 29, req: 32, reply: 40,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(32).raw(0, randBytes(r, 16)).u(16, 8, edgy64(r)).u(24, 4, r.Uint64()).u(28, 1, uint64(r.IntN(2)))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 40)
					hk := fnv1a(req[0:16])
					put(out, 0, hk)
					put(out, 8, fnv1a(req[16:24]))
					put(out, 16, fnv1a(req[24:28]))
					put(out, 24, fnv1a(req[28:29]))
					put(out, 32, fnv1a(le.AppendUint64(nil, hk)))
					return replied(out)
				},
			},
			{
				name: "places", argsEnd: 2, req: 2, reply: 40,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i, j := int(req[0]%8), int(req[1]%4)
					hkey := fnv1a(rg[0][16*i : 16*i+16])
					hrec := fnv1a(rg[1][8*j : 8*j+8])
					out := make([]byte, 40)
					put(out, 0, hkey)
					put(out, 8, hrec)
					put(out, 16, fnv1a(rg[0]))
					put(out, 24, fnv1a(rg[1][8*j+4:8*j+5]))
					put(out, 32, fnv1a(le.AppendUint64(le.AppendUint64(nil, hkey), hrec)))
					return replied(out)
				},
			},
			{
				name: "bucket", argsEnd: 16, req: 16, reply: 4,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint32(nil, uint32(fnv1a(req[:16])%1024)))
				},
			},
		},
	}
}

func copyProgram() corpusProgram {
	out := func(rg [][]byte, i uint8) []byte { return rg[1][32*int(i%8):][:32] }
	rec := func(rg [][]byte, i uint8) []byte { return rg[2][16*int(i%4):][:16] }
	return corpusProgram{
		file:    "copy.naam",
		regions: []uint64{256, 256, 64},
		setup: func(r *rand.Rand, rg [][]byte) {
			for _, x := range rg {
				copy(x, randBytes(r, len(x)))
			}
		},
		handlers: []corpusHandler{
			{
				name: "mv", argsEnd: 2, req: 2, reply: 32,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					o := out(rg, req[1])
					copy(o, rg[0][32*int(req[0]%8):][:32])
					return replied(slices.Clone(o))
				},
			},
			{
				name: "within", argsEnd: 2, req: 2, reply: 0,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					copy(out(rg, req[0]), out(rg, req[1]))
					return replied([]byte{})
				},
			},
			{
				name: "arg", argsEnd: 33, req: 33, reply: 1,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					copy(out(rg, req[32]), req[:32])
					return replied([]byte{req[31] ^ req[0]})
				},
			},
			{
				name: "rec", argsEnd: 20, req: 20, reply: 16,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := req[0]
					old := slices.Clone(rec(rg, i))
					copy(rec(rg, i), req[4:20])
					return replied(old)
				},
			},
		},
	}
}

func resultsProgram() corpusProgram {
	var xs [][]byte
	for _, x := range []uint64{0, 1, 5, 6, 10, 11, 0xffff, 0x1_0000, 0xffff_ffff, 0x8000_0000} {
		xs = append(xs, mk(4).u(0, 4, x))
	}
	return corpusProgram{
		file: "results.naam",
		handlers: []corpusHandler{
			{
				name: "single", argsEnd: 4, req: 4, reply: 4, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint32(nil, get[uint32](req, 0)*2+1))
				},
			},
			{
				name: "named", argsEnd: 4, req: 4, reply: 16, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied(mk(16).raw(0, req[:4]))
				},
			},
			{
				name: "named_ret", argsEnd: 4, req: 4, reply: 16, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint32](req, 0)
					return replied(mk(16).u(0, 4, uint64(x+1)).u(4, 2, uint64(x)).u(8, 8, uint64(x)<<20))
				},
			},
			{
				name: "none", argsEnd: 4, req: 4, reply: 0, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) { return replied([]byte{}) },
			},
			{
				name: "flag", argsEnd: 4, req: 4, reply: 1, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied([]byte{b2u[uint8](get[uint32](req, 0) > 10)})
				},
			},
			{
				name: "arr", argsEnd: 1, req: 1, reply: 6, edges: [][]byte{{0}, {1}, {218}, {255}},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := uint16(req[0])
					return replied(mk(6).u(0, 2, uint64(x)).u(2, 2, uint64(x*300)).u(4, 2, uint64(0xffff-x)))
				},
			},
			{
				name: "partial", argsEnd: 4, req: 4, reply: 16, edges: xs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					if get[uint32](req, 0) > 5 {
						return replied(mk(16).u(0, 1, 1))
					}
					return replied(mk(16).u(8, 8, 7))
				},
			},
			{
				name: "zero", argsEnd: 0, req: 0, reply: 8, edges: [][]byte{{}},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint64(nil, 42))
				},
			},
			{
				// return q * 2, p evaluates both values before assigning
				// either (spec/language.md: "assigns all of them first").
				name: "overwrite", argsEnd: 2, req: 2, reply: 4, edges: [][]byte{{0, 0}, {0xff, 0xff}, {5, 0}},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint16](req, 0)
					p, q := x, x+1
					return replied(mk(4).u(0, 2, uint64(q*2)).u(2, 2, uint64(p)))
				},
			},
		},
		random: 150,
	}
}

func earlyReturnProgram() corpusProgram {
	find := func(rg [][]byte, v uint32) uint32 {
		for i := range 32 {
			if get[uint32](rg[0], 4*i) == v {
				return uint32(i)
			}
		}
		return 0xffff_ffff
	}
	var xs [][]byte
	for _, x := range []int64{-1 << 31, -1, 0, 1, 2, 98, 99, 100, 149, 150, 549, 550, 1<<31 - 1} {
		xs = append(xs, mk(4).s(0, 4, x))
	}
	return corpusProgram{
		file:    "early_return.naam",
		regions: []uint64{128},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 32 {
				put(rg[0], 4*i, uint32(r.IntN(64)))
			}
		},
		handlers: []corpusHandler{
			{
				name: "classify", argsEnd: 4, req: 4, reply: 1, edges: xs,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(4).s(0, 4, int64(r.IntN(800)-100)) },
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[int32](req, 0)
					res := func() uint8 {
						switch {
						case x < 0:
							return 0
						case x == 0:
							return 1
						case x < 100 && x%2 == 0:
							return 2
						case x < 100:
							return 3
						}
						for i := range int32(10) {
							if x < 100+i*50 {
								return 10 + uint8(i)
							}
						}
						return 9
					}()
					return replied([]byte{res})
				},
			},
			{
				name: "lookup", argsEnd: 4, req: 4, reply: 8,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(4).u(0, 4, uint64(r.IntN(70))) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					idx := find(rg, get[uint32](req, 0))
					out := mk(8).u(0, 4, uint64(idx))
					putBool(out, 4, idx != 0xffff_ffff)
					return replied(out)
				},
			},
			{
				name: "nested", argsEnd: 8, req: 8, reply: 4,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).u(0, 4, uint64(r.IntN(70))).u(4, 4, uint64(r.IntN(10)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					res := func() uint32 {
						for i := range uint32(8) {
							for j := range uint32(8) {
								if get[uint32](rg[0], int(4*(i*4+j%4))) == a+j {
									return i*8 + j
								}
								if j == b {
									break
								}
							}
						}
						return 1000
					}()
					return replied(le.AppendUint32(nil, res))
				},
			},
		},
	}
}

func failCodesProgram() corpusProgram {
	var codes, loops [][]byte
	for c := range 13 {
		codes = append(codes, mk(4).u(0, 4, uint64(c)))
	}
	codes = append(codes, mk(4).u(0, 4, 0xffff_ffff))
	for _, n := range []uint64{0, 13, 14, ^uint64(0), ^uint64(0) - 5, ^uint64(0) - 6, 100, 0xfffffff} {
		loops = append(loops, mk(8).u(0, 8, n))
	}
	return corpusProgram{
		file:    "fail_codes.naam",
		regions: []uint64{16},
		handlers: []corpusHandler{
			{
				name: "f", argsEnd: 4, req: 4, reply: 4, edges: codes,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					code := get[uint32](req, 0)
					switch {
					case code == 0:
						return replied(le.AppendUint32(nil, 0))
					case code == 1:
						return failed(1)
					case code == 2:
						return failed(0x7ffffeff)
					case code < 10:
						return failed(42)
					}
					return replied(le.AppendUint32(nil, code))
				},
			},
			{
				name: "loop", argsEnd: 8, req: 8, reply: 8, edges: loops,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(8).u(0, 8, uint64(r.IntN(30))-5) },
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					n := get[uint64](req, 0)
					var s uint64
					for i := range uint64(20) {
						if n+i == 13 {
							return failed(13)
						}
						s += (n + i) * 2
					}
					return replied(le.AppendUint64(nil, s))
				},
			},
			{
				name: "after_write", argsEnd: 8, req: 8, reply: 4,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).u(0, 1, uint64(r.IntN(256))).u(4, 4, uint64(r.IntN(2000)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					v := get[uint32](req, 4)
					put(rg[0], 4*int(req[0]%4), v)
					if v > 1000 {
						return failed(7)
					}
					return replied(le.AppendUint32(nil, v))
				},
			},
		},
	}
}

// The KV table of kv_get.naam and kv_put.naam.
const (
	kvBuckets = 1024
	kvBucket  = 96 // key 0..16, used 16, vlen 20, version 24, value 32..96
)

// kvKey returns a deterministic 16-byte key for n.
func kvKey(n uint64) []byte {
	return le.AppendUint64(le.AppendUint64(nil, n*0x9e37_79b9_7f4a_7c15), n^0x6b65_79)
}

// kvKeysWithHome returns count keys whose hash puts them first in bucket home.
func kvKeysWithHome(home uint64, count int) [][]byte {
	var keys [][]byte
	for n := uint64(1 << 40); len(keys) < count; n++ {
		if k := kvKey(n); fnv1a(k)%kvBuckets == home {
			keys = append(keys, k)
		}
	}
	return keys
}

// kvInsert puts key into the table as kv_put.naam does; it returns the
// probe or -1 when the 8 buckets are taken.
func kvInsert(table, key []byte, vlen uint32, value []byte) int {
	h := fnv1a(key)
	for probe := range uint64(8) {
		b := table[(h+probe)%kvBuckets*kvBucket:][:kvBucket]
		if b[16] == 0 || bytes.Equal(b[:16], key) {
			copy(b, key)
			b[16] = 1
			put(b, 20, vlen)
			copy(b[32:96], value)
			put(b, 24, get[uint64](b, 24)+1)
			return int(probe)
		}
	}
	return -1
}

// kvLookup finds key as kv_get.naam does: its bucket or nil.
func kvLookup(table, key []byte) []byte {
	h := fnv1a(key)
	for probe := range uint64(8) {
		b := table[(h+probe)%kvBuckets*kvBucket:][:kvBucket]
		if b[16] == 0 {
			return nil
		}
		if bytes.Equal(b[:16], key) {
			return b
		}
	}
	return nil
}

// kvGarbage fills the table with garbage, every bucket unused.
func kvGarbage(r *rand.Rand, table []byte) {
	copy(table, randBytes(r, len(table)))
	for i := range kvBuckets {
		table[i*kvBucket+16] = 0
	}
}

// kvOccupy marks buckets [from, to) used, with random keys.
func kvOccupy(r *rand.Rand, table []byte, from, to int) {
	for i := from; i < to; i++ {
		b := table[i%kvBuckets*kvBucket:][:kvBucket]
		copy(b, randBytes(r, 16))
		b[16] = 1
	}
}

func kvGetProgram() corpusProgram {
	var present [][]byte
	// A chain whose 8 buckets hold other keys: the 9th key is not found.
	fullChain := kvKeysWithHome(700, 9)
	wrap := kvKeysWithHome(1021, 4)
	return corpusProgram{
		file:    "kv_get.naam",
		regions: []uint64{kvBuckets * kvBucket},
		setup: func(r *rand.Rand, rg [][]byte) {
			t := rg[0]
			kvGarbage(r, t)
			present = nil
			for _, k := range fullChain[:8] {
				kvInsert(t, k, uint32(r.IntN(65)), randBytes(r, 64))
			}
			for _, k := range wrap {
				kvInsert(t, k, uint32(r.IntN(65)), randBytes(r, 64))
			}
			for n := range uint64(400) {
				k := kvKey(n + 100)
				if kvInsert(t, k, uint32(r.IntN(65)), randBytes(r, 64)) >= 0 {
					present = append(present, k)
				}
			}
			// An unused bucket holding the very key looked up: not found.
			if home := fnv1a(kvKey(5)) % kvBuckets; t[home*kvBucket+16] == 0 {
				copy(t[home*kvBucket:], kvKey(5))
			}
		},
		calls: func() []corpusCall {
			var calls []corpusCall
			for _, k := range slices.Concat(fullChain, wrap, [][]byte{kvKey(5), kvKey(99), kvKey(100), kvKey(499)}) {
				calls = append(calls, corpusCall{"get", k})
			}
			return calls
		},
		handlers: []corpusHandler{
			{
				name: "get", argsEnd: 16, req: 16, reply: 68,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					if r.IntN(3) > 0 {
						return present[r.IntN(len(present))]
					}
					return kvKey(1000 + r.Uint64N(1000))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					b := kvLookup(rg[0], req[:16])
					if b == nil {
						return failed(1)
					}
					return replied(slices.Concat(b[20:24], b[32:96]))
				},
			},
		},
		random: 500,
	}
}

func kvPutProgram() corpusProgram {
	full := kvKeysWithHome(500, 1)[0]     // 500..507 taken: FULL
	late := kvKeysWithHome(510, 1)[0]     // 510..515 taken: probe 6
	wrapped := kvKeysWithHome(1020, 1)[0] // 1020..1023 taken: bucket 0, probe 4
	pool := func(r *rand.Rand) []byte {
		switch r.IntN(10) {
		case 0:
			return [][]byte{full, late, wrapped}[r.IntN(3)]
		}
		return kvKey(r.Uint64N(60))
	}
	put := func(key []byte, vlen uint32, value []byte) []byte {
		return mk(84).raw(0, key).u(16, 4, uint64(vlen)).raw(20, value)
	}
	return corpusProgram{
		file:    "kv_put.naam",
		regions: []uint64{kvBuckets * kvBucket},
		setup: func(r *rand.Rand, rg [][]byte) {
			kvGarbage(r, rg[0])
			kvOccupy(r, rg[0], 500, 516)
			kvOccupy(r, rg[0], 1020, 1024)
		},
		calls: func() []corpusCall {
			v := bytes.Repeat([]byte{0xab}, 64)
			return []corpusCall{
				{"put", put(full, 1, v)}, {"get", full},
				{"put", put(late, 2, v)}, {"get", late}, {"put", put(late, 3, v)}, {"get", late},
				{"put", put(wrapped, 4, v)}, {"get", wrapped},
			}
		},
		handlers: []corpusHandler{
			{
				name: "put", argsEnd: 84, req: 84, reply: 4,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return put(pool(r), uint32(r.IntN(65)), randBytes(r, 64))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					probe := kvInsert(rg[0], req[:16], get[uint32](req, 16), req[20:84])
					if probe < 0 {
						return failed(4)
					}
					return replied(le.AppendUint32(nil, uint32(probe)))
				},
			},
			{
				name: "get", argsEnd: 16, req: 16, reply: 80,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return pool(r) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					b := kvLookup(rg[0], req[:16])
					if b == nil {
						return failed(1)
					}
					return replied(slices.Concat(b[20:24], make([]byte, 4), b[24:32], b[32:96]))
				},
			},
		},
		random: 500,
	}
}

func listWalkProgram() corpusProgram {
	const node, nodes, nilIdx = 24, 4096, 0xffff_ffff
	type list struct {
		head uint32
		keys []uint64
	}
	var lists []list
	return corpusProgram{
		file:    "list_walk.naam",
		regions: []uint64{nodes * node},
		setup: func(r *rand.Rand, rg [][]byte) {
			t := rg[0]
			copy(t, randBytes(r, len(t)))
			free := r.Perm(nodes)
			lists = nil
			// build links len nodes with keys; the last one's next is end.
			build := func(n int, end uint32, cycleTo int) list {
				idx := free[:n]
				free = free[n:]
				l := list{head: uint32(idx[0])}
				for i, x := range idx {
					k := r.Uint64()
					l.keys = append(l.keys, k)
					put(t, x*node, k)
					next := end
					if i+1 < n {
						next = uint32(idx[i+1])
					} else if cycleTo >= 0 {
						next = uint32(idx[cycleTo])
					}
					put(t, x*node+16, next)
				}
				return l
			}
			lists = append(lists,
				build(10, nilIdx, -1),
				build(63, nilIdx, -1),
				build(64, nilIdx, -1),
				build(65, nilIdx, -1),
				build(5, nilIdx, 1),  // a cycle
				build(3, 5000, -1),   // runs off the region
				build(1, nilIdx, -1), // one node
				build(2, 0x8000_0000, -1),
			)
			// a duplicate key: the first on the walk wins
			l := lists[0]
			put(t, int(l.head)*node, l.keys[3])
			lists[0].keys[0] = l.keys[3]
		},
		calls: func() []corpusCall {
			var calls []corpusCall
			req := func(head uint32, key uint64) []byte { return mk(16).u(0, 4, uint64(head)).u(8, 8, key) }
			for _, l := range lists {
				calls = append(calls,
					corpusCall{"lookup", req(l.head, l.keys[0])},
					corpusCall{"lookup", req(l.head, l.keys[len(l.keys)-1])},
					corpusCall{"lookup", req(l.head, ^l.keys[0])})
			}
			calls = append(calls, corpusCall{"lookup", req(nilIdx, 1)}, corpusCall{"lookup", req(nodes, 1)}, corpusCall{"lookup", req(nodes-1, 1)})
			return calls
		},
		handlers: []corpusHandler{
			{
				name: "lookup", argsEnd: 16, req: 16, reply: 8,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					l := lists[r.IntN(len(lists))]
					key := l.keys[r.IntN(len(l.keys))]
					if r.IntN(4) == 0 {
						key = r.Uint64()
					}
					return mk(16).u(0, 4, uint64(l.head)).u(8, 8, key)
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i, key := get[uint32](req, 0), get[uint64](req, 8)
					for range 64 {
						if i == nilIdx {
							return failed(2)
						}
						if i >= nodes {
							return failed(bytecode.FailIndexOutOfRange)
						}
						n := rg[0][int(i)*node:]
						if get[uint64](n, 0) == key {
							return replied(slices.Clone(n[8:16]))
						}
						i = get[uint32](n, 16)
					}
					return failed(3)
				},
			},
		},
	}
}

func binarySearchProgram() corpusProgram {
	const n = 1024
	sorted := func(rg [][]byte, i uint32) uint64 { return get[uint64](rg[0], 8*int(i)) }
	keyNear := func(r *rand.Rand, rg [][]byte) uint64 {
		k := sorted(rg, uint32(r.IntN(n)))
		switch r.IntN(4) {
		case 0:
			return k + 1
		case 1:
			return k - 1
		case 2:
			return edgy64(r)
		}
		return k
	}
	return corpusProgram{
		file:    "binary_search.naam",
		regions: []uint64{8 * n},
		setup: func(r *rand.Rand, rg [][]byte) {
			v := 1 + r.Uint64N(100)
			for i := range n {
				put(rg[0], 8*i, v)
				v += 1 + r.Uint64N(1<<50)
			}
		},
		calls: func() []corpusCall {
			var calls []corpusCall
			for _, k := range []uint64{0, 1, 1 << 62, ^uint64(0)} {
				calls = append(calls, corpusCall{"find", mk(8).u(0, 8, k)})
			}
			for _, p := range [][3]uint64{{0, 0, 1024}, {^uint64(0), 0, 1024}, {^uint64(0), 0, 5000}, {^uint64(0), 2000, 3000}, {^uint64(0), 10, 5}, {0, 1024, 1024}} {
				calls = append(calls, corpusCall{"count_below", mk(16).u(0, 8, p[0]).u(8, 4, p[1]).u(12, 4, p[2])})
			}
			return calls
		},
		handlers: []corpusHandler{
			{
				name: "find", argsEnd: 8, req: 8, reply: 8,
				gen: func(r *rand.Rand, rg [][]byte) []byte { return mk(8).u(0, 8, keyNear(r, rg)) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					key := get[uint64](req, 0)
					i, found := slices.BinarySearch(le64s(rg[0]), key)
					out := mk(8).u(0, 4, uint64(i))
					putBool(out, 4, found)
					return replied(out)
				},
			},
			{
				name: "count_below", argsEnd: 16, req: 16, reply: 4,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					from := uint32(r.IntN(1100))
					return mk(16).u(0, 8, keyNear(r, rg)).u(8, 4, uint64(from)).u(12, 4, uint64(from)+uint64(r.IntN(1100))-100)
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					key, from, to := get[uint64](req, 0), get[uint32](req, 8), get[uint32](req, 12)
					lo, hi := from, min(to, n)
					if lo > hi {
						return replied(le.AppendUint32(nil, 0))
					}
					for range 11 {
						if lo >= hi {
							break
						}
						mid := lo + (hi-lo)/2
						if sorted(rg, mid) < key {
							lo = mid + 1
						} else {
							hi = mid
						}
					}
					return replied(le.AppendUint32(nil, lo-from))
				},
			},
		},
	}
}

// le64s decodes little-endian u64s.
func le64s(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = get[uint64](b, 8*i)
	}
	return v
}

func histogramProgram() corpusProgram {
	addSamples := func(rg [][]byte, s []byte) {
		for _, x := range s {
			put(rg[0], 4*int(x>>4), get[uint32](rg[0], 4*int(x>>4))+1)
		}
	}
	addTotal := func(rg [][]byte, n uint64) uint64 {
		old := get[uint64](rg[1], 0)
		put(rg[1], 0, old+n)
		return old
	}
	skewed := func(r *rand.Rand, n int) []byte {
		b := randBytes(r, n)
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = 0x40 | b[i]&0xf
			}
		}
		return b
	}
	return corpusProgram{
		file:    "histogram.naam",
		regions: []uint64{64, 8},
		handlers: []corpusHandler{
			{
				name: "add", argsEnd: 32, req: 32, reply: 8,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return skewed(r, 32) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					addSamples(rg, req[:32])
					addTotal(rg, 32)
					var maxbin uint8
					var maxcount uint32
					for b := range uint8(16) {
						if c := get[uint32](rg[0], 4*int(b)); c > maxcount {
							maxcount, maxbin = c, b
						}
					}
					return replied(mk(8).u(0, 1, uint64(maxbin)).u(4, 4, uint64(maxcount)))
				},
			},
			{
				name: "add_n", argsEnd: 33, req: 33, reply: 8,
				edges: [][]byte{mk(33).u(32, 1, 0), mk(33).u(32, 1, 32), mk(33).u(32, 1, 33), mk(33).u(32, 1, 255)},
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(33).raw(0, skewed(r, 32)).u(32, 1, uint64(r.IntN(36)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					n := req[32]
					if n > 32 { // 32 samples counted, then the 33rd iteration fails
						addSamples(rg, req[:32])
						return failed(bytecode.FailLoopCap)
					}
					addSamples(rg, req[:n])
					return replied(le.AppendUint64(nil, addTotal(rg, uint64(n))+uint64(n)))
				},
			},
			{
				name: "reset", argsEnd: 0, req: 0, reply: 8,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					clear(rg[0])
					old := get[uint64](rg[1], 0)
					put(rg[1], 0, uint64(0))
					return replied(le.AppendUint64(nil, old))
				},
			},
		},
		pick: func(r *rand.Rand) int { return []int{0, 0, 0, 1, 1, 1, 2}[r.IntN(7)] },
	}
}

func bitsetProgram() corpusProgram {
	word := func(i uint16) int { return 8 * int(i>>6) }
	bit := func(r *rand.Rand) []byte {
		i := uint64(r.IntN(4096))
		if r.IntN(10) == 0 {
			i = uint64(r.IntN(65536))
		}
		return mk(2).u(0, 2, i)
	}
	change := func(op func(w, mask uint64) uint64, maskOf func(i uint16) uint64) func(req []byte, rg [][]byte) ([]byte, uint32) {
		return func(req []byte, rg [][]byte) ([]byte, uint32) {
			i := get[uint16](req, 0)
			if i>>6 >= 64 {
				return failed(bytecode.FailIndexOutOfRange)
			}
			mask := maskOf(i)
			old := get[uint64](rg[0], word(i))
			put(rg[0], word(i), op(old, mask))
			return replied([]byte{b2u[uint8](old&mask != 0)})
		}
	}
	lowMask := func(i uint16) uint64 { return 1 << (i & 63) }
	var edges [][]byte
	for _, i := range []uint64{0, 63, 64, 4095, 4096, 65535, 100} {
		edges = append(edges, mk(2).u(0, 2, i))
	}
	return corpusProgram{
		file:    "bitset.naam",
		regions: []uint64{512},
		setup: func(r *rand.Rand, rg [][]byte) {
			for range 300 {
				i := r.IntN(4096)
				rg[0][i/8] |= 1 << (i % 8)
			}
			clear(rg[0][8*20 : 8*30]) // an empty stretch for first
		},
		handlers: []corpusHandler{
			{
				name: "set", argsEnd: 2, req: 2, reply: 1, edges: edges, gen: func(r *rand.Rand, _ [][]byte) []byte { return bit(r) },
				ref: change(func(w, m uint64) uint64 { return w | m }, lowMask),
			},
			{
				name: "clear", argsEnd: 2, req: 2, reply: 1, edges: edges, gen: func(r *rand.Rand, _ [][]byte) []byte { return bit(r) },
				ref: change(func(w, m uint64) uint64 { return w &^ m }, lowMask),
			},
			{
				name: "toggle", argsEnd: 2, req: 2, reply: 1, edges: edges, gen: func(r *rand.Rand, _ [][]byte) []byte { return bit(r) },
				ref: change(func(w, m uint64) uint64 { return w ^ m }, func(i uint16) uint64 { return 1 << (i % 64) }),
			},
			{
				name: "test", argsEnd: 2, req: 2, reply: 1, edges: edges, gen: func(r *rand.Rand, _ [][]byte) []byte { return bit(r) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := get[uint16](req, 0)
					if i>>6 >= 64 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied([]byte{uint8(get[uint64](rg[0], word(i)) >> (i % 64) & 1)})
				},
			},
			{
				name: "count", argsEnd: 0, req: 0, reply: 4,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					var n uint32
					for _, w := range le64s(rg[0]) {
						n += uint32(popcount(w))
					}
					return replied(le.AppendUint32(nil, n))
				},
			},
			{
				name: "first", argsEnd: 2, req: 2, reply: 2,
				edges: [][]byte{mk(2).u(0, 2, 0), mk(2).u(0, 2, 8*64*20/8), mk(2).u(0, 2, 4095), mk(2).u(0, 2, 4096), mk(2).u(0, 2, 65535)},
				gen:   func(r *rand.Rand, _ [][]byte) []byte { return bit(r) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					for i := int(get[uint16](req, 0)); i < 4096; i++ {
						if rg[0][i/8]>>(i%8)&1 == 1 {
							return replied(le.AppendUint16(nil, uint16(i)))
						}
					}
					return replied(le.AppendUint16(nil, 0xffff))
				},
			},
		},
		random: 500,
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func checksumProgram() corpusProgram {
	var ns [][]byte
	for _, n := range []uint64{0, 1, 2, 511, 512, 513, 0xffff} {
		ns = append(ns, mk(2).u(0, 2, n))
	}
	return corpusProgram{
		file:    "checksum.naam",
		regions: []uint64{512},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 512))
			for i := 300; i < 400; i++ {
				rg[0][i] = 0xff // long runs of 0xff push the sums up
			}
		},
		handlers: []corpusHandler{
			{
				name: "inet", argsEnd: 64, req: 64, reply: 2,
				edges: [][]byte{mk(64), bytes.Repeat([]byte{0xff}, 64), bytes.Repeat([]byte{0xff, 0xfe}, 32)},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					var sum uint32
					for i := range 32 {
						sum += uint32(req[2*i])<<8 | uint32(req[2*i+1])
					}
					for range 2 {
						sum = sum&0xffff + sum>>16
					}
					return replied(le.AppendUint16(nil, ^uint16(sum)))
				},
			},
			{
				name: "adler", argsEnd: 2, req: 2, reply: 4, edges: ns,
				gen: func(r *rand.Rand, _ [][]byte) []byte { return mk(2).u(0, 2, uint64(r.IntN(530))) },
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					n := get[uint16](req, 0)
					if n > 512 {
						return failed(bytecode.FailLoopCap)
					}
					a, b := uint32(1), uint32(0)
					for i := range int(n) {
						a = (a + uint32(rg[0][i])) % 65521
						b = (b + a) % 65521
					}
					return replied(le.AppendUint32(nil, b<<16|a))
				},
			},
			{
				name: "xor8", argsEnd: 0, req: 0, reply: 8, edges: [][]byte{{}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					var x uint64
					for _, w := range le64s(rg[0]) {
						x ^= w
					}
					return replied(le.AppendUint64(nil, x))
				},
			},
		},
		random: 100,
	}
}

func crc32Program() corpusProgram {
	var regionEdges [][]byte
	for _, p := range [][2]uint64{{0, 0}, {0, 64}, {0, 65}, {192, 64}, {193, 64}, {255, 1}, {256, 0}, {256, 1}, {0xffff, 2}, {100, 17}} {
		regionEdges = append(regionEdges, mk(4).u(0, 2, p[0]).u(2, 2, p[1]))
	}
	return corpusProgram{
		file:    "crc32.naam",
		regions: []uint64{256},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 256)) },
		handlers: []corpusHandler{
			{
				name: "crc_req", argsEnd: 16, req: 16, reply: 4,
				edges: [][]byte{mk(16), bytes.Repeat([]byte{0xff}, 16), []byte("123456789abcdefg")},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint32(nil, crc32.ChecksumIEEE(req[:16])))
				},
			},
			{
				name: "crc_region", argsEnd: 4, req: 4, reply: 4, edges: regionEdges,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(4).u(0, 2, uint64(r.IntN(280))).u(2, 2, uint64(r.IntN(70)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					off, n := get[uint16](req, 0), get[uint16](req, 2)
					var data []byte
					for i := range n {
						if i == 64 { // max 64
							return failed(bytecode.FailLoopCap)
						}
						idx := off + i
						if idx >= 256 {
							return failed(bytecode.FailIndexOutOfRange)
						}
						data = append(data, rg[0][idx])
					}
					return replied(le.AppendUint32(nil, crc32.ChecksumIEEE(data)))
				},
			},
		},
	}
}

func ringBufferProgram() corpusProgram {
	const capacity = 16
	return corpusProgram{
		file:    "ring_buffer.naam",
		regions: []uint64{136},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 136))
			put(rg[0], 0, uint32(0xffff_fff8)) // head and tail wrap at 2^32 soon
			put(rg[0], 4, uint32(0xffff_fff8))
		},
		handlers: []corpusHandler{
			{
				name: "push", argsEnd: 8, req: 8, reply: 4,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					head, tail := get[uint32](rg[0], 0), get[uint32](rg[0], 4)
					n := tail - head
					if n >= capacity {
						return failed(1)
					}
					copy(rg[0][8+8*int(tail%capacity):], req[:8])
					put(rg[0], 4, tail+1)
					return replied(le.AppendUint32(nil, n+1))
				},
			},
			{
				name: "pop", argsEnd: 0, req: 0, reply: 8,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					head, tail := get[uint32](rg[0], 0), get[uint32](rg[0], 4)
					if head == tail {
						return failed(2)
					}
					v := slices.Clone(rg[0][8+8*int(head%capacity):][:8])
					put(rg[0], 0, head+1)
					return replied(v)
				},
			},
			{
				name: "peek_all", argsEnd: 0, req: 0, reply: 136,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					head, tail := get[uint32](rg[0], 0), get[uint32](rg[0], 4)
					n := tail - head
					out := mk(136).u(0, 4, uint64(n))
					for i := range uint32(capacity) {
						if i < n {
							copy(out[8+8*i:], rg[0][8+8*int((head+i)%capacity):][:8])
						}
					}
					return replied(out)
				},
			},
		},
		// Phases of mostly pushes and mostly pops fill and drain the ring.
		pick: func(r *rand.Rand) int {
			x := r.IntN(10)
			switch {
			case x < 5:
				return 0
			case x < 9:
				return 1
			}
			return 2
		},
		random: 600,
	}
}

func stateMachineProgram() corpusProgram {
	parse := func(text []byte) ([]byte, uint32) {
		const start, sign, digits, trail = 0, 1, 2, 3
		state := start
		neg := false
		var value int64
		var consumed uint8
		for i, c := range text[:16] {
			if c == 0 {
				break
			}
			consumed = uint8(i + 1)
			if state == start {
				if c == ' ' {
					continue
				}
				if c == '-' || c == '+' {
					neg = c == '-'
					state = sign
					continue
				}
			}
			if state == start || state == sign || state == digits {
				if c >= '0' && c <= '9' {
					value = value*10 + int64(c-'0')
					state = digits
					continue
				}
			}
			if (state == digits || state == trail) && c == ' ' {
				state = trail
				continue
			}
			return failed(5)
		}
		if state != digits && state != trail {
			return failed(6)
		}
		if neg {
			value = -value
		}
		return replied(mk(16).s(0, 8, value).u(8, 1, uint64(consumed)))
	}
	text := func(s string) []byte { return mk(16).raw(0, []byte(s)) }
	var texts [][]byte
	for _, s := range []string{"", "   ", "-", "+5", "  -123  ", "12 3", "0", "9999999999999999", "- 5", "5-", "-0", "+-1", "42\x00garbage", "  7", "x"} {
		texts = append(texts, text(s))
	}
	return corpusProgram{
		file:    "state_machine.naam",
		regions: []uint64{64, 256},
		handlers: []corpusHandler{
			{
				name: "parse", argsEnd: 16, req: 16, reply: 16, edges: texts,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					const alphabet = "     +-0123456789012345678901234567890123456789x"
					b := mk(16)
					n := r.IntN(17)
					for i := range n {
						b[i] = alphabet[r.IntN(len(alphabet))]
					}
					if r.IntN(2) == 0 { // mostly well formed
						s := fmt.Sprintf("%*d", r.IntN(6), r.Int64N(1e12)-5e11)
						b = text(s)
					}
					return b
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) { return parse(req) },
			},
			{
				name: "event", argsEnd: 2, req: 2, reply: 1,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					ev := r.IntN(5)
					if r.IntN(20) == 0 {
						ev = 5 + r.IntN(251)
					}
					return mk(2).u(0, 1, uint64(r.IntN(8))+uint64(64*r.IntN(4))).u(1, 1, uint64(ev))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					c, ev := int(req[0]%64), req[1]
					s := rg[0][c]
					next := s
					switch {
					case ev == 4:
						next = 0
					case s == 0 && ev == 0:
						next = 1
					case s == 1 && ev == 1:
						next = 2
					case s == 2 && ev == 2:
						put(rg[1], 4*c, get[uint32](rg[1], 4*c)+1)
					case s == 2 && ev == 3:
						next = 3
					case s == 3 && ev == 1:
						next = 0
					default:
						return failed(7)
					}
					rg[0][c] = next
					return replied([]byte{next})
				},
			},
		},
		random: 600,
	}
}

func numberTheoryProgram() corpusProgram {
	var gcds [][]byte
	fibs := []uint64{1, 1}
	for len(fibs) < 94 {
		fibs = append(fibs, fibs[len(fibs)-1]+fibs[len(fibs)-2])
	}
	for _, p := range [][2]uint64{{0, 0}, {0, 5}, {5, 0}, {12, 18}, {fibs[92], fibs[91]}, {fibs[93], fibs[92]}, {^uint64(0), ^uint64(0) - 1}, {1 << 63, 1 << 62}} {
		gcds = append(gcds, mk(16).u(0, 8, p[0]).u(8, 8, p[1]))
	}
	var fibEdges [][]byte
	for _, n := range []uint64{0, 1, 2, 92, 93, 94, 199, 200, 201, 255} {
		fibEdges = append(fibEdges, mk(1).u(0, 1, n))
	}
	var pows [][]byte
	for _, p := range [][3]uint64{{2, 10, 1000}, {0, 0, 1}, {0, 0, 7}, {5, 3, 0}, {0xffff_ffff, 0xffff_ffff, 0xffff_ffff}, {0xffff_fffe, 0xffff_ffff, 0xffff_fffb}, {3, 0, 2}} {
		pows = append(pows, mk(12).u(0, 4, p[0]).u(4, 4, p[1]).u(8, 4, p[2]))
	}
	var sqrts [][]byte
	for _, x := range []uint64{0, 1, 2, 3, 4, 15, 16, 17, 1 << 62, ^uint64(0), 0xffff_fffe_0000_0001, 0xffff_fffe_0000_0000} {
		sqrts = append(sqrts, mk(8).u(0, 8, x))
	}
	return corpusProgram{
		file: "number_theory.naam",
		handlers: []corpusHandler{
			{
				name: "gcd", argsEnd: 16, req: 16, reply: 16, edges: gcds,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					k := r.Uint64N(1000) + 1
					return mk(16).u(0, 8, k*r.Uint64N(1<<40)).u(8, 8, k*r.Uint64N(1<<40))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, y := get[uint64](req, 0), get[uint64](req, 8)
					var steps uint32
					for range 100 {
						if y == 0 {
							break
						}
						x, y = y, x%y
						steps++
					}
					return replied(mk(16).u(0, 8, x).u(8, 4, uint64(steps)))
				},
			},
			{
				name: "fib", argsEnd: 1, req: 1, reply: 8, edges: fibEdges,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					n := req[0]
					if n > 200 {
						return failed(bytecode.FailLoopCap)
					}
					var a, b uint64 = 0, 1
					for range n {
						a, b = b, a+b
					}
					return replied(le.AppendUint64(nil, a))
				},
			},
			{
				name: "pow_mod", argsEnd: 12, req: 12, reply: 4, edges: pows,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					base, exp, m := get[uint32](req, 0), get[uint32](req, 4), uint64(get[uint32](req, 8))
					if m == 0 {
						return failed(1)
					}
					r, b, e := 1%m, uint64(base)%m, exp
					for range 32 {
						if e&1 == 1 {
							r = r * b % m
						}
						b = b * b % m
						e >>= 1
					}
					return replied(le.AppendUint32(nil, uint32(r)))
				},
			},
			{
				name: "isqrt", argsEnd: 8, req: 8, reply: 8, edges: sqrts,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint64](req, 0)
					var r uint64
					for k := range 32 {
						c := r | 1<<(31-k)
						if c*c <= x {
							r = c
						}
					}
					return replied(le.AppendUint64(nil, r))
				},
			},
		},
	}
}

func bitTricksProgram() corpusProgram {
	var tricks, signs [][]byte
	for _, x := range []uint64{0, 1, 0x8000_0000_0000_0000, ^uint64(0), 0x0123_4567_89ab_cdef, 0x8000_0000, 0x1_0000_0000} {
		for _, n := range []uint64{0, 1, 31, 32, 33, 63, 64, 65, 255} {
			tricks = append(tricks, mk(16).u(0, 8, x).u(8, 1, n))
		}
	}
	for _, a := range []int64{0, 1, -1, -1 << 63, 1<<63 - 1, -5} {
		for _, b := range []int64{0, 1, -1, -1 << 31, 1<<31 - 1} {
			signs = append(signs, mk(16).s(0, 8, a).s(8, 4, b))
		}
	}
	return corpusProgram{
		file: "bit_tricks.naam",
		handlers: []corpusHandler{
			{
				name: "tricks", argsEnd: 9, req: 16, reply: 48, edges: tricks,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, n := get[uint64](req, 0), uint64(req[8])
					x32, n32 := uint32(x), uint32(n)
					out := make([]byte, 48)
					put(out, 0, x<<(n%64)|x>>((64-n)%64))
					put(out, 8, x32>>(n32%32)|x32<<((32-n32)%32))
					put(out, 16, bits.ReverseBytes64(x))
					put(out, 24, uint32(bits.LeadingZeros64(x)))
					put(out, 28, uint32(bits.TrailingZeros32(x32)))
					putBool(out, 32, bits.OnesCount64(x)%2 == 1)
					put(out, 34, bits.Reverse16(uint16(x)))
					put(out, 40, x&-x)
					return replied(out)
				},
			},
			{
				name: "signs", argsEnd: 12, req: 16, reply: 32, edges: signs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[int64](req, 0), get[int32](req, 8)
					mask := a >> 63
					out := make([]byte, 32)
					put(out, 0, (a^mask)-mask)
					put(out, 8, b2u[int32](b > 0)-b2u[int32](b < 0))
					put(out, 16, mask)
					putBool(out, 24, a^int64(b) >= 0)
					return replied(out)
				},
			},
		},
	}
}

func matrixProgram() corpusProgram {
	m := func(b []byte, i, j int) int32 { return get[int32](b, 16*i+4*j) }
	return corpusProgram{
		file: "matrix.naam",
		handlers: []corpusHandler{
			{
				name: "mul", argsEnd: 128, req: 128, reply: 64,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 64)
					for i := range 4 {
						for j := range 4 {
							var s int32
							for k := range 4 {
								s += m(req, i, k) * m(req[64:], k, j)
							}
							put(out, 16*i+4*j, s)
						}
					}
					return replied(out)
				},
			},
			{
				name: "transpose", argsEnd: 64, req: 64, reply: 72,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					out := make([]byte, 72)
					var trace int64
					for i := range 4 {
						for j := range 4 {
							put(out, 16*i+4*j, m(req, j, i))
						}
						trace += int64(m(req, i, i))
					}
					put(out, 64, trace)
					return replied(out)
				},
			},
		},
		random: 100,
	}
}

func minmaxProgram() corpusProgram {
	var windows [][]byte
	for _, p := range [][2]uint64{{0, 0}, {0, 64}, {0, 65}, {136, 64}, {137, 64}, {199, 1}, {200, 1}, {255, 0}, {255, 64}} {
		windows = append(windows, mk(2).u(0, 1, p[0]).u(1, 1, p[1]))
	}
	return corpusProgram{
		file:    "minmax.naam",
		regions: []uint64{800, 400},
		setup: func(r *rand.Rand, rg [][]byte) {
			for i := range 100 {
				put(rg[0], 8*i, edgy64(r))
			}
			put(rg[0], 8*40, uint64(1<<63)) // the minimum, twice
			put(rg[0], 8*70, uint64(1<<63))
			copy(rg[1], randBytes(r, 400))
		},
		handlers: []corpusHandler{
			{
				name: "reduce", argsEnd: 0, req: 0, reply: 40, edges: [][]byte{{}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					v := func(i int) int64 { return get[int64](rg[0], 8*i) }
					mn, mx, sum := v(0), v(0), int64(0)
					var imin, imax uint32
					for i := range 100 {
						if v(i) < mn {
							mn, imin = v(i), uint32(i)
						}
						if v(i) > mx {
							mx, imax = v(i), uint32(i)
						}
						sum += v(i)
					}
					return replied(mk(40).s(0, 8, mn).s(8, 8, mx).u(16, 4, uint64(imin)).u(20, 4, uint64(imax)).s(24, 8, sum).s(32, 8, sum/100))
				},
			},
			{
				name: "window", argsEnd: 2, req: 2, reply: 6, edges: windows,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(2).u(0, 1, uint64(r.IntN(256))).u(1, 1, uint64(r.IntN(70)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					from, n := int(req[0]), int(req[1])
					lo, hi := uint16(0xffff), uint16(0)
					for i := range n {
						if i == 64 { // max 64
							return failed(bytecode.FailLoopCap)
						}
						if from+i >= 200 {
							return failed(bytecode.FailIndexOutOfRange)
						}
						v := get[uint16](rg[1], 2*(from+i))
						lo, hi = min(lo, v), max(hi, v)
					}
					return replied(mk(6).u(0, 2, uint64(lo)).u(2, 2, uint64(hi)).u(4, 2, uint64(hi-lo)))
				},
			},
		},
	}
}

func sortProgram() corpusProgram {
	return corpusProgram{
		file: "sort.naam",
		handlers: []corpusHandler{
			{
				name: "insertion", argsEnd: 48, req: 48, reply: 48,
				edges: [][]byte{mk(48), bytes.Repeat([]byte{0xff}, 48)},
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					b := mk(48)
					for i := range 12 {
						v := r.Uint32()
						if r.IntN(2) == 0 {
							v = uint32(r.IntN(5)) // duplicates
						}
						b.u(4*i, 4, uint64(v))
					}
					return b
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					v := make([]uint32, 12)
					for i := range v {
						v[i] = get[uint32](req, 4*i)
					}
					slices.Sort(v)
					out := make([]byte, 48)
					for i, x := range v {
						put(out, 4*i, x)
					}
					return replied(out)
				},
			},
			{
				name: "bubble", argsEnd: 20, req: 20, reply: 24,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					s := make([]int16, 10)
					for i := range s {
						s[i] = get[int16](req, 2*i)
					}
					var swaps uint32
					for range 10 {
						changed := false
						for i := range 9 {
							if s[i] > s[i+1] {
								s[i], s[i+1] = s[i+1], s[i]
								swaps++
								changed = true
							}
						}
						if !changed {
							break
						}
					}
					out := make([]byte, 24)
					for i, x := range s {
						put(out, 2*i, x)
					}
					put(out, 20, swaps)
					return replied(out)
				},
			},
		},
		random: 200,
	}
}

func localsProgram() corpusProgram {
	return corpusProgram{
		file: "locals.naam",
		handlers: []corpusHandler{
			{
				name: "prefix", argsEnd: 8, req: 8, reply: 88,
				edges: [][]byte{mk(8), mk(8).u(0, 8, ^uint64(0))},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					seed := get[uint64](req, 0)
					var buf [32]uint64
					x := seed
					for i := range 32 {
						x = x*6364136223846793005 + 1442695040888963407
						buf[i] = x >> 33
					}
					for i := 1; i < 32; i++ {
						buf[i] += buf[i-1]
					}
					out := make([]byte, 88)
					for i := range 8 {
						put(out, 8*i, buf[i*4+3])
					}
					for i := range 16 {
						out[64+i] = uint8(seed >> (4 * (15 - i)))
					}
					put(out, 80, x^buf[31])
					return replied(out)
				},
			},
		},
		random: 100,
	}
}

func refsProgram() corpusProgram {
	entry := func(rg [][]byte, i uint8) []byte { return rg[0][16*int(i%16):][:16] }
	return corpusProgram{
		file:    "refs.naam",
		regions: []uint64{256},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 256)) },
		handlers: []corpusHandler{
			{
				name: "touch", argsEnd: 8, req: 8, reply: 24,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					key := req[:8]
					e := entry(rg, key[0])
					count := get[uint64](e, 8) + 1
					put(e, 8, count)
					out := mk(24).u(0, 8, count).u(8, 1, uint64(1+e[0]))
					for i := range 8 {
						out[9+i] = key[1] + uint8(i)
					}
					return replied(out)
				},
			},
			{
				name: "store", argsEnd: 9, req: 9, reply: 8,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					e := entry(rg, req[0])
					for i := range 8 {
						e[i] = req[8] + uint8(i)
					}
					c := get[uint64](e, 8)*2 + 1
					put(e, 8, c)
					return replied(le.AppendUint64(nil, c))
				},
			},
		},
	}
}

func multiRegionProgram() corpusProgram {
	apply := func(rg [][]byte) int64 {
		if rg[0][8] == 0 {
			return 0
		}
		scale, offset := int64(get[uint32](rg[0], 0)), int64(get[int32](rg[0], 4))
		var total int64
		for i := range 8 {
			v := int64(get[uint32](rg[1], 4*i))*scale*int64(get[int16](rg[2], 2*i)) + offset
			put(rg[3], 8*i, v)
			total += v
		}
		put(rg[4], 0, get[uint64](rg[4], 0)+1)
		return total
	}
	return corpusProgram{
		file:    "multi_region.naam",
		regions: []uint64{12, 32, 16, 64, 8},
		setup: func(r *rand.Rand, rg [][]byte) {
			put(rg[0], 0, r.Uint32())
			put(rg[0], 4, int32(r.Uint32()))
			rg[0][8] = 1
			copy(rg[1], randBytes(r, 32))
			copy(rg[2], randBytes(r, 16))
			copy(rg[3], randBytes(r, 64))
			put(rg[4], 0, uint64(1000))
		},
		handlers: []corpusHandler{
			{
				name: "apply", argsEnd: 0, req: 0, reply: 8, edges: [][]byte{{}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					return replied(le.AppendUint64(nil, uint64(apply(rg))))
				},
			},
			{
				name: "read", argsEnd: 1, req: 1, reply: 24,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i := int(req[0] % 8)
					out := mk(24).raw(0, rg[3][8*i:8*i+8]).raw(8, rg[1][4*i:4*i+4]).raw(12, rg[2][2*i:2*i+2]).raw(16, rg[4][:8])
					return replied(out)
				},
			},
		},
		random: 60,
	}
}

func shadowingProgram() corpusProgram {
	return corpusProgram{
		file: "shadowing.naam",
		handlers: []corpusHandler{
			{
				name: "shadow", argsEnd: 4, req: 4, reply: 12,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint32](req, 0)
					y := x + 1
					z := y + x*2
					a := z + y
					var b uint32
					for y := range uint32(3) {
						b += y + y*10
					}
					return replied(mk(12).u(0, 4, uint64(a)).u(4, 4, uint64(b)).u(8, 4, uint64(x^0xffff)))
				},
			},
		},
		random: 60,
	}
}

func pow2Program() corpusProgram {
	var unsigned, signed, compound [][]byte
	for _, a := range widthEdges(64) {
		unsigned = append(unsigned, mk(16).u(0, 8, a).u(8, 4, a).u(12, 2, a).u(14, 1, a))
		signed = append(signed, mk(16).u(0, 8, a).u(8, 4, a).u(12, 2, a).u(14, 1, a))
	}
	for _, a := range []uint64{0, 1, 7, 0x8000_0000, 0xffff_ffff, 0x1234_5678} {
		for _, s := range []int64{0, -1, -7, -8, -9, 7, -1 << 31, 1<<31 - 1} {
			compound = append(compound, mk(8).u(0, 4, a).s(4, 4, s))
		}
	}
	return corpusProgram{
		file: "pow2.naam",
		handlers: []corpusHandler{
			{
				name: "unsigned", argsEnd: 15, req: 16, reply: 128, edges: unsigned,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b, c, d := get[uint64](req, 0), get[uint32](req, 8), get[uint16](req, 12), req[14]
					out := make([]byte, 128)
					for i, v := range []uint64{a * 8, a / 16, a % 32, a / 0x1_0000_0000, a % 0x8000_0000_0000_0000, a / 0x8000_0000_0000_0000,
						uint64(b * 4), uint64(b / 0x8000_0000), uint64(b % 0x1_0000), uint64(c * 256), uint64(c / 2),
						uint64(d * 2), uint64(d % 128), uint64(d), a, 0} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "signed", argsEnd: 15, req: 16, reply: 112, edges: signed,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b, c, d := get[int64](req, 0), get[int32](req, 8), get[int16](req, 12), int8(req[14])
					out := make([]byte, 112)
					for i, v := range []int64{a * 8, a / 16, a % 32, a / 0x1_0000_0000, a % 2, a / -4,
						int64(b / 4), int64(b % 8), int64(b * 0x4000_0000), int64(c / 256), int64(c % 2),
						int64(d / 64), int64(d % 64), int64(d * 64)} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "compound", argsEnd: 8, req: 8, reply: 8, edges: compound,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, y := get[uint32](req, 0), get[int32](req, 4)
					x = x * 16 / 4 % 1024
					y = y / 8 * 4 % 16
					return replied(mk(8).u(0, 4, uint64(x)).s(4, 4, int64(y)))
				},
			},
		},
	}
}

func immediatesProgram() corpusProgram {
	vals := []uint64{0, 1, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, 0xffff_ffff, 0x1_0000_0000, 0xffff_ffff_8000_0000,
		0xffff_ffff_7fff_ffff, 0x8000_0000_0000_0000, ^uint64(0), ^uint64(0) - 1, 0xffff_ffff_0000_0000}
	var v8, v4 [][]byte
	for _, v := range vals {
		v8 = append(v8, mk(8).u(0, 8, v))
		v4 = append(v4, mk(4).u(0, 4, v))
	}
	return corpusProgram{
		file: "immediates.naam",
		handlers: []corpusHandler{
			{
				name: "u64ops", argsEnd: 8, req: 8, reply: 96, edges: v8,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint64](req, 0)
					out := make([]byte, 96)
					for i, v := range []uint64{x + 0x8000_0000, x & 0x8000_0000, x | 0xffff_ffff, x ^ 0x7fff_ffff, x * 0x8000_0001,
						x - 0xffff_ffff_ffff_ffff, x & 0xffff_ffff, x ^ 0xffff_ffff_8000_0000, x + 0x1_0000_0000,
						x & 0xffff_ffff_0000_0000, x | 0x8000_0000_0000_0000,
						b2u[uint64](x > 0x8000_0000) + b2u[uint64](x == 0xffff_ffff)*2 + b2u[uint64](x < 0xffff_ffff_8000_0000)*4} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "u32ops", argsEnd: 4, req: 4, reply: 32, edges: v4,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[uint32](req, 0)
					out := make([]byte, 32)
					for i, v := range []uint32{x & 0x8000_0000, x + 0xffff_ffff, x ^ 0xffff_ffff, x | 0x8000_0001, x * 0xffff_fffe,
						x - 0x8000_0000, b2u[uint32](x >= 0x8000_0000), x / 0xffff_ffff} {
						put(out, 4*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "i64ops", argsEnd: 8, req: 8, reply: 64, edges: v8,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[int64](req, 0)
					out := make([]byte, 64)
					for i, v := range []int64{x + -0x8000_0000, x & -0x8000_0001, x * -1, x / -0x8000_0000, x % 0x7fff_ffff,
						x ^ -1, b2u[int64](x < -0x8000_0000), b2u[int64](x > 0x7fff_ffff)} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "i32ops", argsEnd: 4, req: 4, reply: 24, edges: v4,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x := get[int32](req, 0)
					minI32 := int32(-0x8000_0000)
					out := make([]byte, 24)
					for i, v := range []int32{x & minI32, x + 0x7fff_ffff, x / -1, x % minI32, b2u[int32](x > -2), x * minI32} {
						put(out, 4*i, v)
					}
					return replied(out)
				},
			},
		},
	}
}

func canonicalProgram() corpusProgram {
	tbl := func(rg [][]byte, i int) uint32 { return get[uint32](rg[0], 4*i) }
	var b8, b16, b32 [][]byte
	e8 := []uint64{0, 1, 2, 0x7f, 0x80, 0x81, 0xfe, 0xff, 100, 156}
	for _, a := range e8 {
		for _, b := range e8 {
			b8 = append(b8, mk(2).u(0, 1, a).u(1, 1, b))
		}
	}
	e16 := []uint64{0, 1, 0x7fff, 0x8000, 0xffff, 0x100, 0x80}
	for _, a := range e16 {
		for _, b := range e16 {
			b16 = append(b16, mk(4).u(0, 2, a).u(2, 2, b))
		}
	}
	e32 := []uint64{0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0000, 0x800, 7}
	for _, a := range e32 {
		for _, b := range e32 {
			b32 = append(b32, mk(8).u(0, 4, a).u(4, 4, b))
		}
	}
	return corpusProgram{
		file:    "canonical.naam",
		regions: []uint64{1024},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 1024)) },
		handlers: []corpusHandler{
			{
				name: "u8s", argsEnd: 2, req: 2, reply: 80, edges: b8,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := req[0], req[1]
					s, m, n, c, l := a+b, a*b, -a, ^a, a<<5
					out := make([]byte, 80)
					for i, v := range []uint64{uint64(s), b2u[uint64](s > 100), uint64(m / 3), uint64(n >> 1), uint64(c),
						uint64(l >> 5), uint64(tbl(rg, int(s))), b2u[uint64](s == m), uint64(a - b), uint64(uint16(c) + 1)} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "i8s", argsEnd: 2, req: 2, reply: 72, edges: b8,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := int8(req[0]), int8(req[1])
					s, m, n, c, l := a+b, a*b, -a, ^a, a<<5
					out := make([]byte, 72)
					for i, v := range []int64{int64(s), b2u[int64](s < 0), int64(m / 3), int64(n >> 1), int64(c), int64(l >> 5),
						int64(uint8(s)), b2u[int64](s == m), int64(uint64(s) >> 60)} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "u16s", argsEnd: 4, req: 4, reply: 48, edges: b16,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint16](req, 0), get[uint16](req, 2)
					s, m, c, l := a+b, a*b, ^a, a<<9
					out := make([]byte, 48)
					for i, v := range []uint64{uint64(s), b2u[uint64](s > 0x8000), uint64(m % 1000), uint64(c), uint64(l >> 9), uint64(s-m) >> 8} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "i32s", argsEnd: 8, req: 8, reply: 56, edges: b32,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[int32](req, 0), get[int32](req, 4)
					s, m, n, l := a+b, a*b, -a, a<<20
					out := make([]byte, 56)
					for i, v := range []int64{int64(s), b2u[int64](s < 0), int64(m / 7), int64(n >> 3), int64(l >> 20), int64(uint32(s)), int64(m % -5)} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
			{
				name: "u32s", argsEnd: 8, req: 8, reply: 48, edges: b32,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					s, m, c, l := a+b, a*b, ^a, a<<20
					out := make([]byte, 48)
					for i, v := range []uint64{uint64(s), b2u[uint64](s > 0x8000_0000), uint64(m / 7), uint64(c), uint64(l >> 20), uint64(tbl(rg, int(s%256)))} {
						put(out, 8*i, v)
					}
					return replied(out)
				},
			},
		},
	}
}

func bigValuesProgram() corpusProgram {
	const big = 168
	el := func(rg [][]byte, i uint8) []byte { return rg[0][int(i%4)*big:][:big] }
	return corpusProgram{
		file:    "big_values.naam",
		regions: []uint64{4 * big, 600},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, len(rg[0])))
			copy(rg[0][2*big:2*big+160], rg[0][0:160]) // bigs[2].data == bigs[0].data
			copy(rg[0][1*big:1*big+159], rg[0][0:159]) // bigs[1].data differs from bigs[0].data in its last byte
			copy(rg[1], randBytes(r, 300))
			copy(rg[1][300:], rg[1][:299]) // blobs differ in their last byte
		},
		handlers: []corpusHandler{
			{
				name: "move", argsEnd: 2, req: 2, reply: big,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a := el(rg, req[0])
					old := slices.Clone(a)
					copy(a, el(rg, req[1]))
					return replied(old)
				},
			},
			{
				name: "eq", argsEnd: 2, req: 2, reply: 3,
				edges: [][]byte{{0, 2}, {0, 1}, {1, 2}, {3, 3}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := el(rg, req[0]), el(rg, req[1])
					out := make([]byte, 3)
					putBool(out, 0, bytes.Equal(a[:160], b[:160]))
					putBool(out, 1, bytes.Equal(rg[1][:300], rg[1][300:]))
					putBool(out, 2, bytes.Equal(a[160:164], b[160:164]))
					return replied(out)
				},
			},
			{
				name: "local", argsEnd: 1, req: 1, reply: 8,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					b := el(rg, req[0])
					last := get[uint64](b, 152) + 1
					tag := get[uint32](b, 160) ^ 1
					return replied(le.AppendUint64(nil, last+uint64(tag)+1000))
				},
			},
			{
				name: "store", argsEnd: 176, req: 176, reply: 4,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					copy(el(rg, req[0]), req[8:176])
					return replied(slices.Clone(req[168:172]))
				},
			},
		},
		random: 200,
	}
}

func registerPressureProgram() corpusProgram {
	return corpusProgram{
		file:    "register_pressure.naam",
		regions: []uint64{512},
		setup:   func(r *rand.Rand, rg [][]byte) { copy(rg[0], randBytes(r, 512)) },
		handlers: []corpusHandler{
			{
				name: "many", argsEnd: 16, req: 16, reply: 32,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					a, b := get[uint64](req, 0), get[uint64](req, 8)
					x0, x1, x2, x3, x4, x5 := a, b, a^b, a+b, a*3, b*5
					x6, x7, x8, x9, x10, x11 := a>>7, b<<3, a|0x55, b&0xff00, a-b, ^a
					for i := range uint64(8) {
						h := fnv1a(le.AppendUint64(nil, x3))
						x0 += h ^ x11
						x1 ^= x0 + i
						x2 = x2*31 + x1
						x3 += x2 >> 3
						x4 ^= x3
						x5 += x4 * i
						x6 = x6 + x5 + h
						x7 ^= x6 << 1
						x8 += x7
						x9 = x9 ^ x8 ^ i
						x10 -= x9
						x11 += x10 | 1
					}
					out := make([]byte, 32)
					put(out, 0, x0^x1^x2)
					put(out, 8, x3+x4+x5)
					put(out, 16, x6^x7^x8)
					put(out, 24, x9+x10+x11)
					return replied(out)
				},
			},
			{
				name: "nested_calls", argsEnd: 8, req: 8, reply: 8,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					acc := get[uint64](req, 0)
					for i := range uint64(3) {
						for j := range uint64(3) {
							for k := range uint64(3) {
								buf := le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, i), j), k^acc)
								acc = acc*7 + fnv1a(buf)
							}
						}
					}
					return replied(le.AppendUint64(nil, acc))
				},
			},
			{
				name: "capped", argsEnd: 16, req: 16, reply: 24,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(16).u(0, 1, uint64(r.IntN(19))).u(8, 8, r.Uint64())
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					n, a := req[0], get[uint64](req, 8)
					table := func(i uint64) uint64 { return get[uint64](rg[0], 8*int(i)) }
					x0, x1, x2, x3, x4, x5, x6, x7 := a, a*3, a^0x5a5a, a>>3, a+11, ^a, a<<2, a|1
					for i := range uint64(n) {
						if i == 16 { // max 16
							return failed(bytecode.FailLoopCap)
						}
						h := fnv1a(le.AppendUint64(nil, x0))
						j := (h ^ x1) % 80
						if j >= 64 {
							return failed(bytecode.FailIndexOutOfRange)
						}
						x0 += table(j) ^ x7
						x1 ^= x0 + i
						x2 = x2*5 + x1
						x3 += table((x2 >> 7) % 64)
						x4 ^= x3 + h
						x5 += x4
						x6 = x6 ^ x5 ^ i
						x7 += x6 | 1
					}
					out := make([]byte, 24)
					put(out, 0, x0^x1^x2)
					put(out, 8, x3+x4+x5)
					put(out, 16, x6^x7)
					return replied(out)
				},
			},
		},
		random: 200,
	}
}

func boolsOutsideProgram() corpusProgram {
	var reqs [][]byte
	for _, x := range []byte{0, 1, 2, 0x80, 0xff} {
		for _, y := range []byte{0, 1, 2, 0x80, 0xff} {
			reqs = append(reqs, []byte{x, y})
		}
	}
	return corpusProgram{
		file:    "bools_outside.naam",
		regions: []uint64{24},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], []byte{0, 0, 9, 1, 2, 9, 2, 1, 9, 0x80, 0, 9, 0, 0xff, 9, 0xff, 0x40, 9, 1, 1, 9, 3, 0, 9})
		},
		handlers: []corpusHandler{
			{
				name: "req", argsEnd: 2, req: 2, reply: 8, edges: reqs,
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					x, y := req[0] != 0, req[1] != 0
					out := make([]byte, 8)
					putBool(out, 0, x && y)
					putBool(out, 1, x == y)
					out[2] = b2u[uint8](x) + b2u[uint8](y)
					putBool(out, 3, !x)
					put(out, 4, uint32(2-b2u[uint32](x)))
					return replied(out)
				},
			},
			{
				name: "reg", argsEnd: 1, req: 1, reply: 12,
				edges: [][]byte{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					f := rg[0][3*int(req[0]%8):]
					a, b := f[0] != 0, f[1] != 0
					out := make([]byte, 12)
					putBool(out, 0, a)
					put(out, 4, b2u[uint32](a)+b2u[uint32](b)*10)
					putBool(out, 8, a == b)
					return replied(out)
				},
			},
		},
		random: 60,
	}
}

func evalOrderProgram() corpusProgram {
	note := func(rg [][]byte, id uint8, v uint32) uint32 {
		p := get[uint64](rg[1], 0)
		put(rg[1], 0, p+1)
		rg[0][p%16] = id
		return v
	}
	var three [][]byte
	for _, v := range [][3]uint64{{0, 10, 0}, {8, 10, 0}, {8, 10, 2}, {7, 10, 2}, {0xffff_ffff, 1, 0}, {3, 0xffff_ffff, 1}} {
		three = append(three, mk(12).u(0, 4, v[0]).u(4, 4, v[1]).u(8, 4, v[2]))
	}
	gen3 := func(r *rand.Rand, _ [][]byte) []byte {
		return mk(12).u(0, 4, uint64(r.IntN(10))).u(4, 4, r.Uint64()).u(8, 4, uint64(r.IntN(4)))
	}
	return corpusProgram{
		file:    "eval_order.naam",
		regions: []uint64{16, 8, 32},
		handlers: []corpusHandler{
			{
				name: "order", argsEnd: 8, req: 8, reply: 4,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := get[uint32](req, 0), get[uint32](req, 4)
					x := note(rg, 1, a)
					y := note(rg, 2, b)
					s := x - y*note(rg, 3, a)
					i := note(rg, 4, 0) % 8
					put(rg[2], 4*int(i), note(rg, 5, b))
					p1 := note(rg, 6, 1)
					p2 := note(rg, 7, 2)
					p3 := note(rg, 8, 3)
					return replied(le.AppendUint32(nil, s+p1*100+p2*10+p3))
				},
			},
			{
				name: "checks", argsEnd: 12, req: 12, reply: 4, edges: three, gen: gen3,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i, a, b := get[uint32](req, 0), get[uint32](req, 4), get[uint32](req, 8)
					if i >= 8 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					put(rg[2], 4*int(i), a/b)
					return replied(le.AppendUint32(nil, a/b))
				},
			},
			{
				name: "operands", argsEnd: 12, req: 12, reply: 4, edges: three, gen: gen3,
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					i, a, b := get[uint32](req, 0), get[uint32](req, 4), get[uint32](req, 8)
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					if i >= 8 {
						return failed(bytecode.FailIndexOutOfRange)
					}
					return replied(le.AppendUint32(nil, a/b+get[uint32](rg[2], 4*int(i))))
				},
			},
			{
				name: "failing", argsEnd: 8, req: 8, reply: 4,
				edges: [][]byte{mk(8).u(0, 4, 9).u(4, 4, 0), mk(8).u(0, 4, 9).u(4, 4, 2)},
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					return mk(8).u(0, 4, r.Uint64()).u(4, 4, uint64(r.IntN(3)))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a := note(rg, 1, get[uint32](req, 0))
					b := note(rg, 2, get[uint32](req, 4))
					if b == 0 {
						return failed(bytecode.FailDivideByZero)
					}
					return replied(le.AppendUint32(nil, a/b+note(rg, 3, 7)))
				},
			},
		},
	}
}

// blobRequest returns 300 bytes equal to blob or, two times in three,
// differing in one byte, often near the end.
func blobRequest(r *rand.Rand, blob []byte) []byte {
	a := slices.Clone(blob)
	if r.IntN(3) > 0 {
		k := len(a) - 1 - r.IntN(12)
		if r.IntN(2) == 0 {
			k = r.IntN(len(a))
		}
		a[k] ^= byte(1 + r.IntN(255))
	}
	return a
}

func bigCompareProgram() corpusProgram {
	return corpusProgram{
		file:    "big_compare.naam",
		regions: []uint64{600},
		setup: func(r *rand.Rand, rg [][]byte) {
			copy(rg[0], randBytes(r, 300))
			copy(rg[0][300:], rg[0][:299]) // the blobs differ in their last byte
		},
		handlers: []corpusHandler{
			{
				name: "cmp_req", argsEnd: 301, req: 301, reply: 8,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					i := r.IntN(256)
					return mk(301).raw(0, blobRequest(r, rg[0][300*(i%2):][:300])).u(300, 1, uint64(i))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := req[:300], rg[0][300*int(req[300]%2):][:300]
					first := uint32(300)
					for k := range a {
						if a[k] != b[k] {
							first = uint32(k)
							break
						}
					}
					out := mk(8).u(4, 4, uint64(first))
					putBool(out, 0, bytes.Equal(a, b))
					return replied(out)
				},
			},
			{
				name: "reply_side", argsEnd: 301, req: 301, reply: 301,
				gen: func(r *rand.Rand, rg [][]byte) []byte {
					i := r.IntN(256)
					return mk(301).raw(0, blobRequest(r, rg[0][300*(i%2):][:300])).u(300, 1, uint64(i))
				},
				ref: func(req []byte, rg [][]byte) ([]byte, uint32) {
					a, b := req[:300], rg[0][300*int(req[300]%2):][:300]
					out := mk(301).raw(0, a)
					putBool(out, 300, bytes.Equal(a, b))
					return replied(out)
				},
			},
		},
	}
}

func bigCompareReqProgram() corpusProgram {
	return corpusProgram{
		file: "big_compare_req.naam",
		handlers: []corpusHandler{
			{
				name: "req_req", argsEnd: 600, req: 600, reply: 1,
				gen: func(r *rand.Rand, _ [][]byte) []byte {
					a := randBytes(r, 300)
					return mk(600).raw(0, a).raw(300, blobRequest(r, a))
				},
				ref: func(req []byte, _ [][]byte) ([]byte, uint32) {
					return replied([]byte{b2u[uint8](bytes.Equal(req[:300], req[300:600]))})
				},
			},
		},
	}
}
