package xdp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/nicrt/wire"
)

// needKernel skips a test that needs to load BPF programs here.
func needKernel(t testing.TB) {
	t.Helper()
	if err := kernel.Available(); err != nil {
		t.Skip(err)
	}
}

// testArray makes a one-element array map of size bytes.
func testArray(t testing.TB, name string, size int) *ebpf.Map {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: name, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(size), MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// The memory of the SipHash test program.
const (
	sipOffKey, sipOffHdr, sipOffPay, sipOffN, sipOffOut = 0, 16, 56, 3000, 3008
	sipMemSize                                          = 3024
	sipMaxN                                             = wire.MaxPayload
)

// sipProgram loads a program that runs fnSipHash over its memory map:
// the key at sipOffKey, the header at sipOffHdr, the payload at
// sipOffPay, its length (u32) at sipOffN, the tag to sipOffOut.
func sipProgram(t testing.TB) (*ebpf.Program, *ebpf.Map) {
	t.Helper()
	mem := testArray(t, "naam_test_mem", sipMemSize)
	e := newEmitter("test")
	done := e.fresh("done")
	e.add(
		mapValue(asm.R1, "mem", sipOffN),
		asm.LoadMem(asm.R4, asm.R1, 0, asm.Word),
		asm.JGT.Imm(asm.R4, sipMaxN, done),
		mapValue(asm.R1, "mem", sipOffKey),
		mapValue(asm.R2, "mem", sipOffHdr),
		mapValue(asm.R3, "mem", sipOffPay),
		mapValue(asm.R5, "mem", sipOffOut),
		asm.Call.Label(fnSipHash),
	)
	e.label(done)
	e.add(asm.Mov.Imm(asm.R0, 2), asm.Return())
	emitSipHash(e)
	insns, err := e.finish()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := loadProgram("naam_test_sip", insns, map[string]*ebpf.Map{"mem": mem})
	if err != nil {
		t.Fatalf("%v\n%+v", err, err)
	}
	t.Cleanup(func() { prog.Close() })
	return prog, mem
}

// BenchmarkSipHashKernel: one tag over the header and a 64-byte or a
// 1416-byte payload, timed by the kernel.
func BenchmarkSipHashKernel(b *testing.B) {
	needKernel(b)
	for _, n := range []int{0, 64, 1024, sipMaxN} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			prog, mem := sipProgram(b)
			buf := make([]byte, sipMemSize)
			binary.LittleEndian.PutUint32(buf[sipOffN:], uint32(n))
			if err := mem.Update(uint32(0), buf, ebpf.UpdateAny); err != nil {
				b.Fatal(err)
			}
			kernelBench(b, prog, make([]byte, 64))
		})
	}
}

// TestSipHashKernel: fnSipHash in the kernel gives the tag nicrt/wire's
// Codec seals with, for every payload length from 0 to 200 and the
// largest.
func TestSipHashKernel(t *testing.T) {
	needKernel(t)
	prog, mem := sipProgram(t)
	key, err := wire.NewKeyAlg(wire.MACSipHash128, []byte("a tenant secret of 32 bytes ....."))
	if err != nil {
		t.Fatal(err)
	}
	codec, err := wire.NewCodec(wire.Config{Keys: wire.KeyMap{5: key}})
	if err != nil {
		t.Fatal(err)
	}
	k0, k1, _ := key.SipHashKey()
	r := rand.New(rand.NewPCG(3, 4))
	lengths := []int{sipMaxN}
	for n := range 201 {
		lengths = append(lengths, n)
	}
	buf := make([]byte, sipMemSize)
	for _, n := range lengths {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(r.Uint32())
		}
		h := wire.Header{Type: wire.TypeRequest, Tenant: 5, Handler: r.Uint32(), RequestID: r.Uint64(), Src: 1, Dst: 2}
		pkt, err := codec.Encode(nil, &h, payload)
		if err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = byte(r.Uint32()) // garbage after the payload must not matter
		}
		binary.LittleEndian.PutUint64(buf[sipOffKey:], k0)
		binary.LittleEndian.PutUint64(buf[sipOffKey+8:], k1)
		copy(buf[sipOffHdr:], pkt[:40])
		copy(buf[sipOffPay:], payload)
		binary.LittleEndian.PutUint32(buf[sipOffN:], uint32(n))
		if err := mem.Update(uint32(0), buf, ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
		if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: 1}); err != nil {
			t.Fatal(err)
		}
		if err := mem.Lookup(uint32(0), buf); err != nil {
			t.Fatal(err)
		}
		if have, want := buf[sipOffOut:sipOffOut+16], pkt[40:56]; !bytes.Equal(have, want) {
			t.Fatalf("payload of %d bytes: kernel tag %x, Codec's %x", n, have, want)
		}
	}
}
