package xdp

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/internal/kernel"
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

// TestSipHashKernel: fnSipHash in the kernel gives the tag nicrt/wire's
// Codec seals with, for every payload length from 0 to 200 and the
// largest.
func TestSipHashKernel(t *testing.T) {
	needKernel(t)
	const (
		offKey, offHdr, offPay, offN, offOut = 0, 16, 56, 3000, 3008
		size                                 = 3024
		maxN                                 = wire.MaxPayload
	)
	mem := testArray(t, "naam_test_mem", size)
	e := newEmitter("test")
	done := e.fresh("done")
	e.add(
		mapValue(asm.R1, "mem", offN),
		asm.LoadMem(asm.R4, asm.R1, 0, asm.Word),
		asm.JGT.Imm(asm.R4, maxN, done),
		mapValue(asm.R1, "mem", offKey),
		mapValue(asm.R2, "mem", offHdr),
		mapValue(asm.R3, "mem", offPay),
		mapValue(asm.R5, "mem", offOut),
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
	defer prog.Close()

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
	lengths := []int{maxN}
	for n := range 201 {
		lengths = append(lengths, n)
	}
	buf := make([]byte, size)
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
		binary.LittleEndian.PutUint64(buf[offKey:], k0)
		binary.LittleEndian.PutUint64(buf[offKey+8:], k1)
		copy(buf[offHdr:], pkt[:40])
		copy(buf[offPay:], payload)
		binary.LittleEndian.PutUint32(buf[offN:], uint32(n))
		if err := mem.Update(uint32(0), buf, ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
		if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64), Repeat: 1}); err != nil {
			t.Fatal(err)
		}
		if err := mem.Lookup(uint32(0), buf); err != nil {
			t.Fatal(err)
		}
		if have, want := buf[offOut:offOut+16], pkt[40:56]; !bytes.Equal(have, want) {
			t.Fatalf("payload of %d bytes: kernel tag %x, Codec's %x", n, have, want)
		}
	}
}
