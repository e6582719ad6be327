package vm_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/naam-project/naam/vm"
)

// TestRawMemorySize: raw mode takes memory of up to 2^32-1 bytes, whose
// last offset is the last one its segment has, and refuses more, naming
// the size, before touching it: an offset of 2^32 would be the next
// segment's. The memory is reserved address space (MAP_NORESERVE), only
// the last page ever touched; what is refused is mapped without access
// rights, so that touching it would crash the test.
func TestRawMemorySize(t *testing.T) {
	last := load(t, "mov %r3, %r1\nadd %r3, %r2\nsub %r3, 1\nldxb %r0, [%r3+0]\nexit")
	past := load(t, "mov %r3, %r1\nadd %r3, %r2\nldxb %r0, [%r3+0]\nexit")
	tests := []struct {
		size uint64
		prog *vm.Program
		want string // r0 as "0x5a", or the error
	}{
		{vm.MaxSegmentSize, last, "0x5a"},
		{vm.MaxSegmentSize, past, "insn 2: memory access out of bounds: 1-byte load at 0x3ffffffff (request+4294967295 (length 4294967295))"},
		{1 << 32, last, "vm: raw memory of 4294967296 bytes, more than one segment holds (4294967295)"},
		{1<<32 + 8, last, "vm: raw memory of 4294967304 bytes, more than one segment holds (4294967295)"},
		{1 << 33, last, "vm: raw memory of 8589934592 bytes, more than one segment holds (4294967295)"},
	}
	for _, tt := range tests {
		prot := unix.PROT_READ | unix.PROT_WRITE
		if tt.size > vm.MaxSegmentSize {
			prot = unix.PROT_NONE
		}
		buf, err := unix.Mmap(-1, 0, int(tt.size), prot, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err != nil {
			t.Skipf("cannot reserve %d bytes of address space: %v", tt.size, err)
		}
		if prot != unix.PROT_NONE {
			buf[tt.size-1] = 0x5a
		}
		m := vm.NewMachine(vm.Options{})
		r0, err := m.RunRaw(tt.prog, buf)
		have := "0x5a"
		if err != nil {
			have = err.Error()
		} else if r0 != 0x5a {
			have = "r0 " + itoa(r0)
		}
		if have != tt.want {
			t.Errorf("%d bytes: %s, want %s", tt.size, have, tt.want)
		}
		unix.Munmap(buf)
	}
	if _, err := vm.NewMemory(1 << 32); err == nil || !strings.Contains(err.Error(), "memory of 4294967296 bytes") {
		t.Errorf("NewMemory(2^32): %v", err)
	}
}
