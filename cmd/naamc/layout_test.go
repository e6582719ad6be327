package main

import (
	"bytes"
	"testing"
	"unsafe"
)

func TestAlignedBytes(t *testing.T) {
	for _, n := range []uint64{0, 1, 3, 4, 8, 13} {
		b := alignedBytes(n)
		if uint64(len(b)) != n || !bytes.Equal(b, make([]byte, n)) {
			t.Errorf("alignedBytes(%d) = %x", n, b)
		}
		if n > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))&7 != 0 {
			t.Errorf("alignedBytes(%d) is not 8-byte aligned", n)
		}
	}
}
