//go:build cgo

package jit_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestSharedAtomics: machines running one vm.Memory at the same time,
// half interpreting and half through the JIT (checked and unchecked),
// each doing fetch-adds and cmpxchg increments and then spinning a while:
// every fetch-add returns a distinct old value and the counters end exact,
// so the JIT's atomics act on the same memory as the interpreter's during
// the run (a copy of it would lose the other machines' updates).
func TestSharedAtomics(t *testing.T) {
	src := `
mov %r2, 1
lock fetch add [%r1+0], %r2
mov %r0, %r2
mov %r3, 3
lock add32 [%r1+8], %r3
retry:
ldxdw %r4, [%r1+16]
mov %r5, %r4
add %r5, 1
mov %r6, %r0
mov %r0, %r4
lock cmpxchg [%r1+16], %r5
jne %r0, %r4, again
mov %r7, 0
spin:
add %r7, 1
jlt %r7, 300, spin
mov %r0, %r6
exit
again:
mov %r0, %r6
ja retry`
	insns, err := bytecode.Assemble(src)
	if err != nil {
		t.Fatal(err)
	}
	p := mustLoad(t, insns)
	checked, err := jit.Compile(insns, jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := jit.Compile(insns, jit.Options{Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := vm.NewMemory(24)
	if err != nil {
		t.Fatal(err)
	}
	if fd, _ := mem.FD(); fd < 0 {
		t.Skip("no memfd here: the JIT copies such memory")
	}
	execs := []vm.Executable{p, checked, p, fast}
	const runs = 3000
	olds := make([][]uint64, len(execs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, x := range execs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := vm.NewMachine(vm.Options{Unchecked: x == vm.Executable(p) && i == 2})
			defer m.Close()
			<-start // all at once
			for range runs {
				r0, err := m.RunRawMemory(x, mem)
				if err != nil {
					t.Error(err)
					return
				}
				olds[i] = append(olds[i], r0)
			}
		}()
	}
	close(start)
	wg.Wait()
	total := uint64(len(execs) * runs)
	seen := map[uint64]bool{}
	for _, list := range olds {
		for _, v := range list {
			if seen[v] || v >= total {
				t.Fatalf("fetch-add returned %d twice or out of range", v)
			}
			seen[v] = true
		}
	}
	b := mem.Bytes()
	le := binary.LittleEndian
	if le.Uint64(b) != total || le.Uint32(b[8:]) != uint32(3*total) || le.Uint64(b[16:]) != total {
		t.Errorf("counters %d, %d, %d after %d runs", le.Uint64(b), le.Uint32(b[8:]), le.Uint64(b[16:]), total)
	}
}

// TestInPlaceMemory: a large vm.Memory is mapped, not copied: a run
// reads its last byte and faults one past it, with the interpreter's
// fault. Memory of 2^32-1 bytes is more than a linear memory maps beside
// the JIT's own (a plain error naming the limit); more than that vm
// refuses, naming the size.
func TestInPlaceMemory(t *testing.T) {
	last, err := jit.Compile(mustAssemble(t, "mov %r3, %r1\nadd %r3, %r2\nsub %r3, 1\nldxb %r0, [%r3+0]\nexit"), jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	past, err := jit.Compile(mustAssemble(t, "mov %r3, %r1\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit"), jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		size       uint64
		last, past string // r0 or the error of each program
	}{
		{1 << 30, "0x5a", "insn 2: memory access out of bounds: 1-byte load at 0x340000000 (request+1073741824 (length 1073741824))"},
		{vm.MaxSegmentSize, "jit: the run's segments need 4294967296 bytes of linear memory, which holds ", ""},
	}
	for _, tt := range tests {
		mem, err := vm.NewMemory(tt.size)
		if err != nil {
			t.Fatal(err)
		}
		if fd, _ := mem.FD(); fd < 0 {
			t.Skip("no memfd here: the JIT copies such memory")
		}
		mem.Bytes()[tt.size-1] = 0x5a
		m := vm.NewMachine(vm.Options{})
		for _, c := range []struct {
			code *jit.Code
			want string
		}{{last, tt.last}, {past, tt.past}} {
			if c.want == "" {
				continue
			}
			r0, err := m.RunRawMemory(c.code, mem)
			have := fmt.Sprintf("%#x", r0)
			if err != nil {
				have = err.Error()
			}
			if !strings.Contains(have, c.want) {
				t.Errorf("%d bytes: %s, want %s", tt.size, have, c.want)
			}
		}
		m.Close()
		mem.Close()
	}
	if _, err := vm.NewMachine(vm.Options{}).RunRaw(last, make([]byte, 8)); err != nil {
		t.Errorf("an 8-byte slice: %v", err)
	}
}

func mustAssemble(t testing.TB, src string) asm.Instructions {
	t.Helper()
	insns, err := bytecode.Assemble(src)
	if err != nil {
		t.Fatal(err)
	}
	return insns
}
