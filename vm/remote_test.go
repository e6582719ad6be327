package vm_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// fakeRemote is a RemoteMemory over a byte slice that logs each call.
type fakeRemote struct {
	mem  []byte
	log  []string
	fail error // returned by every call when set
}

func (f *fakeRemote) Len() int { return len(f.mem) }

func (f *fakeRemote) ReadAt(p []byte, off uint32) error {
	f.log = append(f.log, "read "+itoa(uint64(off))+"+"+itoa(uint64(len(p))))
	if f.fail != nil {
		return f.fail
	}
	copy(p, f.mem[off:])
	return nil
}

func (f *fakeRemote) FetchAdd(off uint32, delta uint64) (uint64, error) {
	f.log = append(f.log, "fetch-add "+itoa(uint64(off)))
	if f.fail != nil {
		return 0, f.fail
	}
	old := binary.LittleEndian.Uint64(f.mem[off:])
	binary.LittleEndian.PutUint64(f.mem[off:], old+delta)
	return old, nil
}

func (f *fakeRemote) CompareAndSwap(off uint32, old, new uint64) (uint64, error) {
	f.log = append(f.log, "cas "+itoa(uint64(off)))
	if f.fail != nil {
		return 0, f.fail
	}
	prev := binary.LittleEndian.Uint64(f.mem[off:])
	if prev == old {
		binary.LittleEndian.PutUint64(f.mem[off:], new)
	}
	return prev, nil
}

// TestRemoteRegion runs code against a remote region: loads of every
// width read through the memory, 8-byte adds and cmpxchg become its verbs,
// everything else that writes faults with ErrRemote.
func TestRemoteRegion(t *testing.T) {
	const base = "lddw %r2, region[0]\n"
	tests := []struct {
		name     string
		src      string
		writable bool
		want     uint64   // r0
		log      []string // the memory's calls
		err      error    // the fault's sentinel
		msg      string   // a substring of the fault
		words    []uint64 // the memory's first words afterwards
	}{
		{name: "ldxdw", src: base + "ldxdw %r0, [%r2+8]\nexit", want: 0x1111, log: []string{"read 8+8"}},
		{name: "ldxw", src: base + "ldxw %r0, [%r2+16]\nexit", want: 0xfffffffe, log: []string{"read 16+4"}},
		{name: "ldxh", src: base + "ldxh %r0, [%r2+17]\nexit", want: 0xffff, log: []string{"read 17+2"}},
		{name: "ldxb", src: base + "ldxb %r0, [%r2+16]\nexit", want: 0xfe, log: []string{"read 16+1"}},
		{name: "ldxsb", src: base + "ldxsb %r0, [%r2+16]\nexit", want: 0xfffffffffffffffe, log: []string{"read 16+1"}},
		{name: "ldxsh", src: base + "ldxsh %r0, [%r2+16]\nexit", want: 0xfffffffffffffffe, log: []string{"read 16+2"}},
		{name: "ldxsw", src: base + "ldxsw %r0, [%r2+16]\nexit", want: 0xfffffffffffffffe, log: []string{"read 16+4"}},
		{name: "unaligned load", src: base + "ldxdw %r0, [%r2+1]\nexit", want: 0x1100_0000_0000_0000, log: []string{"read 1+8"}},
		{name: "load past the end", src: base + "ldxdw %r0, [%r2+25]\nexit", err: vm.ErrOutOfBounds, msg: "region0+25 (remote, length 32)"},
		{name: "add", writable: true, src: base + "mov %r3, 5\nlock add [%r2+8], %r3\nmov %r0, %r3\nexit", want: 5, log: []string{"fetch-add 8"}, words: []uint64{0, 0x1116}},
		{name: "fetch add", writable: true, src: base + "mov %r3, 5\nlock fetch add [%r2+8], %r3\nmov %r0, %r3\nexit", want: 0x1111, log: []string{"fetch-add 8"}, words: []uint64{0, 0x1116}},
		{name: "cmpxchg swaps", writable: true, src: base + "mov %r0, 0x1111\nmov %r3, 9\nlock cmpxchg [%r2+8], %r3\nexit", want: 0x1111, log: []string{"cas 8"}, words: []uint64{0, 9}},
		{name: "cmpxchg fails", writable: true, src: base + "mov %r0, 7\nmov %r3, 9\nlock cmpxchg [%r2+8], %r3\nexit", want: 0x1111, log: []string{"cas 8"}, words: []uint64{0, 0x1111}},
		{name: "atomic on a read-only region", src: base + "mov %r3, 5\nlock add [%r2+8], %r3\nexit", err: vm.ErrReadOnly},
		{name: "misaligned atomic", writable: true, src: base + "mov %r3, 5\nlock add [%r2+4], %r3\nexit", err: vm.ErrMisaligned},
		{name: "atomic past the end", writable: true, src: base + "mov %r3, 5\nlock add [%r2+32], %r3\nexit", err: vm.ErrOutOfBounds},
		{name: "xchg", writable: true, src: base + "mov %r3, 5\nlock xchg [%r2+8], %r3\nexit", err: vm.ErrRemote, msg: "changed only by 8-byte atomic add and cmpxchg"},
		{name: "4-byte add", writable: true, src: base + "mov %r3, 5\nlock add32 [%r2+8], %r3\nexit", err: vm.ErrRemote, msg: "4-byte atomic at 0x800000008 (region0+8 (remote, length 32))"},
		{name: "store", writable: true, src: base + "stdw [%r2+8], 1\nexit", err: vm.ErrRemote, msg: "8-byte store"},
		{name: "store to a read-only region", src: base + "stxb [%r2+8], %r2\nexit", err: vm.ErrReadOnly},
		{name: "hash", src: base + "mov %r1, %r2\nmov %r2, 8\ncall 1\nexit", want: vm.FNV1a(make([]byte, 8)), log: []string{"read 0+8"}},
		{name: "copy out", src: base + "mov %r1, %r10\nadd %r1, -16\nadd %r2, 8\nmov %r3, 16\ncall 2\nldxdw %r0, [%r10-8]\nexit", want: 0xfffffffffffffffe, log: []string{"read 8+16"}},
		{name: "copy in", writable: true, src: base + "mov %r1, %r2\nmov %r2, %r10\nadd %r2, -8\nstdw [%r10-8], 0\nmov %r3, 8\ncall 2\nexit", err: vm.ErrRemote, msg: "helper access"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := &fakeRemote{mem: le(0, 0x1111, 0xfffffffffffffffe, 3)}
			p := load(t, tc.src)
			m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
			if _, err := m.MapRemote(vm.RegionSegment(0), mem, tc.writable); err != nil {
				t.Fatal(err)
			}
			r0, err := m.Run(p)
			if tc.err != nil {
				var f *vm.Fault
				if !errors.As(err, &f) || !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %v, want a %v fault containing %q", err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r0 != tc.want {
				t.Errorf("r0 = %#x, want %#x", r0, tc.want)
			}
			if strings.Join(mem.log, ", ") != strings.Join(tc.log, ", ") {
				t.Errorf("calls %v, want %v", mem.log, tc.log)
			}
			for i, w := range tc.words {
				if got := binary.LittleEndian.Uint64(mem.mem[8*i:]); got != w {
					t.Errorf("word %d = %#x, want %#x", i, got, w)
				}
			}
		})
	}
}

// A failing memory ends the run with an ErrRemote fault that wraps its
// error, for loads, atomics and helpers alike.
func TestRemoteRegionError(t *testing.T) {
	lost := errors.New("link down")
	for _, src := range []string{
		"lddw %r2, region[0]\nldxw %r0, [%r2]\nexit",
		"lddw %r2, region[0]\nmov %r3, 1\nlock fetch add [%r2], %r3\nexit",
		"lddw %r2, region[0]\nmov %r0, 0\nlock cmpxchg [%r2], %r3\nexit",
		"lddw %r1, region[0]\nmov %r2, 4\ncall 1\nexit",
	} {
		m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
		if _, err := m.MapRemote(vm.RegionSegment(0), &fakeRemote{mem: make([]byte, 8), fail: lost}, true); err != nil {
			t.Fatal(err)
		}
		_, err := m.Run(load(t, strings.Replace(src, "mov %r0, 0\nlock", "mov %r0, 0\nmov %r3, 0\nlock", 1)))
		if !errors.Is(err, vm.ErrRemote) || !errors.Is(err, lost) {
			t.Errorf("%q: got %v, want a remote fault wrapping %v", src, err, lost)
		}
	}
}

// Remote regions run only checked and only in the interpreter, through
// Invoke as a RegionMem too; unmapping or mapping over one forgets it.
func TestRemoteRegionMapping(t *testing.T) {
	mem := &fakeRemote{mem: le(7, 8)}
	p := load(t, "lddw %r2, region[0]\nldxdw %r0, [%r2+8]\nexit")

	un := vm.NewMachine(vm.Options{Unchecked: true})
	if _, err := un.MapRemote(vm.RegionSegment(0), mem, false); err != nil {
		t.Fatal(err)
	}
	if _, err := un.Run(p); err == nil || !strings.Contains(err.Error(), "only on checked machines") {
		t.Errorf("unchecked run: %v", err)
	}

	m := vm.NewMachine(vm.Options{})
	if _, err := m.MapRemote(vm.SegReply, mem, false); err == nil {
		t.Error("MapRemote of the reply segment succeeded")
	}
	if _, err := m.MapRemote(vm.RegionSegment(0), mem, false); err != nil {
		t.Fatal(err)
	}
	if r0, err := m.Run(p); err != nil || r0 != 8 {
		t.Errorf("run: %d, %v", r0, err)
	}
	m.Unmap(vm.RegionSegment(0))
	if _, err := m.Run(p); !errors.Is(err, vm.ErrOutOfBounds) || !strings.Contains(err.Error(), "not mapped") {
		t.Errorf("after Unmap: %v", err)
	}
	if _, err := m.MapRemote(vm.RegionSegment(0), mem, false); err != nil {
		t.Fatal(err)
	}
	local := le(1, 2)
	if _, err := m.Map(vm.RegionSegment(0), local, false); err != nil {
		t.Fatal(err)
	}
	if r0, err := m.Run(p); err != nil || r0 != 2 {
		t.Errorf("after Map over the remote segment: %d, %v", r0, err)
	}

	// Invoke maps a RegionMem's Remote, and unmaps it after the run.
	h := load(t, "ldxdw %r2, [%r1+16]\nlddw %r3, region[0]\nldxdw %r4, [%r3]\nstxdw [%r2], %r4\nmov %r0, 8\nexit")
	inv := &vm.Invocation{Reply: make([]byte, 8), Regions: []vm.RegionMem{{Remote: mem}}}
	res, err := m.Invoke(h, inv)
	if err != nil || res.Outcome != bytecode.OutcomeReply || binary.LittleEndian.Uint64(res.Reply) != 7 {
		t.Errorf("Invoke: %+v, %v", res, err)
	}
	if _, err := m.Run(p); !errors.Is(err, vm.ErrOutOfBounds) {
		t.Errorf("the remote region outlived Invoke: %v", err)
	}
	inv.Regions[0].Data = local
	if _, err := m.Invoke(h, inv); err == nil || !strings.Contains(err.Error(), "a remote region has no Data or Memory") {
		t.Errorf("Invoke with Remote and Data: %v", err)
	}
}

// Another engine's executable does not run while a remote region is
// mapped: only the interpreter reaches one.
func TestRemoteRegionOtherEngine(t *testing.T) {
	x := &fakeExec{p: load(t, "mov %r0, 0\nexit")}
	m := vm.NewMachine(vm.Options{})
	defer m.Close()
	inv := &vm.Invocation{Reply: make([]byte, 8), Regions: []vm.RegionMem{{Remote: &fakeRemote{mem: make([]byte, 8)}}}}
	if _, err := m.Invoke(x, inv); err == nil || !strings.Contains(err.Error(), "only in the interpreter") || x.instances != 0 {
		t.Errorf("Invoke: %v (%d instances)", err, x.instances)
	}
	inv.Regions = nil
	if _, err := m.Invoke(x, inv); err != nil || x.instances != 1 {
		t.Errorf("Invoke without the remote region: %v (%d instances)", err, x.instances)
	}
}
