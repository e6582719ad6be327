package xdp

import "unsafe"

// unsafeBytes views 8-byte-aligned words as bytes.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 8*len(w))
}
