package bytecode

import (
	"reflect"
	"testing"
)

func TestAccessRanges(t *testing.T) {
	have := []AccessRange{{Region: 0, Offset: 0, Length: 512}, {Region: 0, Offset: 500, Length: 0}, {Region: 0, Offset: 8, Length: 16}}
	buf := make([]byte, len(have)*AccessRangeSize)
	for i, r := range have {
		r.Put(buf[i*AccessRangeSize:])
	}
	got, err := DecodeAccessRanges(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, have) {
		t.Errorf("DecodeAccessRanges = %v, want %v", got, have)
	}
	o := smallObject(t)
	if err := o.CheckAccessRanges(got); err != nil {
		t.Errorf("CheckAccessRanges: %v", err)
	}
}

func TestAccessRangesInvalid(t *testing.T) {
	o := smallObject(t)
	tests := []struct {
		name   string
		reply  []byte
		ranges []AccessRange
		want   string
	}{
		{name: "partial range", reply: make([]byte, 13), want: "access ranges: 13 bytes is not a whole number of 12-byte ranges"},
		{name: "too many", reply: make([]byte, 65*AccessRangeSize), want: "access ranges: 65 ranges, at most 64"},
		{name: "no region", ranges: []AccessRange{{Region: 0, Length: 8}, {Region: 1, Length: 8}}, want: "access range 1: region 1, but the object has 1 regions"},
		{name: "past the end", ranges: []AccessRange{{Region: 0, Offset: 508, Length: 8}}, want: "access range 0: bytes 508..516 of region 0 (table), which has 512"},
		{name: "past 2^32", ranges: []AccessRange{{Region: 0, Offset: 1<<32 - 1, Length: 2}}, want: "access range 0: bytes 4294967295..4294967297 of region 0 (table), which has 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.reply != nil {
				_, err = DecodeAccessRanges(tt.reply)
			} else {
				err = o.CheckAccessRanges(tt.ranges)
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	// An empty range declares nothing, wherever it points.
	if err := o.CheckAccessRanges([]AccessRange{{Region: 9, Offset: 1 << 31}}); err != nil {
		t.Errorf("an empty range: %v", err)
	}
}

// FuzzDecodeAccessRanges: any reply decodes or is refused without a
// panic, and what decodes writes back to the same bytes.
func FuzzDecodeAccessRanges(f *testing.F) {
	f.Add(make([]byte, 24))
	f.Add([]byte{1, 0, 0, 0, 8, 0, 0, 0, 16, 0, 0, 0})
	f.Add(make([]byte, 13))
	f.Fuzz(func(t *testing.T, b []byte) {
		ranges, err := DecodeAccessRanges(b)
		if err != nil {
			return
		}
		out := make([]byte, len(ranges)*AccessRangeSize)
		for i, r := range ranges {
			r.Put(out[i*AccessRangeSize:])
		}
		if string(out) != string(b) {
			t.Fatalf("% x decodes to %v, which writes % x", b, ranges, out)
		}
		smallObject(t).CheckAccessRanges(ranges) // never panics
	})
}
