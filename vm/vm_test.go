package vm_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

func load(t testing.TB, src string) *vm.Program {
	t.Helper()
	insns, err := bytecode.Assemble(src)
	if err != nil {
		t.Fatalf("assemble: %v\n%s", err, src)
	}
	p, err := vm.Load(insns)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

// TestSemantics pins the RFC 9669 corner cases, in both modes.
func TestSemantics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want uint64
	}{
		{"div64 by zero reg", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit", 0},
		{"div64 by zero imm", "mov %r0, 7\ndiv %r0, 0\nexit", 0},
		{"div32 by zero imm", "lddw %r0, 0x100000007\ndiv32 %r0, 0\nexit", 0},
		{"mod64 by zero reg keeps dst", "lddw %r0, 0x100000007\nmov %r1, 0\nmod %r0, %r1\nexit", 0x100000007},
		{"mod64 by zero imm keeps dst", "lddw %r0, 0x100000007\nmod %r0, 0\nexit", 0x100000007},
		{"mod32 by zero reg zeroes upper", "lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1\nexit", 7},
		{"mod32 by zero imm zeroes upper", "lddw %r0, 0x100000007\nmod32 %r0, 0\nexit", 7},
		{"sdiv64 INT_MIN by -1", "lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit", 0x8000000000000000},
		{"sdiv64 INT_MIN by -1 reg", "lddw %r0, 0x8000000000000000\nmov %r1, -1\nsdiv %r0, %r1\nexit", 0x8000000000000000},
		{"smod64 INT_MIN by -1", "lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit", 0},
		{"sdiv32 INT_MIN by -1", "mov32 %r0, 0x80000000\nsdiv32 %r0, -1\nexit", 0x80000000},
		{"smod32 INT_MIN by -1", "mov32 %r0, 0x80000000\nsmod32 %r0, -1\nexit", 0},
		{"sdiv by zero reg", "mov %r0, -7\nmov %r1, 0\nsdiv %r0, %r1\nexit", 0},
		{"smod by zero reg keeps dst", "mov %r0, -7\nmov %r1, 0\nsmod %r0, %r1\nexit", 0xfffffffffffffff9},
		{"smod sign follows dividend", "mov %r0, -7\nsmod %r0, 3\nexit", 0xffffffffffffffff},
		{"lsh64 reg masked", "mov %r0, 1\nmov %r1, 65\nlsh %r0, %r1\nexit", 2},
		{"rsh32 reg masked", "mov %r0, 4\nmov %r1, 33\nrsh32 %r0, %r1\nexit", 2},
		{"arsh32 sign", "mov32 %r0, 0x80000000\narsh32 %r0, 4\nexit", 0xf8000000},
		{"arsh64 sign", "lddw %r0, 0x8000000000000000\narsh %r0, 63\nexit", 0xffffffffffffffff},
		{"alu32 zero-extends", "mov %r0, -1\nadd32 %r0, 1\nexit", 0},
		{"mov32 imm zero-extends", "mov32 %r0, -1\nexit", 0xffffffff},
		{"mov64 imm sign-extends", "mov %r0, -1\nexit", 0xffffffffffffffff},
		{"neg32", "mov %r0, 1\nneg32 %r0\nexit", 0xffffffff},
		{"movsx8 64", "mov %r1, 0x80\nmovsx864 %r0, %r1\nexit", 0xffffffffffffff80},
		{"movsx16 32", "mov %r1, 0x8000\nmovsx1632 %r0, %r1\nexit", 0xffff8000},
		{"movsx32 64", "mov32 %r1, 0x80000000\nmovsx3264 %r0, %r1\nexit", 0xffffffff80000000},
		{"be16", "lddw %r0, 0x1122334455667788\nbe16 %r0\nexit", 0x8877},
		{"le32 truncates", "lddw %r0, 0x1122334455667788\nle32 %r0\nexit", 0x55667788},
		{"bswap64", "lddw %r0, 0x1122334455667788\nbswap64 %r0\nexit", 0x8877665544332211},
		{"jmp32 ignores upper half", "lddw %r1, 0x100000000\nmov %r0, 1\njeq32 %r1, 0, +1\nmov %r0, 2\nexit", 1},
		{"jsgt signed", "mov %r1, -1\nmov %r0, 1\njsgt %r1, 0, +1\nmov %r0, 2\nexit", 2},
		{"jgt unsigned", "mov %r1, -1\nmov %r0, 1\njgt %r1, 0, +1\nmov %r0, 2\nexit", 1},
		{"gotol", "mov %r0, 1\nja32 +1\nmov %r0, 2\nexit", 1},
		{"local call saves r6-r9", "mov %r6, 6\ncall local f\nadd %r0, %r6\nexit\nf:\nmov %r6, 100\nmov %r0, 1\nexit", 7},
		{"local call gets its own frame", "stdw [%r10-8], 5\ncall local f\nldxdw %r0, [%r10-8]\nexit\nf:\nstdw [%r10-8], 9\nmov %r0, 0\nexit", 5},
		{"callee reads caller stack through a pointer", "stdw [%r10-8], 42\nmov %r1, %r10\nadd %r1, -8\ncall local f\nexit\nf:\nldxdw %r0, [%r1]\nexit", 42},
		{"stack sign-extending load", "stb [%r10-1], 0xff\nldxsb %r0, [%r10-1]\nexit", 0xffffffffffffffff},
		{"atomic fetch add returns old", "stdw [%r10-8], 10\nmov %r1, 5\nlock fetch add [%r10-8], %r1\nldxdw %r0, [%r10-8]\nadd %r0, %r1\nexit", 25},
		{"cmpxchg32 zero-extends old", "stw [%r10-8], -1\nmov %r0, 0\nmov %r1, 1\nlock cmpxchg32 [%r10-8], %r1\nexit", 0xffffffff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, tc.src)
			for _, unchecked := range []bool{false, true} {
				m := vm.NewMachine(vm.Options{Unchecked: unchecked})
				got, err := m.RunRaw(p, nil)
				if err != nil {
					t.Fatalf("unchecked=%v: %v", unchecked, err)
				}
				if got != tc.want {
					t.Fatalf("unchecked=%v: r0 = %#x, want %#x", unchecked, got, tc.want)
				}
			}
		})
	}
}

// TestFaults checks that every fault is typed, names its instruction and
// never panics.
func TestFaults(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		mem     int
		want    error
		wantMsg string
	}{
		{"load past end", "ldxdw %r0, [%r1+1]\nexit", 8, vm.ErrOutOfBounds, "insn 0: memory access out of bounds: 8-byte load at 0x300000001 (request+1 (length 8))"},
		{"load before start", "ldxb %r0, [%r1-1]\nexit", 8, vm.ErrOutOfBounds, "insn 0:"},
		{"store past end", "mov %r0, 0\nstw [%r1+6], 1\nexit", 8, vm.ErrOutOfBounds, "insn 1: memory access out of bounds: 4-byte store"},
		{"null load", "mov %r2, 0\nldxw %r0, [%r2]\nexit", 0, vm.ErrOutOfBounds, "null+0, not mapped"},
		{"stack underflow", "ldxdw %r0, [%r10-4096]\nldxdw %r0, [%r10-4104]\nexit", 0, vm.ErrOutOfBounds, "insn 1:"},
		{"stack overflow above frame 0", "ldxdw %r0, [%r10]\nexit", 0, vm.ErrOutOfBounds, "stack+4096"},
		{"misaligned atomic", "mov %r2, 1\nlock add [%r10-15], %r2\nexit", 0, vm.ErrMisaligned, "insn 1: misaligned atomic access: 8-byte atomic"},
		{"misaligned atomic32", "mov %r2, 1\nlock xchg32 [%r10-6], %r2\nexit", 0, vm.ErrMisaligned, "4-byte atomic"},
		{"budget", "L:\nja L", 0, vm.ErrBudget, "instruction budget exhausted"},
		// The budget fault names the jump that would go on, not its target.
		{"budget at ja", "mov %r0, 0\nL:\nadd %r0, 1\nja L", 0, vm.ErrBudget, "insn 2: instruction budget exhausted"},
		{"budget at conditional jump", "mov %r0, 0\nL:\nadd %r0, 1\njne %r0, 0, L\nexit", 0, vm.ErrBudget, "insn 2: instruction budget exhausted"},
		{"budget at gotol", "lddw %r0, 0\nL:\nadd %r0, 1\nja32 L", 0, vm.ErrBudget, "insn 3: instruction budget exhausted"},
		{"budget at local call", "L:\nadd %r0, 1\ncall local f\nja L\nf:\nexit", 0, vm.ErrBudget, "insn 1: instruction budget exhausted"},
		{"call depth", "f:\ncall local f\nexit", 0, vm.ErrCallDepth, "insn 0: call depth exceeded"},
		{"fell off", "mov %r0, 1", 0, vm.ErrFellOff, "insn 1: execution fell off"},
		{"no helpers", "call 1\nexit", 0, vm.ErrHelper, "insn 0: helper call failed: helper 1 called, but this machine has no helpers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, tc.src)
			m := vm.NewMachine(vm.Options{Budget: 1000})
			_, err := m.RunRaw(p, make([]byte, tc.mem))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var f *vm.Fault
			if !errors.As(err, &f) {
				t.Fatalf("err %T is not a *vm.Fault", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %q, want it to contain %q", err, tc.wantMsg)
			}
		})
	}
}

func TestReadOnlySegment(t *testing.T) {
	p := load(t, "stb [%r1], 1\nmov %r0, 0\nexit")
	m := vm.NewMachine(vm.Options{})
	ctx := make([]byte, 16)
	addr, err := m.Map(vm.SegContext, ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Run(p, addr)
	if !errors.Is(err, vm.ErrReadOnly) {
		t.Fatalf("err = %v, want ErrReadOnly", err)
	}
	if ctx[0] != 0 {
		t.Fatal("read-only memory was written")
	}
	// The same bytes mapped writable accept the store.
	addr, _ = m.Map(vm.SegReply, ctx, true)
	if _, err := m.Run(p, addr); err != nil || ctx[0] != 1 {
		t.Fatalf("writable store: err=%v byte=%d", err, ctx[0])
	}
}

func TestRegionAddress(t *testing.T) {
	p := load(t, "lddw %r1, region[2]+8\nldxdw %r0, [%r1]\nexit")
	if p.Regions() != 3 {
		t.Fatalf("Regions() = %d, want 3", p.Regions())
	}
	m := vm.NewMachine(vm.Options{})
	if _, err := m.Run(p); !errors.Is(err, vm.ErrOutOfBounds) {
		t.Fatalf("unmapped region: err = %v", err)
	}
	region := make([]byte, 16)
	binary.LittleEndian.PutUint64(region[8:], 0xabcdef)
	if _, err := m.Map(vm.RegionSegment(2), region, false); err != nil {
		t.Fatal(err)
	}
	got, err := m.Run(p)
	if err != nil || got != 0xabcdef {
		t.Fatalf("r0 = %#x, err = %v", got, err)
	}
}

func TestMapRejects(t *testing.T) {
	m := vm.NewMachine(vm.Options{})
	for _, seg := range []vm.Segment{vm.SegNull, vm.SegStack, 256, 1000} {
		if _, err := m.Map(seg, make([]byte, 8), true); err == nil {
			t.Errorf("Map(%d) accepted", seg)
		}
	}
}

// TestMapAlignment: a writable segment must start 8-byte aligned on the host
// (atomics); a read-only one may start anywhere.
func TestMapAlignment(t *testing.T) {
	buf := make([]uint64, 4) // 8-byte aligned
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 32)
	tests := []struct {
		name     string
		data     []byte
		writable bool
		want     string // "" when Map must accept
	}{
		{"aligned writable", b[8:16], true, ""},
		{"odd writable", b[1:9], true, "must start on an 8-byte boundary"},
		{"4-aligned writable", b[4:12], true, "must start on an 8-byte boundary"},
		{"odd read-only", b[1:9], false, ""},
		{"empty unaligned (unmaps)", b[1:1], true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := vm.NewMachine(vm.Options{})
			_, err := m.Map(vm.SegReply, tt.data, tt.writable)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRawAlignment: atomics at an aligned eBPF address work whatever the
// host alignment of the caller's memory, and the results reach that memory.
func TestRawAlignment(t *testing.T) {
	p := load(t, "mov %r2, 1\nlock add32 [%r1+0], %r2\nmov %r2, 2\nlock fetch add [%r1+8], %r2\nmov %r0, %r2\nexit")
	buf := make([]uint64, 4)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 32)
	for _, off := range []int{0, 1, 2, 4, 5} {
		for _, unchecked := range []bool{false, true} {
			mem := b[off : off+16]
			clear(mem)
			mem[0], mem[8] = 10, 20
			m := vm.NewMachine(vm.Options{Unchecked: unchecked})
			got, err := m.RunRaw(p, mem)
			if err != nil || got != 20 || mem[0] != 11 || mem[8] != 22 {
				t.Errorf("host offset %d, unchecked=%v: r0 = %d, err = %v, mem[0] = %d, mem[8] = %d; want 20, nil, 11, 22",
					off, unchecked, got, err, mem[0], mem[8])
			}
		}
	}
	// 5 bytes from the allocator (which may align it to 1, 2 or 4).
	p = load(t, "mov %r2, 1\nlock add32 [%r1+0], %r2\nldxw %r0, [%r1]\nexit")
	mem := []byte{1, 0, 0, 0, 9}
	if got, err := vm.NewMachine(vm.Options{}).RunRaw(p, mem); err != nil || got != 2 || mem[0] != 2 {
		t.Errorf("5-byte memory: r0 = %d, err = %v, mem = %v", got, err, mem)
	}
	// Misalignment is judged on the eBPF address.
	p = load(t, "mov %r2, 1\nlock add32 [%r1+1], %r2\nexit")
	if _, err := vm.NewMachine(vm.Options{}).RunRaw(p, b[1:9]); !errors.Is(err, vm.ErrMisaligned) {
		t.Errorf("atomic at request+1: err = %v, want ErrMisaligned", err)
	}
}

// TestRunRawUnmaps: the caller's memory is mapped for the run only.
func TestRunRawUnmaps(t *testing.T) {
	m := vm.NewMachine(vm.Options{})
	if _, err := m.RunRaw(load(t, "mov %r0, 0\nexit"), make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	_, err := m.Run(load(t, "ldxb %r0, [%r1]\nexit"), vm.Addr(vm.SegRequest, 0))
	if !errors.Is(err, vm.ErrOutOfBounds) || !strings.Contains(err.Error(), "not mapped") {
		t.Fatalf("request segment after RunRaw: err = %v, want not mapped", err)
	}
}

// TestUncheckedNeedsRegions: an unchecked run refuses, with an error, a
// program that addresses a region that is not mapped (its accesses would
// go through a nil base and kill the process).
func TestUncheckedNeedsRegions(t *testing.T) {
	p := load(t, "lddw %r1, region[1]+65536\nldxb %r0, [%r1]\nexit")
	tests := []struct {
		name   string
		mapped []int
		want   string // "" for a run that succeeds
	}{
		{"none mapped", nil, "region 0, which is not mapped"},
		{"region 1 missing", []int{0}, "region 1, which is not mapped"},
		{"all mapped", []int{0, 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := vm.NewMachine(vm.Options{Unchecked: true})
			for _, i := range tt.mapped {
				if _, err := m.Map(vm.RegionSegment(i), make([]byte, 65536+8), false); err != nil {
					t.Fatal(err)
				}
			}
			_, err := m.Run(p)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			var f *vm.Fault
			if errors.As(err, &f) {
				t.Errorf("err is a *vm.Fault, want a plain error before the run")
			}
		})
	}
}

// TestLoadRejects: what bytecode.Validate refuses never reaches the
// interpreter.
func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name  string
		insns asm.Instructions
		want  string
	}{
		{"div32 by 1<<32", asm.Instructions{
			asm.Mov.Imm(asm.R0, 7),
			{OpCode: asm.Div.Op32(asm.ImmSource), Dst: asm.R0, Constant: 1 << 32},
			asm.Return(),
		}, "insn 1: immediate 4294967296 does not fit in 32 bits"},
		{"mov 1<<40", asm.Instructions{
			{OpCode: asm.Mov.Op(asm.ImmSource), Dst: asm.R0, Constant: 1 << 40},
			asm.Return(),
		}, "insn 0: immediate 1099511627776 does not fit in 32 bits"},
		{"unresolved label", asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.Mov.Imm(asm.R0, 1),
			asm.Return().WithSymbol("out"),
		}, `insn 1: unresolved reference to "out"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := vm.Load(tt.insns); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBudgetCountsExactly(t *testing.T) {
	p := load(t, "mov %r0, 0\nmov %r1, 10\nL:\nadd %r0, 1\njlt %r0, %r1, L\nexit")
	m := vm.NewMachine(vm.Options{})
	if _, err := m.Run(p); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Executed(), uint64(2+10*2+1); got != want {
		t.Fatalf("Executed() = %d, want %d", got, want)
	}
	m = vm.NewMachine(vm.Options{Budget: 22})
	if _, err := m.Run(p); !errors.Is(err, vm.ErrBudget) {
		t.Fatalf("budget 22 of 23 needed: err = %v", err)
	}
	m = vm.NewMachine(vm.Options{Budget: 23})
	if _, err := m.Run(p); err != nil {
		t.Fatalf("budget 23 of 23 needed: %v", err)
	}
}

type recordingHelpers struct{ calls []string }

func (h *recordingHelpers) Call(m *vm.Machine, id uint32, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	h.calls = append(h.calls, fmt.Sprintf("%d(%d,%d)", id, r1, r2))
	switch id {
	case 1: // sum the bytes at r1..r1+r2
		b, err := m.Bytes(r1, r2, false)
		if err != nil {
			return 0, err
		}
		s := uint64(0)
		for _, c := range b {
			s += uint64(c)
		}
		return s, nil
	case 2:
		return 0, errors.New("boom")
	}
	return 0, fmt.Errorf("unknown helper %d", id)
}

func TestHelpers(t *testing.T) {
	h := &recordingHelpers{}
	m := vm.NewMachine(vm.Options{Helpers: h})
	got, err := m.RunRaw(load(t, "call 1\nexit"), []byte{1, 2, 3})
	if err != nil || got != 6 {
		t.Fatalf("r0 = %d, err = %v", got, err)
	}
	_, err = m.RunRaw(load(t, "add %r2, 1\ncall 1\nexit"), []byte{1, 2, 3})
	if !errors.Is(err, vm.ErrOutOfBounds) || !strings.Contains(err.Error(), "insn 1:") {
		t.Fatalf("helper reading past the end: err = %v", err)
	}
	_, err = m.RunRaw(load(t, "mov %r3, 2\ncall %r3\nexit"), nil)
	if !errors.Is(err, vm.ErrHelper) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing helper via callx: err = %v", err)
	}
}

func TestRunAtEntry(t *testing.T) {
	p := load(t, "mov %r0, 1\nexit\nmov %r0, 2\nexit\nlddw %r0, 3\nexit")
	m := vm.NewMachine(vm.Options{})
	if got, _ := m.RunAt(p, 2); got != 2 {
		t.Fatalf("RunAt(2) = %d", got)
	}
	for _, bad := range []int{-1, 5, 7, 100} {
		if _, err := m.RunAt(p, bad); err == nil {
			t.Fatalf("RunAt(%d) accepted", bad)
		}
	}
	if _, err := m.Run(p, 1, 2, 3, 4, 5, 6); err == nil {
		t.Fatal("six arguments accepted")
	}
}

func TestNoAllocsPerRun(t *testing.T) {
	p := load(t, "mov %r0, 0\nL:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nsub %r2, 1\njne %r2, 0, L\nexit")
	buf := make([]byte, 72)
	for _, mem := range [][]byte{buf[:64], buf[1:65]} { // the second runs on RunRaw's aligned copy
		for _, unchecked := range []bool{false, true} {
			m := vm.NewMachine(vm.Options{Unchecked: unchecked})
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := m.RunRaw(p, mem); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("unchecked=%v, len %d at host offset %d: %.1f allocations per run, want 0",
					unchecked, len(mem), len(buf)-cap(mem), allocs)
			}
		}
	}
}
