package vm_test

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/vm"
)

// TestMemory: NewMemory gives zeroed, aligned memory of the size asked,
// backed by a file on Linux, and refuses more than one segment.
func TestMemory(t *testing.T) {
	for _, size := range []uint64{0, 1, 8, 4097, 1 << 20} {
		m, err := vm.NewMemory(size)
		if err != nil {
			t.Fatalf("NewMemory(%d): %v", size, err)
		}
		b := m.Bytes()
		if uint64(len(b)) != size || m.Len() != int(size) {
			t.Errorf("NewMemory(%d): %d bytes", size, len(b))
		}
		if size > 0 && uintptr(unsafe.Pointer(&b[0]))&7 != 0 {
			t.Errorf("NewMemory(%d) is not 8-byte aligned", size)
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("NewMemory(%d): byte %d is %d", size, i, c)
			}
		}
		fd, n := m.FD()
		if size > 0 && runtime.GOOS == "linux" && (fd < 0 || uint64(n) < size || n%4096 != 0) {
			t.Errorf("NewMemory(%d): fd %d, file of %d bytes", size, fd, n)
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
	if h := vm.HeapMemory(16); h.Len() != 16 {
		t.Errorf("HeapMemory(16): %d bytes", h.Len())
	} else if fd, _ := h.FD(); fd != -1 {
		t.Errorf("HeapMemory has fd %d", fd)
	}
	for _, size := range []uint64{vm.MaxSegmentSize + 1, 1 << 40} {
		if _, err := vm.NewMemory(size); err == nil || !strings.Contains(err.Error(), "memory of "+itoa(size)+" bytes, at most 4294967295") {
			t.Errorf("NewMemory(%d): %v", size, err)
		}
	}
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// TestMemoryShared: an interpreted atomic on a Memory is seen through
// its host view at once.
func TestMemoryShared(t *testing.T) {
	mem, err := vm.NewMemory(8)
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, "mov %r2, 5\nlock add [%r1+0], %r2\nmov %r0, 0\nexit")
	m := vm.NewMachine(vm.Options{})
	for range 3 {
		if _, err := m.RunRawMemory(p, mem); err != nil {
			t.Fatal(err)
		}
	}
	if got := mem.Bytes()[0]; got != 15 {
		t.Errorf("counter %d after three adds of 5", got)
	}
}
