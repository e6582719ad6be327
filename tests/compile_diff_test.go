package tests

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/naameval"
	"github.com/naam-project/naam/internal/testing/naamgen"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// The compile-and-run differential: random programs (internal/testing/naamgen)
// are evaluated by the reference evaluator (internal/testing/naameval), and
// compiled, verified and run in the VM; outcome, reply, region contents,
// sends, forwards and traces must agree.
//
//	go test ./tests -run CompileDiff                      # 200 programs
//	NAAM_COMPILE_DIFF_N=5000 go test ./tests -run CompileDiff
//	go test ./tests -run '^$' -fuzz FuzzCompileDiff

const (
	diffSeedStream = 0x6e61616d // the PCG stream of program seeds
	diffInputs     = 6          // inputs per handler
)

// diffVerifyBudget is the verifier's instruction budget for generated
// programs: the generator keeps them well under the default, but a
// budget rejection says nothing about the compiler, so it gets headroom.
const diffVerifyBudget = 1_000_000

func TestCompileDiff(t *testing.T) {
	n := 200
	if s, err := strconv.Atoi(os.Getenv("NAAM_COMPILE_DIFF_N")); err == nil && s > 0 {
		n = s
	} else if testing.Short() {
		n = 40
	}
	var st diffStats
	for seed := range uint64(n) {
		diffProgram(t, seed, &st)
		if st.mismatches+st.rejected >= 10 && !testing.Verbose() {
			t.Fatalf("stopping after %d failing programs (go test -v runs them all)", st.mismatches+st.rejected)
		}
	}
	t.Logf("%d programs: %d agree on every run, %d rejected by the verifier, %d with compile errors or wrong answers, %d skipped by compiler limits; %d runs: %s",
		n, st.agreed, st.rejected, st.mismatches, st.skipped, st.runs, st.outcomes())
	if st.skipped > n/10 {
		t.Errorf("%d of %d programs hit compiler limits; the generator should stay inside them", st.skipped, n)
	}
}

func FuzzCompileDiff(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		var st diffStats
		diffProgram(t, seed, &st)
	})
}

type diffStats struct {
	skipped, rejected, agreed, runs, mismatches int
	kinds                                       map[string]int
}

func (s *diffStats) count(k string) {
	if s.kinds == nil {
		s.kinds = map[string]int{}
	}
	s.kinds[k]++
}

func (s *diffStats) outcomes() string {
	var parts []string
	for _, k := range []string{"reply", "fail(code)", "forwarded", "0x7fffff01", "0x7fffff02", "0x7fffff03", "0x7fffff04", "0x7fffff05", "0x7fffff06"} {
		if n := s.kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	return strings.Join(parts, ", ")
}

// compilerLimit reports whether err is one of the errors only the compiler
// reports for programs the checker accepts (spec/language.md, Compilation):
// limits of the target, not bugs.
func compilerLimit(err error) bool {
	s := err.Error()
	return strings.Contains(s, "bytes of stack") || strings.Contains(s, "too many loop counters") ||
		strings.Contains(s, "the handler is too large")
}

// diffProgram generates, compiles and runs program seed; it reports
// whether everything agreed.
func diffProgram(t *testing.T, seed uint64, st *diffStats) bool {
	t.Helper()
	p := naamgen.Program(rand.New(rand.NewPCG(seed, diffSeedStream)), naamgen.Config{Helpers: true})
	name := fmt.Sprintf("gen%d.naam", seed)
	src := []byte(p.Source)
	_, info, err := lang.CheckSource(lang.NewFileSet(), name, src)
	if err != nil {
		t.Errorf("seed %d: the generator made a program the checker rejects:\n%v\n%s", seed, err, p.Source)
		return false
	}
	obj, err := compiler.Compile(lang.NewFileSet(), name, src)
	if err != nil {
		if compilerLimit(err) {
			st.skipped++
			t.Logf("seed %d: skipped: %v", seed, err)
			return true
		}
		st.mismatches++
		t.Errorf("seed %d: compile error for a checked program: %v\n%s", seed, err, p.Source)
		return false
	}
	insns, err := obj.Insns()
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	cfg := verifier.ObjectConfig(obj, verifier.Config{Budget: diffVerifyBudget, Position: func(slot int) string {
		if l, ok := obj.Position(slot); ok {
			return l.String()
		}
		return ""
	}})
	verified := true
	if _, err := verifier.Verify(insns, cfg); err != nil {
		// Still run it: the VM checks every access, so the runs can show
		// wrong answers besides the rejection.
		verified = false
		st.rejected++
		var verr *verifier.Error
		if errors.As(err, &verr) {
			err = fmt.Errorf("%+v", verr)
		}
		t.Errorf("seed %d: the verifier rejects the compiled program: %v\n%s", seed, err, p.Source)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	// Every run goes through the JIT tier too (checked), which must do
	// what the VM did.
	var code *jit.Code
	if jit.Available() == nil {
		var entries []int
		for _, h := range obj.Handlers {
			entries = append(entries, h.Entry)
		}
		if code, err = jit.Compile(insns, jit.Options{Entries: entries}); err != nil {
			t.Fatalf("seed %d: jit: %v", seed, err)
		}
		defer code.Close()
	}

	r := rand.New(rand.NewPCG(seed, 1))
	for h, hd := range p.Handlers {
		for k := range diffInputs {
			in := naamgen.Inputs(r, p, h)
			st.runs++
			kind, msg := diffRun(info, obj, prog, hd.Name, in, seed*100+uint64(k))
			if msg == "" && code != nil {
				msg = diffJIT(obj, prog, code, hd.Name, in, seed*100+uint64(k))
			}
			if msg != "" {
				st.mismatches++
				t.Errorf("seed %d, handler %s: %s\ninput: request % x\n       reply buffer %d bytes, src_node %d, tenant %d, request_id %d\n%s%s",
					seed, hd.Name, msg, in.Request, in.ReplySize, in.SrcNode, in.Tenant, in.RequestID, regionDump(p, in.Regions), p.Source)
				return false
			}
			st.count(kind)
		}
	}
	if verified {
		st.agreed++
	}
	return verified
}

// kindOf classifies an evaluator outcome, for the statistics.
func kindOf(out naameval.Outcome) string {
	switch {
	case out.Kind == naameval.Failed && out.Code > lang.MaxFailCode:
		return fmt.Sprintf("%#x", out.Code)
	case out.Kind == naameval.Failed:
		return "fail(code)"
	}
	return out.Kind.String()
}

func evalCall(handler string, in naamgen.Input, regions [][]byte, env naameval.Env) naameval.Call {
	return naameval.Call{
		Handler: handler, Request: in.Request, ReplySize: in.ReplySize, Regions: regions,
		Context: naameval.Context{SrcNode: in.SrcNode, Tenant: in.Tenant, RequestID: in.RequestID},
		Env:     env,
	}
}

// diffRun runs one input both ways; it returns the kind of outcome and a
// description of any difference.
func diffRun(info *lang.Info, obj *bytecode.Object, prog *vm.Program, handler string, in naamgen.Input, envSeed uint64) (kind, diff string) {
	var evalTrace, vmTrace bytes.Buffer
	evalEnv, vmEnv := vm.NewLocalEnv(envSeed, &evalTrace), vm.NewLocalEnv(envSeed, &vmTrace)

	evalRegions := cloneAll(in.Regions)
	want, err := naameval.Run(info, evalCall(handler, in, evalRegions, evalEnv))
	if err != nil {
		return "error", fmt.Sprintf("evaluator: %v", err)
	}
	kind = kindOf(want)

	var hd *bytecode.Handler
	for i := range obj.Handlers {
		if obj.Handlers[i].Name == handler {
			hd = &obj.Handlers[i]
		}
	}
	if hd == nil {
		return kind, "no handler " + handler + " in the object"
	}
	inv := &vm.Invocation{
		Entry: hd.Entry, Handler: hd.ID, SrcNode: in.SrcNode, Tenant: in.Tenant, RequestID: in.RequestID,
		Request: bytes.Clone(in.Request), Reply: aligned(in.ReplySize),
	}
	for i, reg := range obj.Regions {
		b := aligned(len(in.Regions[i]))
		copy(b, in.Regions[i])
		inv.Regions = append(inv.Regions, vm.RegionMem{Data: b, Writable: reg.Writable})
	}
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vmEnv)})
	res, err := m.Invoke(prog, inv)

	evalDesc := want.String()
	var vmDesc string
	agree := false
	switch {
	case err != nil:
		vmDesc = "fault: " + err.Error()
	case res.Outcome == bytecode.OutcomeReply:
		vmDesc = fmt.Sprintf("reply % x", res.Reply)
		agree = want.Kind == naameval.Replied && bytes.Equal(want.Reply, res.Reply)
	case res.Outcome == bytecode.OutcomeError:
		vmDesc = fmt.Sprintf("fail %#x", res.Code)
		agree = want.Kind == naameval.Failed && uint32(res.Code) == want.Code
	case res.Outcome == bytecode.OutcomeForwarded:
		vmDesc = fmt.Sprintf("forwarded to node %d handler %d", res.Forward.Node, res.Forward.Handler)
		agree = want.Kind == naameval.Forwarded && res.Forward.Node == want.ForwardNode && res.Forward.Handler == want.ForwardHandler
	default:
		vmDesc = res.Outcome.String()
	}
	if !agree {
		return kind, fmt.Sprintf("outcomes differ:\n  evaluator: %s\n  compiled:  %s (%d insns)", evalDesc, vmDesc, res.Insns)
	}
	for i, reg := range inv.Regions {
		if !bytes.Equal(reg.Data, evalRegions[i]) {
			return kind, fmt.Sprintf("both %s, but region %s differs:\n  evaluator: % x\n  compiled:  % x",
				evalDesc, obj.Regions[i].Name, evalRegions[i], reg.Data)
		}
	}
	if !sameMessages(evalEnv.Sent, vmEnv.Sent) {
		return kind, fmt.Sprintf("both %s, but the sends differ:\n  evaluator: %v\n  compiled:  %v", evalDesc, evalEnv.Sent, vmEnv.Sent)
	}
	if !bytes.Equal(evalTrace.Bytes(), vmTrace.Bytes()) {
		return kind, fmt.Sprintf("both %s, but the traces differ:\n  evaluator: % x\n  compiled:  % x", evalDesc, evalTrace.Bytes(), vmTrace.Bytes())
	}
	return kind, ""
}

// diffJIT runs one input in the checked interpreter and in the checked
// JIT tier and describes any difference: outcome, reply, fault text,
// instruction count, regions, sends, forwards and traces.
func diffJIT(obj *bytecode.Object, prog *vm.Program, code *jit.Code, handler string, in naamgen.Input, envSeed uint64) string {
	var hd *bytecode.Handler
	for i := range obj.Handlers {
		if obj.Handlers[i].Name == handler {
			hd = &obj.Handlers[i]
		}
	}
	run := func(useJIT bool) string {
		var trace bytes.Buffer
		env := vm.NewLocalEnv(envSeed, &trace)
		inv := &vm.Invocation{
			Entry: hd.Entry, Handler: hd.ID, SrcNode: in.SrcNode, Tenant: in.Tenant, RequestID: in.RequestID,
			Request: bytes.Clone(in.Request), Reply: aligned(in.ReplySize),
		}
		for i, reg := range obj.Regions {
			b := aligned(len(in.Regions[i]))
			copy(b, in.Regions[i])
			inv.Regions = append(inv.Regions, vm.RegionMem{Data: b, Writable: reg.Writable})
		}
		opts := vm.Options{Helpers: vm.ABIHelpers(env)}
		var res vm.Result
		var err error
		if useJIT {
			// The machine's helpers are its own: a fresh one per run keeps
			// the env of this run.
			m := vm.NewMachine(opts)
			defer m.Close()
			res, err = m.Invoke(code, inv)
		} else {
			res, err = vm.NewMachine(opts).Invoke(prog, inv)
		}
		out := fmt.Sprintf("r0 %d %v reply % x code %d insns %d err %v forward %v", res.R0, res.Outcome, res.Reply, res.Code, res.Insns, err, res.Forward)
		for _, r := range inv.Regions {
			out += fmt.Sprintf(" region % x", r.Data)
		}
		return out + fmt.Sprintf(" sent %v forwards %v trace % x", env.Sent, env.Forwards, trace.Bytes())
	}
	if got, want := run(true), run(false); got != want {
		return fmt.Sprintf("the JIT tier differs from the interpreter:\n  jit:    %s\n  interp: %s", got, want)
	}
	return ""
}

func sameMessages(a, b []vm.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Node != b[i].Node || a[i].Handler != b[i].Handler || !bytes.Equal(a[i].Payload, b[i].Payload) {
			return false
		}
	}
	return true
}

// aligned returns n zero bytes starting on an 8-byte boundary, as the VM
// needs for writable memory.
func aligned(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

func cloneAll(bs [][]byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = bytes.Clone(b)
	}
	return out
}

func regionDump(p *naamgen.Generated, regions [][]byte) string {
	var b strings.Builder
	for i, r := range p.Regions {
		fmt.Fprintf(&b, "       region %s: % x\n", r.Name, regions[i])
	}
	return b.String()
}
