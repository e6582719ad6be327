package xdp

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The experiment behind spec/xdp.md's choice of MAC: the SHA-256
// compression function in BPF, as HMAC-SHA256 would need it in the kernel
// (three blocks per tag for a 64-byte payload: two for the inner hash of
// 104 bytes, one for the outer; the pad blocks are precomputed). It is a
// test and a benchmark, not part of the tier.

const fnSHA256 = "naam_sha256_block"

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// rotr32 emits x = x >>> n in 32 bits.
func rotr32(e *emitter, x, tmp asm.Register, n int32) {
	e.add(asm.Mov.Reg32(tmp, x), asm.LSh.Imm32(tmp, 32-n), asm.RSh.Imm32(x, n), asm.Or.Reg32(x, tmp))
}

// emitSHA256Block appends fnSHA256: r1 the state (8 u32, host order),
// r2 a 64-byte block; the state is updated in place.
func emitSHA256Block(e *emitter) {
	const wBase, statePtr = -256, -264
	w := func(i int) int16 { return int16(wBase + 4*i) }
	e.label(fnSHA256)
	e.add(asm.StoreMem(asm.R10, statePtr, asm.R1, asm.DWord))
	for i := range 16 {
		e.add(asm.LoadMem(asm.R3, asm.R2, int16(4*i), asm.Word), asm.HostTo(asm.BE, asm.R3, asm.Word), asm.StoreMem(asm.R10, w(i), asm.R3, asm.Word))
	}
	for i := 16; i < 64; i++ {
		// s0 = rotr7 ^ rotr18 ^ shr3 of w[i-15], in r4
		e.add(asm.LoadMem(asm.R3, asm.R10, w(i-15), asm.Word), asm.Mov.Reg32(asm.R4, asm.R3))
		rotr32(e, asm.R4, asm.R5, 7)
		e.add(asm.Mov.Reg32(asm.R0, asm.R3))
		rotr32(e, asm.R0, asm.R5, 18)
		e.add(asm.Xor.Reg32(asm.R4, asm.R0), asm.RSh.Imm32(asm.R3, 3), asm.Xor.Reg32(asm.R4, asm.R3))
		// s1 = rotr17 ^ rotr19 ^ shr10 of w[i-2], in r6
		e.add(asm.LoadMem(asm.R3, asm.R10, w(i-2), asm.Word), asm.Mov.Reg32(asm.R6, asm.R3))
		rotr32(e, asm.R6, asm.R5, 17)
		e.add(asm.Mov.Reg32(asm.R0, asm.R3))
		rotr32(e, asm.R0, asm.R5, 19)
		e.add(asm.Xor.Reg32(asm.R6, asm.R0), asm.RSh.Imm32(asm.R3, 10), asm.Xor.Reg32(asm.R6, asm.R3))
		e.add(
			asm.LoadMem(asm.R3, asm.R10, w(i-16), asm.Word),
			asm.Add.Reg32(asm.R3, asm.R4),
			asm.LoadMem(asm.R4, asm.R10, w(i-7), asm.Word),
			asm.Add.Reg32(asm.R3, asm.R4),
			asm.Add.Reg32(asm.R3, asm.R6),
			asm.StoreMem(asm.R10, w(i), asm.R3, asm.Word),
		)
	}
	// a…h in r1…r8 (roles rotate), r0 and r9 scratch.
	regs := []asm.Register{asm.R1, asm.R2, asm.R3, asm.R4, asm.R5, asm.R6, asm.R7, asm.R8}
	e.add(asm.LoadMem(asm.R9, asm.R10, statePtr, asm.DWord))
	for k, r := range regs {
		e.add(asm.LoadMem(r, asm.R9, int16(4*k), asm.Word))
	}
	for i := range 64 {
		a, b, c, d, ee, f, g, h := regs[0], regs[1], regs[2], regs[3], regs[4], regs[5], regs[6], regs[7]
		e.add(asm.Mov.Reg32(asm.R0, ee))
		rotr32(e, asm.R0, asm.R9, 14)
		e.add(asm.Xor.Reg32(asm.R0, ee))
		rotr32(e, asm.R0, asm.R9, 5)
		e.add(asm.Xor.Reg32(asm.R0, ee))
		rotr32(e, asm.R0, asm.R9, 6)
		e.add(
			asm.Add.Reg32(h, asm.R0),
			asm.Mov.Reg32(asm.R9, f), asm.Xor.Reg32(asm.R9, g), asm.And.Reg32(asm.R9, ee), asm.Xor.Reg32(asm.R9, g),
			asm.Add.Reg32(h, asm.R9),
			asm.Add.Imm32(h, int32(sha256K[i])),
			asm.LoadMem(asm.R9, asm.R10, w(i), asm.Word),
			asm.Add.Reg32(h, asm.R9),
			asm.Add.Reg32(d, h),
			asm.Mov.Reg32(asm.R0, a),
		)
		rotr32(e, asm.R0, asm.R9, 9)
		e.add(asm.Xor.Reg32(asm.R0, a))
		rotr32(e, asm.R0, asm.R9, 11)
		e.add(asm.Xor.Reg32(asm.R0, a))
		rotr32(e, asm.R0, asm.R9, 2)
		e.add(
			asm.Add.Reg32(h, asm.R0),
			asm.Mov.Reg32(asm.R0, a), asm.Or.Reg32(asm.R0, b), asm.And.Reg32(asm.R0, c),
			asm.Mov.Reg32(asm.R9, a), asm.And.Reg32(asm.R9, b), asm.Or.Reg32(asm.R0, asm.R9),
			asm.Add.Reg32(h, asm.R0),
		)
		regs = []asm.Register{h, a, b, c, d, ee, f, g}
	}
	e.add(asm.LoadMem(asm.R9, asm.R10, statePtr, asm.DWord))
	for k, r := range regs {
		e.add(asm.LoadMem(asm.R0, asm.R9, int16(4*k), asm.Word), asm.Add.Reg32(asm.R0, r), asm.StoreMem(asm.R9, int16(4*k), asm.R0, asm.Word))
	}
	e.add(asm.Return())
}

var sha256IV = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// sha256Program runs fnSHA256 blocks times over the memory map: the
// state at 0, the block at 64.
func sha256Program(t testing.TB, blocks int) (*ebpf.Program, *ebpf.Map) {
	t.Helper()
	mem := testArray(t, "naam_test_mem", 128)
	e := newEmitter("sha")
	for range blocks {
		e.add(mapValue(asm.R1, "mem", 0), mapValue(asm.R2, "mem", 64), asm.Call.Label(fnSHA256))
	}
	e.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	emitSHA256Block(e)
	insns, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := loadProgram("naam_test_sha", insns, map[string]*ebpf.Map{"mem": mem})
	if err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	t.Cleanup(func() { prog.Close() })
	return prog, mem
}

// TestSHA256Kernel: the BPF compression function gives crypto/sha256's
// digest of a one-block message.
func TestSHA256Kernel(t *testing.T) {
	needKernel(t)
	prog, mem := sha256Program(t, 1)
	msg := []byte("SHA-256 in the kernel's XDP hook, one block")
	block := make([]byte, 64)
	copy(block, msg)
	block[len(msg)] = 0x80
	binary.BigEndian.PutUint64(block[56:], uint64(8*len(msg)))
	buf := make([]byte, 128)
	for i, v := range sha256IV {
		binary.LittleEndian.PutUint32(buf[4*i:], v)
	}
	copy(buf[64:], block)
	if err := mem.Update(uint32(0), buf, ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64)}); err != nil {
		t.Fatal(err)
	}
	if err := mem.Lookup(uint32(0), buf); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(msg)
	for i := range 8 {
		if have := binary.LittleEndian.Uint32(buf[4*i:]); have != binary.BigEndian.Uint32(want[4*i:]) {
			t.Fatalf("word %d: %#08x, want %#08x", i, have, binary.BigEndian.Uint32(want[4*i:]))
		}
	}
}

// BenchmarkSHA256Kernel: one compression, and the compressions of an
// HMAC-SHA256 tag over the 40 header bytes and a 64-byte payload (3) or a
// 1416-byte one (24: 23 for the inner hash of 1456 bytes and its padding,
// one for the outer), timed by the kernel.
func BenchmarkSHA256Kernel(b *testing.B) {
	needKernel(b)
	for _, blocks := range []int{1, 3, 24} {
		b.Run(map[int]string{1: "block", 3: "hmac-tag-64B", 24: "hmac-tag-1416B"}[blocks], func(b *testing.B) {
			prog, _ := sha256Program(b, blocks)
			kernelBench(b, prog, make([]byte, 64))
		})
	}
}

// kernelBench times prog in BPF_PROG_TEST_RUN, b.N runs in batches, and
// reports the kernel's time per run.
func kernelBench(b *testing.B, prog *ebpf.Program, data []byte) {
	b.Helper()
	var total time.Duration
	runs := 0
	for b.Loop() {
		// Each BPF_PROG_TEST_RUN of an XDP program with repeats costs a
		// fixed setup of milliseconds (the kernel registers it as an XDP
		// dispatcher); many repeats amortise it.
		_, d, err := prog.Benchmark(data, 100_000, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += d * 100_000
		runs += 100_000
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(runs), "kernel-ns/run")
}
