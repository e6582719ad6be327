package nicrt

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// src is one handler of a test object: its name and its assembly.
type src struct {
	name string
	asm  string
}

// object assembles the handlers one after the other into an object with
// the given regions; handler i gets object id i.
func object(t testing.TB, regions []bytecode.Region, handlers ...src) *bytecode.Object {
	t.Helper()
	var all asm.Instructions
	o := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Source: "test.s", Regions: regions}
	slot := 0
	for i, h := range handlers {
		insns, err := bytecode.Assemble(h.asm)
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		o.Handlers = append(o.Handlers, bytecode.Handler{Name: h.name, ID: uint32(i), Entry: slot})
		_, n := bytecode.Slots(insns)
		slot += n
		all = append(all, insns...)
	}
	code, err := bytecode.Encode(all)
	if err != nil {
		t.Fatal(err)
	}
	o.Code = code
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

// Test handlers.
const (
	nullAsm = "mov %r0, 0\nexit"
	// errAsm fails with error code 42.
	errAsm = "mov %r0, -42\nexit"
	// loopAsm runs a 100-iteration loop: about 300 instructions.
	loopAsm = `
mov %r0, 0
mov %r2, 0
loop:
add %r0, 1
add %r2, 1
jlt %r2, 100, loop
mov %r0, 0
exit`
	// traceAsm calls trace, a host-only helper, on 8 bytes of "traced!\n".
	traceAsm = `
lddw %r1, 0x0a21646563617274
stxdw [%r10-8], %r1
mov %r1, %r10
add %r1, -8
mov %r2, 8
call 5
mov %r0, 0
exit`
	// sendAsm sends 8 zero bytes to handler 3 on node 7.
	sendAsm = `
stdw [%r10-8], 0
mov %r1, 7
mov %r2, 3
mov %r3, %r10
add %r3, -8
mov %r4, 8
call 6
mov %r0, 0
exit`
	// forwardAsm forwards the request to handler 1 on node 9.
	forwardAsm = `
mov %r1, 9
mov %r2, 1
call 7
jne %r0, 0, refused
lddw %r0, 0x8000000000000000
exit
refused:
mov %r0, -5
exit`
	// incrAsm adds 1 to the u64 at region 0, atomically.
	incrAsm = `
lddw %r1, region[0]
mov %r2, 1
lock add [%r1+0], %r2
mov %r0, 0
exit`
)

// valueAsm replies with the u64 at region 0 plus k (8 bytes).
func valueAsm(k int) string {
	return fmt.Sprintf(`
ldxdw %%r2, [%%r1+16]
ldxdw %%r3, [%%r1+24]
mov %%r4, %%r2
add %%r4, 8
jgt %%r4, %%r3, short
lddw %%r5, region[0]
ldxdw %%r6, [%%r5+0]
add %%r6, %d
stxdw [%%r2+0], %%r6
mov %%r0, 8
exit
short:
mov %%r0, -1
exit`, k)
}

func newNIC(t testing.TB, cfg Config) *NIC {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func install(t testing.TB, n *NIC, tenant uint64, o *bytecode.Object) *Program {
	t.Helper()
	p, err := n.Install(tenant, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func register(t testing.TB, n *NIC, tenant uint64, name string, size uint64, opts RegionOptions) *Region {
	t.Helper()
	r, err := n.Register(tenant, name, size, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func id(t testing.TB, p *Program, name string) uint32 {
	t.Helper()
	h, ok := p.HandlerID(name)
	if !ok {
		t.Fatalf("no handler %q", name)
	}
	return h
}

func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// recorder is an Outbox that records, and can hold a core inside Send
// until released (to fill queues deterministically).
type recorder struct {
	mu       sync.Mutex
	sent     []sent
	forwards []sent
	hold     chan struct{} // when not nil, Send waits on it
	entered  chan struct{} // when not nil, Send signals it first
	refuse   error
}

type sent struct {
	from    Origin
	node    uint64
	handler uint32
	payload []byte
}

func (r *recorder) Send(from Origin, node uint64, handler uint32, payload []byte) error {
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.sent = append(r.sent, sent{from, node, handler, append([]byte{}, payload...)})
	return nil
}

func (r *recorder) Forward(from Origin, req *Message, node uint64, handler uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.forwards = append(r.forwards, sent{from, node, handler, append([]byte{}, req.Payload...)})
	return nil
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
