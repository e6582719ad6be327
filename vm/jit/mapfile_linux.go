//go:build cgo && linux

package jit

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapsInPlace says whether a file-backed vm.Memory can be mapped into
// linear memory here.
const mapsInPlace = true

// mapFile maps the first n bytes of file fd shared at addr, replacing the
// linear memory there.
func mapFile(addr unsafe.Pointer, n int, fd int) error {
	p, err := unix.MmapPtr(fd, 0, addr, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		return fmt.Errorf("jit: map a memory into linear memory: %w", err)
	}
	if p != addr {
		return fmt.Errorf("jit: map a memory into linear memory: placed at %p, not %p", p, addr)
	}
	return nil
}

// unmapFile puts private zeroed memory back where mapFile mapped n bytes,
// as linear memory was before.
func unmapFile(addr unsafe.Pointer, n int) error {
	_, err := unix.MmapPtr(-1, 0, addr, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
	return err
}
