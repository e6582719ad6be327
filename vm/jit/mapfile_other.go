//go:build cgo && !linux

package jit

import (
	"errors"
	"unsafe"
)

// mapsInPlace says whether a file-backed vm.Memory can be mapped into
// linear memory here: not on this platform, where every segment is copied.
const mapsInPlace = false

func mapFile(unsafe.Pointer, int, int) error {
	return errors.New("jit: memories cannot be mapped in place on this platform")
}

func unmapFile(unsafe.Pointer, int) error { return nil }
