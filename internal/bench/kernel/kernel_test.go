package kernel_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/internal/bench/kernel"
)

func skipUnlessAvailable(t testing.TB) {
	t.Helper()
	if err := kernel.Available(); err != nil {
		t.Skip(err)
	}
}

func TestRunReturnsMemoryAndR0(t *testing.T) {
	skipUnlessAvailable(t)
	// *(u64 *)(r1+8) = r2 (the length); r0 = *(u64 *)(r1+0) + 0x100000000
	body := asm.Instructions{
		asm.StoreMem(asm.R1, 8, asm.R2, asm.DWord),
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.LoadImm(asm.R3, 1<<32, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R3),
		asm.Return(),
	}
	p, err := kernel.Load(body, 16)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	defer p.Close()
	mem := make([]byte, 16)
	binary.LittleEndian.PutUint64(mem, 7)
	r0, err := p.Run(mem)
	if err != nil {
		t.Fatal(err)
	}
	if r0 != 1<<32+7 {
		t.Errorf("r0 = %#x, want %#x", r0, uint64(1<<32+7))
	}
	if got := binary.LittleEndian.Uint64(mem[8:]); got != 16 {
		t.Errorf("stored r2 = %d, want 16", got)
	}
	if jit, err := p.JITed(); err != nil {
		t.Log("JITed:", err)
	} else {
		status, _ := kernel.JITStatus()
		t.Logf("JITed=%v; %s", jit, status)
	}
}

func TestRejected(t *testing.T) {
	skipUnlessAvailable(t)
	// An access at r1+16 is outside a 16-byte memory.
	body := asm.Instructions{asm.LoadMem(asm.R0, asm.R1, 16, asm.DWord), asm.Return()}
	p, err := kernel.Load(body, 16)
	if err == nil {
		p.Close()
		t.Fatal("out-of-bounds load accepted")
	}
	if !errors.Is(err, kernel.ErrRejected) {
		t.Fatalf("err = %v, want ErrRejected", err)
	}
	t.Log(err)
}

func TestOverhead(t *testing.T) {
	skipUnlessAvailable(t)
	ns, err := kernel.Overhead(100_000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("empty body: %.0f ns/run", ns)
}

// TestBuiltAtomics checks that atomics made with cilium/ebpf's builders
// reach the kernel with their operation: cilium/ebpf v0.22.0 alone would
// encode asm.FetchAdd.Mem(...) as a plain add.
func TestBuiltAtomics(t *testing.T) {
	skipUnlessAvailable(t)
	body := asm.Instructions{
		asm.Mov.Imm(asm.R3, 5),
		asm.StoreMem(asm.R1, 0, asm.R3, asm.DWord),
		asm.Mov.Imm(asm.R0, 2),
		asm.FetchAdd.Mem(asm.R1, asm.R0, asm.DWord, 0), // r0 = 5, mem = 7
		asm.Mov.Imm(asm.R4, 9),
		asm.CmpXchg.Mem(asm.R1, asm.R4, asm.DWord, 0), // r0 (5) != 7: r0 = 7
		asm.Return(),
	}
	p, err := kernel.Load(body, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mem := make([]byte, 8)
	r0, err := p.Run(mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(mem); r0 != 7 || got != 7 {
		t.Errorf("r0 = %d, memory = %d; want 7 and 7", r0, got)
	}
}
