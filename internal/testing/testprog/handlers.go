package testprog

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// Src is one handler of a test object: its name and its assembly.
type Src struct {
	Name string
	Asm  string
}

// Object assembles the handlers one after the other into an object with
// the given regions; handler i gets object id i.
func Object(t testing.TB, regions []bytecode.Region, handlers ...Src) *bytecode.Object {
	t.Helper()
	var all asm.Instructions
	o := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Source: "test.s", Regions: regions}
	slot := 0
	for i, h := range handlers {
		insns, err := bytecode.Assemble(h.Asm)
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		o.Handlers = append(o.Handlers, bytecode.Handler{Name: h.Name, ID: uint32(i), Entry: slot})
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

// Handlers of the runtime's tests, in the assembly syntax.
const (
	NullAsm = "mov %r0, 0\nexit"
	// ErrAsm fails with error code 42.
	ErrAsm = "mov %r0, -42\nexit"
	// LoopAsm runs a 100-iteration loop: about 300 instructions.
	LoopAsm = `
mov %r0, 0
mov %r2, 0
loop:
add %r0, 1
add %r2, 1
jlt %r2, 100, loop
mov %r0, 0
exit`
	// TraceAsm calls trace, a host-only helper, on 8 bytes of "traced!\n".
	TraceAsm = `
lddw %r1, 0x0a21646563617274
stxdw [%r10-8], %r1
mov %r1, %r10
add %r1, -8
mov %r2, 8
call 5
mov %r0, 0
exit`
	// SendAsm sends 8 zero bytes to handler 3 on node 7.
	SendAsm = `
stdw [%r10-8], 0
mov %r1, 7
mov %r2, 3
mov %r3, %r10
add %r3, -8
mov %r4, 8
call 6
mov %r0, 0
exit`
	// ForwardAsm forwards the request to handler 1 on node 9.
	ForwardAsm = `
mov %r1, 9
mov %r2, 1
call 7
jne %r0, 0, refused
lddw %r0, 0x8000000000000000
exit
refused:
mov %r0, -5
exit`
	// IncrAsm adds 1 to the u64 at region 0, atomically.
	IncrAsm = `
lddw %r1, region[0]
mov %r2, 1
lock add [%r1+0], %r2
mov %r0, 0
exit`
)

// ValueAsm replies with the u64 at region 0 plus k (8 bytes).
func ValueAsm(k int) string {
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
