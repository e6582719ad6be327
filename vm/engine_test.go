package vm_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// fakeExec is an engine's executable whose instance returns r0 without
// running anything, and records what it saw of the machine.
type fakeExec struct {
	p         *vm.Program
	r0        uint64
	instances int
	seen      map[vm.Segment]segInfo
	redirect  []byte // the reply copy the instance points helpers at
	helperErr error
	panics    bool // the instance panics after redirecting
}

func (f *fakeExec) Program() *vm.Program { return f.p }

func (f *fakeExec) Instantiate(ec *vm.EngineContext) (vm.Instance, error) {
	f.instances++
	return &fakeInstance{f, ec}, nil
}

// segInfo is what EngineContext.Segment said of a segment.
type segInfo struct {
	Data     []byte
	Writable bool
	Memory   *vm.Memory
}

type fakeInstance struct {
	f  *fakeExec
	ec *vm.EngineContext
}

func (i *fakeInstance) Run(entry int, r1, r2 uint64) (uint64, error) {
	f := i.f
	f.seen = map[vm.Segment]segInfo{}
	for seg := vm.SegStack; seg < i.ec.MappedLimit(); seg++ {
		var s segInfo
		s.Data, s.Writable, s.Memory = i.ec.Segment(seg)
		f.seen[seg] = s
	}
	if f.redirect != nil {
		if err := i.ec.Redirect(vm.SegReply, f.redirect); err != nil {
			return 0, err
		}
		if f.panics {
			panic("engine bug")
		}
		// A helper writes through the redirected segment.
		if _, err := i.ec.CallHelper(0, bytecode.HelperCopy, vm.Addr(vm.SegReply, 0), vm.Addr(vm.SegRequest, 0), 3, 0, 0); err != nil {
			f.helperErr = err
		}
	}
	i.ec.Finish(5, 1)
	return f.r0, nil
}

func (*fakeInstance) Close() {}

// TestEngineInterface: Invoke and RunRaw hand an executable of another
// engine to its instance, made once per machine, with the segments mapped
// (a Memory's segment says so), and apply the ABI to what it returns;
// Redirect is undone when the run ends.
func TestEngineInterface(t *testing.T) {
	p := load(t, "mov %r0, 0\nexit") // the fake engine never runs it
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
	defer m.Close()
	mem, err := vm.NewMemory(24)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeExec{p: p, r0: 4}
	inv := &vm.Invocation{Request: []byte("abc"), Reply: make([]byte, 16),
		Regions: []vm.RegionMem{{Data: mem.Bytes()[:16], Writable: true, Memory: mem}, {Data: make([]byte, 8)}}}
	res, err := m.Invoke(f, inv)
	if err != nil || res.R0 != 4 || len(res.Reply) != 4 || res.Insns != 5 {
		t.Errorf("Invoke: %+v, %v", res, err)
	}
	if s := f.seen[vm.SegRequest]; len(s.Data) != 3 || s.Writable || s.Memory != nil {
		t.Errorf("request seen as %+v", s)
	}
	if s := f.seen[vm.SegReply]; len(s.Data) != 16 || !s.Writable {
		t.Errorf("reply seen as %+v", s)
	}
	if s := f.seen[vm.RegionSegment(0)]; len(s.Data) != 16 || s.Memory != mem || !s.Writable {
		t.Errorf("region 0 seen as %+v", s)
	}
	if s := f.seen[vm.RegionSegment(1)]; len(s.Data) != 8 || s.Memory != nil || s.Writable {
		t.Errorf("region 1 seen as %+v", s)
	}
	if s := f.seen[vm.SegStack]; len(s.Data) != vm.StackBytes {
		t.Errorf("stack seen as %d bytes", len(s.Data))
	}

	// The reply redirected to the engine's copy: the helper writes the
	// copy, and the caller's buffer is the machine's again afterwards.
	f.redirect = make([]byte, 16)
	f.r0 = 3
	res, err = m.Invoke(f, inv)
	if err != nil || f.helperErr != nil || string(f.redirect[:3]) != "abc" || !bytes.Equal(inv.Reply, make([]byte, 16)) {
		t.Errorf("redirected run: %+v, %v (helper %v); copy %q, reply %q", res, err, f.helperErr, f.redirect[:3], inv.Reply)
	}

	// An engine's panic is an internal fault, and leaves nothing redirected.
	f.panics = true
	_, err = m.Invoke(f, inv)
	if !errors.Is(err, vm.ErrInternal) || !strings.Contains(err.Error(), "engine: engine bug") {
		t.Errorf("a panicking engine: %v", err)
	}
	f.panics, f.redirect = false, nil
	f.r0 = 4
	if _, err := m.Invoke(f, inv); err != nil || unsafe.SliceData(f.seen[vm.SegReply].Data) != unsafe.SliceData(inv.Reply) {
		t.Errorf("after the panic the reply is not the caller's: %v", err)
	}

	f.r0 = 17
	_, err = m.Invoke(f, &vm.Invocation{Reply: make([]byte, 16)})
	if err == nil || !strings.Contains(err.Error(), "insn 1: bad handler return value: reply of 17 bytes") {
		t.Errorf("too long a reply: %v", err)
	}
	f.r0 = 9
	if r0, err := m.RunRaw(f, make([]byte, 8)); r0 != 9 || err != nil || len(f.seen[vm.SegRequest].Data) != 8 {
		t.Errorf("RunRaw: %d, %v", r0, err)
	}
	if r0, err := m.RunRawMemory(f, mem); r0 != 9 || err != nil || f.seen[vm.SegRequest].Memory != mem {
		t.Errorf("RunRawMemory: %d, %v (request %+v)", r0, err, f.seen[vm.SegRequest])
	}
	if f.instances != 1 {
		t.Errorf("%d instances for one machine", f.instances)
	}
	m.Forget(f)
	m.RunRaw(f, nil)
	if f.instances != 2 {
		t.Errorf("%d instances after Forget and a run, want 2", f.instances)
	}
	if _, err := m.Invoke(f, &vm.Invocation{Entry: 2, Reply: make([]byte, 8)}); err == nil || !strings.Contains(err.Error(), "entry point 2 is not an instruction") {
		t.Errorf("entry past the end: %v", err)
	}
	// Data that is not the start of its Memory is refused.
	bad := &vm.Invocation{Reply: make([]byte, 8), Regions: []vm.RegionMem{{Data: mem.Bytes()[8:16], Memory: mem}}}
	if _, err := m.Invoke(f, bad); err == nil || !strings.Contains(err.Error(), "region 0: Data is not the start of its Memory") {
		t.Errorf("region not at its Memory's start: %v", err)
	}
}

// TestInterpreterEngine: the interpreter's Compile returns the program
// itself and refuses an entry that is not an instruction.
func TestInterpreterEngine(t *testing.T) {
	p := load(t, "lddw %r0, 1\nexit")
	x, err := vm.Interpreter{}.Compile(p, []int{2})
	if err != nil || x != vm.Executable(p) {
		t.Fatalf("Compile: %v, %v", x, err)
	}
	if _, err := (vm.Interpreter{}).Compile(p, []int{1}); err == nil || !strings.Contains(err.Error(), "entry point 1") {
		t.Errorf("entry in lddw's second slot: %v", err)
	}
}
