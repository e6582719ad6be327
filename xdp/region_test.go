package xdp

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestRegionShared: a region's bytes are the kernel's: a program run in
// BPF_PROG_TEST_RUN reads what Go wrote into Region.Bytes and Go reads
// what the program wrote, at both ends of a 64 MiB region, with no copy
// in between.
func TestRegionShared(t *testing.T) {
	needKernel(t)
	const size = 64 << 20
	r, err := NewRegion(size)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Bytes()) != size || r.Size() != size || r.FD() <= 0 {
		t.Fatalf("Bytes %d, Size %d, FD %d", len(r.Bytes()), r.Size(), r.FD())
	}
	// For off in {0, size-16}: *(off+8) = *(off) * 3 + 1.
	e := newEmitter("region")
	for _, off := range []uint32{0, size - 16} {
		e.add(
			mapValue(asm.R1, "region", off),
			asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
			asm.Mul.Imm(asm.R2, 3),
			asm.Add.Imm(asm.R2, 1),
			asm.StoreMem(asm.R1, 8, asm.R2, asm.DWord),
		)
	}
	e.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	insns, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := loadProgram("naam_test_region", insns, map[string]*ebpf.Map{"region": r.m})
	if err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	defer prog.Close()
	b := r.Bytes()
	for round := uint64(1); round <= 3; round++ {
		binary.LittleEndian.PutUint64(b[0:], 100*round)
		binary.LittleEndian.PutUint64(b[size-16:], 7*round)
		if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64)}); err != nil {
			t.Fatal(err)
		}
		if got, want := binary.LittleEndian.Uint64(b[8:]), 300*round+1; got != want {
			t.Fatalf("round %d: Go reads %d at 8, the program wrote %d", round, got, want)
		}
		if got, want := binary.LittleEndian.Uint64(b[size-8:]), 21*round+1; got != want {
			t.Fatalf("round %d: Go reads %d at the end, the program wrote %d", round, got, want)
		}
	}
	// The map holds the same bytes (the kernel's view through the syscall).
	v := make([]byte, size+regionSlack)
	if err := r.m.Lookup(uint32(0), v); err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint64(v[8:]) != 901 {
		t.Fatalf("the map's value says %d at 8", binary.LittleEndian.Uint64(v[8:]))
	}
}

func TestNewRegionErrors(t *testing.T) {
	for _, size := range []uint64{0, MaxRegionSize + 1} {
		if _, err := NewRegion(size); err == nil || !strings.Contains(err.Error(), "XDP regions hold") {
			t.Errorf("NewRegion(%d): %v", size, err)
		}
	}
}
