package bytecode

import (
	"bytes"
	"testing"
)

func TestPutUintAndUint(t *testing.T) {
	for _, tc := range []struct {
		size int
		have uint64
		want []byte
		back uint64
	}{
		{1, 0x1ff, []byte{0xff}, 0xff},
		{2, 0x12345, []byte{0x45, 0x23}, 0x2345},
		{4, 0xdeadbeef, []byte{0xef, 0xbe, 0xad, 0xde}, 0xdeadbeef},
		{8, 1<<64 - 2, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 2},
	} {
		b := make([]byte, tc.size)
		PutUint(b, tc.have)
		if !bytes.Equal(b, tc.want) || Uint(b) != tc.back {
			t.Errorf("%d bytes of %#x: %x, back %#x; want %x, %#x", tc.size, tc.have, b, Uint(b), tc.want, tc.back)
		}
	}
}
