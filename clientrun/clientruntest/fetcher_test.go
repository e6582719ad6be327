package clientruntest

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
)

func TestMemFetcher(t *testing.T) {
	words := make([]uint64, 4)
	words[1] = 40
	region := unsafeBytes(words)
	f := NewMemFetcher(region)
	ctx := context.Background()
	dst := make([]byte, 8)
	if err := f.Read(ctx, []clientrun.Read{{AccessRange: bytecode.AccessRange{Offset: 8, Length: 8}, Dst: dst}}); err != nil || dst[0] != 40 {
		t.Fatalf("read: %v %x", err, dst)
	}
	if old, err := f.FetchAdd(ctx, 0, 8, 2); err != nil || old != 40 || words[1] != 42 {
		t.Errorf("fetch-add: %d %v, word %d", old, err, words[1])
	}
	if prev, err := f.CompareAndSwap(ctx, 0, 8, 42, 7); err != nil || prev != 42 || words[1] != 7 {
		t.Errorf("cas: %d %v, word %d", prev, err, words[1])
	}
	if prev, err := f.CompareAndSwap(ctx, 0, 8, 42, 9); err != nil || prev != 7 || words[1] != 7 {
		t.Errorf("failing cas: %d %v, word %d", prev, err, words[1])
	}
	if s := f.Stats(); s != (Stats{RoundTrips: 4, Reads: 1, Ranges: 1, Atomics: 3, Bytes: 8}) {
		t.Errorf("stats %+v", s)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{f.Read(ctx, []clientrun.Read{{AccessRange: bytecode.AccessRange{Offset: 30, Length: 8}, Dst: dst}}), "bytes 30..38 of region 0, which has 32"},
		{f.Read(ctx, []clientrun.Read{{AccessRange: bytecode.AccessRange{Region: 1, Length: 8}, Dst: dst}}), "region 1, 1 are served"},
		{second(NewMemFetcher(region[1:]).FetchAdd(ctx, 0, 0, 1)), "not 8-byte aligned"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("got %v, want %q", tc.err, tc.want)
		}
	}
}

func second(_ uint64, err error) error { return err }

// unsafeBytes views w as bytes.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 8*len(w))
}
