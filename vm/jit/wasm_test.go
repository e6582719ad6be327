package jit

import (
	"bytes"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// TestLEB128 pins the encodings against the values in the Wasm spec's
// examples and the edges of each width.
func TestLEB128(t *testing.T) {
	uTests := []struct {
		have uint64
		want []byte
	}{
		{0, []byte{0x00}}, {127, []byte{0x7f}}, {128, []byte{0x80, 0x01}}, {624485, []byte{0xe5, 0x8e, 0x26}},
		{1<<32 - 1, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tt := range uTests {
		if got := appendULEB(nil, tt.have); !bytes.Equal(got, tt.want) {
			t.Errorf("ULEB(%d) = % x, want % x", tt.have, got, tt.want)
		}
	}
	sTests := []struct {
		have int64
		want []byte
	}{
		{0, []byte{0x00}}, {-1, []byte{0x7f}}, {63, []byte{0x3f}}, {64, []byte{0xc0, 0x00}}, {-64, []byte{0x40}},
		{-65, []byte{0xbf, 0x7f}}, {-123456, []byte{0xc0, 0xbb, 0x78}},
		{-1 << 63, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}},
	}
	for _, tt := range sTests {
		if got := appendSLEB(nil, tt.have); !bytes.Equal(got, tt.want) {
			t.Errorf("SLEB(%d) = % x, want % x", tt.have, got, tt.want)
		}
	}
}

// TestTranslateBlocks: leaders are slot 0, entries, jump and call targets,
// the slots after jumps, calls and exits, and the end (fell off).
func TestTranslateBlocks(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		entries []int
		want    []int
		writes  bool
	}{
		{"straight", "mov %r0, 1\nexit", nil, []int{0, 2}, false},
		{"loop", "mov %r0, 0\nadd %r0, 1\njlt %r0, 9, -2\nexit", nil, []int{0, 1, 3, 4}, false},
		{"lddw and entry", "lddw %r0, 1\nexit\nmov %r0, 2\nexit", []int{3}, []int{0, 3, 5}, false},
		{"local call", "call local +1\nexit\nmov %r0, 2\nexit", nil, []int{0, 1, 2, 4}, false},
		{"store", "stb [%r1+0], 1\nexit", nil, []int{0, 2}, true},
		{"stack store only", "stb [%r10-1], 1\nexit", nil, []int{0, 2}, false},
		{"helper", "call 1\nexit", nil, []int{0, 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := translate(insns, append([]int{0}, tt.entries...), true)
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(tr.blocks, tt.want) {
				t.Errorf("blocks %v, want %v", tr.blocks, tt.want)
			}
			if tr.writes != tt.writes {
				t.Errorf("writes = %v, want %v", tr.writes, tt.writes)
			}
			if !bytes.HasPrefix(tr.wasm, []byte("\x00asm\x01\x00\x00\x00")) {
				t.Errorf("module starts % x", tr.wasm[:8])
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
