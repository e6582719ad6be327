package msgpackshape

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		b      []byte
		want   string // substring of the error; "" accepts unless reject
		reject bool
	}{
		{"fixint", []byte{0x01}, "", false},
		{"empty array", []byte{0x90}, "", false},
		{"map of one", []byte{0x81, 0xa1, 'k', 0x02}, "", false},
		{"nothing", nil, "byte 0", false},
		{"trailing byte", []byte{0x01, 0x02}, "trailing data after the thing", false},
		{"string past the end", []byte{0xa5, 'a'}, "", true},
		{"array claims more than the bytes", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, "", true},
		{"too deep", []byte{0x91, 0x91, 0x91, 0x91, 0x01}, "nested deeper than 3 levels", false},
		{"as deep as allowed", []byte{0x91, 0x91, 0x01}, "", false},
	}
	for _, tt := range tests {
		err := Check(tt.b, 3, "thing")
		switch {
		case tt.reject:
			if err == nil {
				t.Errorf("%s: accepted", tt.name)
			}
		case tt.want == "":
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestOrEmptyOrNil(t *testing.T) {
	if s := OrEmpty[int](nil); s == nil || len(s) != 0 {
		t.Errorf("OrEmpty(nil) = %#v", s)
	}
	if s := OrNil([]int{}); s != nil {
		t.Errorf("OrNil(empty) = %#v", s)
	}
	if s := OrNil([]int{1}); len(s) != 1 {
		t.Errorf("OrNil([1]) = %#v", s)
	}
}
