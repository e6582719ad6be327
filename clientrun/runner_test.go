package clientrun_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/clientrun/clientruntest"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/vm"
)

// unitSource has handlers for each part of a run: declared ranges that
// merge, reads past the declaration, atomics, an access function that
// fails, and handlers that cannot run at the client.
const unitSource = `
struct Rec {
    a: u64
    b: u64
    next: u32
    pad: u32 // size 24
}

region recs: [Rec; 1000] ro
region counts: [u64; 64] rw

fn check(i: u32) -> u32 {
    if i >= 1000 {
        fail(7)
    }
    return i
}

// Two ranges that touch, one that overlaps them, one apart: two fetches
// in one round trip.
handler pair(i: u32) -> u64 reads recs[i; 2], recs[i + 2], recs[i + 1].b, recs[i + 100] {
    return recs[i].a + recs[i + 1].b + recs[i + 2].next as u64 + recs[i + 100].a
}

// Declares rec i, then follows next twice: two more round trips.
handler follow(i: u32) -> u64 reads recs[i] {
    let j = recs[i].next
    let k = recs[j].next
    return recs[k].a
}

// No reads clause: every read is on demand.
handler plain(i: u32) -> u64 {
    return recs[i].b
}

// Declares nothing for an index out of range, through a fn that fails.
handler checked(i: u32) -> u64 reads recs[check(i)] {
    if i >= 1000 {
        return 0
    }
    return recs[i].a
}

// FETCH-ADD and CAS, then a read of the word they changed.
handler bump(i: u32, old: u64) -> (added: u64, swapped: u64, now: u64) reads counts[i % 64] {
    let c = &counts[i % 64]
    added = atomic_add(c, 10)
    swapped = atomic_cas(c, old, 99)
    now = counts[i % 64]
    return
}

// FETCH-ADD alone, then a read of the word.
handler inc(i: u32) -> (old: u64, now: u64) {
    old = atomic_add(&counts[i % 64], 3)
    now = counts[i % 64]
    return
}

// Reads rec i's b, then rec i + 1's: with a small FetchSize the first
// fetch brings the start of rec i + 1, the second the rest.
handler two(i: u32) -> u64 {
    return recs[i].b + recs[i + 1].b
}

// Fails with 5 or 6 for a rec whose a says so: a fail after a read.
handler pick(i: u32) -> u64 reads recs[i] {
    let a = recs[i].a
    if a == 5000 {
        fail(5)
    }
    if a == 6000 {
        fail(6)
    }
    return a
}

handler store(i: u32) -> u64 {
    counts[i % 64] = 1
    return 0
}
`

func unitObject(t *testing.T) *bytecode.Object {
	t.Helper()
	obj, err := compiler.Compile(lang.NewFileSet(), "unit.naam", []byte(unitSource))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// unitRegions: rec i has a = i, b = 1000 + i, next = (i * 7 + 3) % 1000;
// the counts are 0.
func unitRegions() [][]byte {
	recs := make([]byte, 24*1000)
	for i := range 1000 {
		binary.LittleEndian.PutUint64(recs[24*i:], uint64(i))
		binary.LittleEndian.PutUint64(recs[24*i+8:], uint64(1000+i))
		binary.LittleEndian.PutUint32(recs[24*i+16:], uint32((i*7+3)%1000))
	}
	return [][]byte{recs, make([]byte, 8*64)}
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		handler string
		req     []byte
		want    clientrun.Stats
	}{
		{"merged declaration", "pair", u32(10), clientrun.Stats{RoundTrips: 1, Declared: 2, BytesRead: 3*24 + 24}},
		// rec 5 is declared; its next (38) and that one's (269) are extra
		// reads of 512 bytes each.
		{"follow", "follow", u32(5), clientrun.Stats{RoundTrips: 3, Declared: 1, ExtraReads: 2, BytesRead: 24 + 512 + 512}},
		{"no declaration", "plain", u32(3), clientrun.Stats{RoundTrips: 1, ExtraReads: 1, BytesRead: 512}},
		{"read at the region's end", "plain", u32(999), clientrun.Stats{RoundTrips: 1, ExtraReads: 1, BytesRead: 16}},
		{"access function fails", "checked", u32(5000), clientrun.Stats{AccessFailed: true}},
		{"access function succeeds", "checked", u32(4), clientrun.Stats{RoundTrips: 1, Declared: 1, BytesRead: 24}},
		{"atomics", "bump", append(u32(3), make([]byte, 12)...), clientrun.Stats{RoundTrips: 3, Declared: 1, Atomics: 2, BytesRead: 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := clientruntest.NewTwin(unitObject(t), unitRegions(), clientrun.Config{FetchSize: 512}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := w.Call(context.Background(), clientrun.Call{Handler: tc.handler, Request: tc.req})
			if err != nil {
				t.Fatal(err)
			}
			if !res.AtClient {
				t.Fatal("not run at the client")
			}
			if res.Client.Stats != tc.want {
				t.Errorf("stats %+v, want %+v", res.Client.Stats, tc.want)
			}
			if fs := w.Fetcher.Stats(); fs.RoundTrips != tc.want.RoundTrips || fs.Bytes != tc.want.BytesRead {
				t.Errorf("the fetcher saw %+v", fs)
			}
		})
	}
}

// The atomics are the node's: the client sees what FETCH-ADD and CAS
// returned, and its later read of the word sees their result.
func TestRunAtomics(t *testing.T) {
	w, err := clientruntest.NewTwin(unitObject(t), unitRegions(), clientrun.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ old, added, swapped, now uint64 }{
		{10, 0, 10, 99}, {0, 99, 109, 109}, {119, 109, 119, 99}, {99, 99, 109, 109},
	} {
		req := append(u32(70), make([]byte, 4)...)
		req = binary.LittleEndian.AppendUint64(req, tc.old)
		res, err := w.Call(context.Background(), clientrun.Call{Handler: "bump", Request: req})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		r := res.Client.Reply
		if got := [3]uint64{le(r[0:]), le(r[8:]), le(r[16:])}; got != [3]uint64{tc.added, tc.swapped, tc.now} {
			t.Errorf("call %d: reply %v, want %v", i, got, [3]uint64{tc.added, tc.swapped, tc.now})
		}
	}
	if got := le(w.Client[1][8*6:]); got != 109 {
		t.Errorf("counts[6] = %d at the client's node", got)
	}
	for i := range 3 {
		res, err := w.Call(context.Background(), clientrun.Call{Handler: "inc", Request: u32(6)})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Client.Reply; le(r) != uint64(109+3*i) || le(r[8:]) != uint64(112+3*i) {
			t.Errorf("inc %d: reply %x", i, r)
		}
	}
}

func le(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func TestRunRefused(t *testing.T) {
	r, err := clientruntest.NewRunner(unitObject(t), clientrun.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := clientruntest.NewMemFetcher(unitRegions()...)
	_, err = r.Run(context.Background(), f, clientrun.Call{Handler: "store", Request: u32(1)})
	var ne *clientrun.NotEligibleError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "handler store is not client-eligible: insn") || !strings.Contains(err.Error(), "store to region 1 (counts)") {
		t.Errorf("store: %v", err)
	}
	if _, err := r.Run(context.Background(), f, clientrun.Call{Handler: "nope"}); err == nil || !strings.Contains(err.Error(), `no handler "nope"`) {
		t.Errorf("unknown handler: %v", err)
	}
	if f.Stats().RoundTrips != 0 {
		t.Errorf("refused runs fetched: %+v", f.Stats())
	}
	if err := r.Eligible("follow"); err != nil {
		t.Errorf("Eligible(follow): %v", err)
	}
}

// A failed fetch ends the run with a remote fault that wraps its error.
func TestRunFetchError(t *testing.T) {
	r, err := clientruntest.NewRunner(unitObject(t), clientrun.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := clientruntest.NewMemFetcher(unitRegions()...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Run(ctx, f, clientrun.Call{Handler: "plain", Request: u32(1)})
	if !errors.Is(err, vm.ErrRemote) || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want a remote fault wrapping context.Canceled", err)
	}
	_, err = r.Run(ctx, f, clientrun.Call{Handler: "pair", Request: u32(1)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the declared reads of pair") {
		t.Errorf("got %v, want the declared batch's error", err)
	}
}

// Config.MaxBytes bounds what a run fetches: declared ranges past it are
// left for the handler to read, and a read past it fails the run.
func TestRunMaxBytes(t *testing.T) {
	// follow: 24 declared bytes, 512 of the first link's, then the 8 it
	// needs of the second (near the limit, only what the load needs): 544.
	f := clientruntest.NewMemFetcher(unitRegions()...)
	for _, tc := range []struct {
		max  int
		fail bool
	}{{544, false}, {543, true}} {
		r, err := clientruntest.NewRunner(unitObject(t), clientrun.Config{FetchSize: 512, MaxBytes: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Run(context.Background(), f, clientrun.Call{Handler: "follow", Request: u32(5)})
		want := clientrun.Stats{RoundTrips: 3, Declared: 1, ExtraReads: 2, BytesRead: 544}
		if tc.fail {
			if !errors.Is(err, clientrun.ErrFetchLimit) || !errors.Is(err, vm.ErrRemote) {
				t.Fatalf("max %d: got %v, want ErrFetchLimit", tc.max, err)
			}
			want = clientrun.Stats{RoundTrips: 2, Declared: 1, ExtraReads: 1, BytesRead: 536}
		} else if err != nil {
			t.Fatalf("max %d: %v", tc.max, err)
		}
		if res.Stats != want {
			t.Errorf("max %d: stats %+v, want %+v", tc.max, res.Stats, want)
		}
	}
	r, err := clientruntest.NewRunner(unitObject(t), clientrun.Config{FetchSize: 512, MaxBytes: 80})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), f, clientrun.Call{Handler: "pair", Request: u32(10)})
	if err != nil {
		t.Fatal(err)
	}
	// The 72 merged bytes fit; the range 90 records on does not, and the
	// handler reads its 8 bytes of it when it needs them.
	if want := (clientrun.Stats{RoundTrips: 2, Declared: 1, ExtraReads: 1, BytesRead: 72 + 8}); res.Stats != want {
		t.Errorf("stats %+v, want %+v", res.Stats, want)
	}
}

// TestRunKeep: bytes of the Keep ranges serve later runs without a READ,
// bytes outside them are fetched by every run, only runs that reply add
// to them, a run that fails after using kept bytes drops them when its
// failure is a fault or one of DropOn's codes, and Keep and Forget change
// what is kept.
func TestRunKeep(t *testing.T) {
	ctx := context.Background()
	regions := unitRegions()
	// recs 0…99 are kept, one unit each.
	keep := recUnits(0, 100)
	f := clientruntest.NewMemFetcher(regions...)
	obj := unitObject(t)
	proofs, _, err := clientruntest.Proofs(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, err := clientrun.New(obj, proofs, clientrun.Config{FetchSize: 24, Keep: clientrun.Keep{Ranges: keep, DropOn: []int32{6}}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(handler string, i uint32) clientrun.Result {
		t.Helper()
		res, err := r.Run(ctx, f, clientrun.Call{Handler: handler, Request: u32(i)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	value := func(res clientrun.Result) uint64 { return binary.LittleEndian.Uint64(res.Reply) }

	// The first run of rec 5 fetches it and keeps it; the second takes it
	// from there in no round trip, and sees its old bytes after the node's
	// change, until Forget.
	if res := run("checked", 5); res.Stats.RoundTrips != 1 || res.Stats.KeptBytes != 0 || value(res) != 5 {
		t.Fatalf("first run: %d, %+v", value(res), res.Stats)
	}
	if r.Kept() != 24 {
		t.Fatalf("kept %d bytes, want 24", r.Kept())
	}
	binary.LittleEndian.PutUint64(regions[0][24*5:], 555)
	if res := run("checked", 5); res.Stats.RoundTrips != 0 || res.Stats.Declared != 0 || res.Stats.KeptBytes != 24 || value(res) != 5 {
		t.Fatalf("kept run: %d, %+v", value(res), res.Stats)
	}
	r.Forget()
	if res := run("checked", 5); res.Stats.RoundTrips != 1 || value(res) != 555 {
		t.Fatalf("after Forget: %d, %+v", value(res), res.Stats)
	}
	// Rec 500 is outside the ranges: every run fetches it.
	for range 2 {
		if res := run("checked", 500); res.Stats.RoundTrips != 1 || res.Stats.KeptBytes != 0 {
			t.Fatalf("rec 500: %+v", res.Stats)
		}
	}
	if r.Kept() != 24 {
		t.Fatalf("kept %d bytes after rec 500, want 24", r.Kept())
	}
	// A read across the units' end keeps only the units inside: recs 98
	// and 99, not 100.
	run("pair", 98) // recs 98…100 and 198
	if r.Kept() != 24+48 {
		t.Fatalf("kept %d bytes after recs 98-100, want %d", r.Kept(), 24+48)
	}
	if res := run("pair", 98); res.Stats.KeptBytes != 48 || res.Stats.RoundTrips != 1 || res.Stats.BytesRead != 24+24 {
		t.Fatalf("pair 98 again: %+v", res.Stats)
	}

	// A run that fails after using kept units drops those it used: follow
	// from rec 20 (kept) reads rec 143 (not kept) afresh, whose next is now
	// out of range; recs 4 (kept with 20 by the first follow), 5, 98 and
	// 99 stay.
	run("follow", 20)
	binary.LittleEndian.PutUint32(regions[0][24*143+16:], 5000)
	if res := run("follow", 20); res.Outcome == bytecode.OutcomeReply || res.Stats.KeptBytes != 24 {
		t.Fatalf("follow to rec 5000: outcome %v, %+v", res.Outcome, res.Stats)
	}
	if r.Kept() != 4*24 {
		t.Fatalf("kept %d bytes after a failed run, want %d (rec 20 dropped)", r.Kept(), 4*24)
	}

	// A read of kept bytes fetches nothing, even where the bytes a fetch
	// would bring ahead of it (FetchSize 512 here) are not kept: pair 98
	// keeps recs 98 and 99 (its declared read brings them whole), then
	// plain reads rec 99's b.
	ahead, err := clientrun.New(obj, proofs, clientrun.Config{FetchSize: 512, Keep: clientrun.Keep{Ranges: keep}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ahead.Run(ctx, f, clientrun.Call{Handler: "pair", Request: u32(98)}); err != nil {
		t.Fatal(err)
	}
	if res, err := ahead.Run(ctx, f, clientrun.Call{Handler: "plain", Request: u32(99)}); err != nil || res.Stats.RoundTrips != 0 || binary.LittleEndian.Uint64(res.Reply) != 1099 {
		t.Fatalf("plain 99: %x, %+v, %v; want 1099 in no round trip", res.Reply, res.Stats, err)
	}

	// Only a run that replies adds what it fetched: pick 7 fails (its a
	// is 5000) and keeps nothing. pair 6 replies and keeps recs 6…8, and
	// then pick 7 and pick 8 fail with their kept copies' codes: 5, not
	// one of DropOn's, keeps rec 7; 6 drops rec 8.
	r.Forget()
	binary.LittleEndian.PutUint64(regions[0][24*7:], 5000)
	binary.LittleEndian.PutUint64(regions[0][24*8:], 6000)
	if res := run("pick", 7); res.Code != 5 || r.Kept() != 0 {
		t.Fatalf("pick 7: code %d, kept %d bytes; want 5, 0", res.Code, r.Kept())
	}
	run("pair", 6)
	if r.Kept() != 3*24 {
		t.Fatalf("kept %d bytes after pair 6, want %d", r.Kept(), 3*24)
	}
	if res := run("pick", 7); res.Code != 5 || res.Stats.KeptBytes != 24 || r.Kept() != 3*24 {
		t.Fatalf("pick 7 from the copy: code %d, %+v, kept %d bytes; want 5, the copy, all kept", res.Code, res.Stats, r.Kept())
	}
	if res := run("pick", 8); res.Code != 6 || res.Stats.KeptBytes != 24 || r.Kept() != 2*24 {
		t.Fatalf("pick 8 from the copy: code %d, %+v, kept %d bytes; want 6, the copy, recs 6 and 7 kept", res.Code, res.Stats, r.Kept())
	}
	// Without DropOn every fail drops the units it used.
	if err := r.Keep(clientrun.Keep{Ranges: keep}); err != nil {
		t.Fatal(err)
	}
	run("pair", 6)
	if res := run("pick", 7); res.Code != 5 || res.Stats.KeptBytes != 24 || r.Kept() != 2*24 {
		t.Fatalf("pick 7, no DropOn: code %d, %+v, kept %d bytes; want 5, recs 6 and 8 kept", res.Code, res.Stats, r.Kept())
	}

	// The zero Keep keeps nothing; bad ranges are refused with their index.
	if err := r.Keep(clientrun.Keep{}); err != nil {
		t.Fatal(err)
	}
	run("checked", 5)
	if r.Kept() != 0 {
		t.Fatalf("the zero Keep: kept %d bytes", r.Kept())
	}
	for _, tc := range []struct {
		bad  []bytecode.AccessRange
		want string
	}{
		{[]bytecode.AccessRange{{Region: 2, Offset: 0, Length: 8}}, "keep range 0: region 2"},
		{[]bytecode.AccessRange{{Region: 0, Offset: 0, Length: 8}, {Region: 1, Offset: 500, Length: 16}}, "keep range 1: bytes 500…516"},
		{[]bytecode.AccessRange{{Region: 0, Offset: 40, Length: 24}, {Region: 0, Offset: 0, Length: 48}}, "keep ranges 0 and 1 overlap"},
	} {
		if err := r.Keep(clientrun.Keep{Ranges: tc.bad}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Keep(%v): %v, want %q", tc.bad, err, tc.want)
		}
	}
}

// keepRunner runs the unit object with FetchSize 24, keeping recs 0…99,
// a unit each.
func keepRunner(t *testing.T) *clientrun.Runner {
	t.Helper()
	obj := unitObject(t)
	proofs, _, err := clientruntest.Proofs(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, err := clientrun.New(obj, proofs, clientrun.Config{FetchSize: 24, Keep: clientrun.Keep{Ranges: recUnits(0, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recUnits is recs from…to-1 of the unit object, a unit each.
func recUnits(from, to int) []bytecode.AccessRange {
	var out []bytecode.AccessRange
	for i := from; i < to; i++ {
		out = append(out, bytecode.AccessRange{Region: 0, Offset: uint32(24 * i), Length: 24})
	}
	return out
}

// hookFetcher is a MemFetcher that calls hook before its first Read.
type hookFetcher struct {
	*clientruntest.MemFetcher
	hook func()
}

func (f *hookFetcher) Read(ctx context.Context, reads []clientrun.Read) error {
	if h := f.hook; h != nil {
		f.hook = nil
		h()
	}
	return f.MemFetcher.Read(ctx, reads)
}

// TestRunKeepUnits: a unit is kept only when one read brought all of it,
// given to a run only whole and only when the run holds none of it (never
// joined to fresh bytes), and a run adds nothing once the kept units were
// forgotten since it began.
func TestRunKeepUnits(t *testing.T) {
	ctx := context.Background()
	obj := unitObject(t)
	proofs, _, err := clientruntest.Proofs(obj)
	if err != nil {
		t.Fatal(err)
	}
	newRunner := func() *clientrun.Runner { return keepRunner(t) }
	sum := func(res clientrun.Result, err error) uint64 {
		t.Helper()
		if err != nil || res.Outcome != bytecode.OutcomeReply {
			t.Fatalf("run: %v, outcome %v", err, res.Outcome)
		}
		return binary.LittleEndian.Uint64(res.Reply)
	}

	// two 10 reads rec 10's b (a fetch of bytes 248…272: the end of rec
	// 10, the start of 11), then the rest of rec 11: no read brought a
	// whole unit, so none is kept.
	f := &hookFetcher{MemFetcher: clientruntest.NewMemFetcher(unitRegions()...)}
	r := newRunner()
	if v := sum(r.Run(ctx, f, clientrun.Call{Handler: "two", Request: u32(10)})); v != 1010+1011 || r.Kept() != 0 {
		t.Fatalf("two 10: %d, kept %d bytes; want %d, none", v, r.Kept(), 1010+1011)
	}

	// Rec 11 is kept (by a run that starts as two 10's first fetch does)
	// and then changes on the node; two 10 already holds the start of rec
	// 11 when it needs its b, so it fetches the rest afresh instead of
	// joining the kept copy to it.
	regions := unitRegions()
	f = &hookFetcher{MemFetcher: clientruntest.NewMemFetcher(regions...)}
	r = newRunner()
	f.hook = func() {
		if _, err := r.Run(ctx, f, clientrun.Call{Handler: "checked", Request: u32(11)}); err != nil || r.Kept() != 24 {
			t.Errorf("checked 11: %v, kept %d bytes", err, r.Kept())
		}
		binary.LittleEndian.PutUint64(regions[0][24*11+8:], 9999)
	}
	if v := sum(r.Run(ctx, f, clientrun.Call{Handler: "two", Request: u32(10)})); v != 1010+9999 {
		t.Fatalf("two 10 after rec 11 was kept and changed: %d, want %d (the node's b, not the kept copy's)", v, 1010+9999)
	}

	// ReadPiece 32: of pair 1's declared read of recs 1…3 (bytes 24…96,
	// pieces 24…56, 56…88, 88…96) only rec 1 lies inside one piece.
	pieced, err := clientrun.New(obj, proofs, clientrun.Config{FetchSize: 24, ReadPiece: 32, Keep: clientrun.Keep{Ranges: recUnits(0, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	sum(pieced.Run(ctx, f, clientrun.Call{Handler: "pair", Request: u32(1)}))
	if pieced.Kept() != 24 {
		t.Fatalf("pair 1 in pieces of 32 bytes: kept %d bytes, want 24 (rec 1)", pieced.Kept())
	}
	for rec, want := range map[uint32]int{1: 0, 2: 1} {
		if res, err := pieced.Run(ctx, f, clientrun.Call{Handler: "checked", Request: u32(rec)}); err != nil || res.Stats.RoundTrips != want {
			t.Fatalf("checked %d after pair 1: %+v, %v; want %d round trips", rec, res.Stats, err, want)
		}
	}

	// A Forget during a run: the run's units are not added.
	f = &hookFetcher{MemFetcher: clientruntest.NewMemFetcher(unitRegions()...)}
	r = newRunner()
	f.hook = r.Forget
	if v := sum(r.Run(ctx, f, clientrun.Call{Handler: "checked", Request: u32(5)})); v != 5 || r.Kept() != 0 {
		t.Fatalf("checked 5 with a Forget during it: %d, kept %d bytes; want 5, none", v, r.Kept())
	}
	if sum(r.Run(ctx, f, clientrun.Call{Handler: "checked", Request: u32(5)})); r.Kept() != 24 {
		t.Fatalf("checked 5 again: kept %d bytes, want 24", r.Kept())
	}
}

// TestRunKeepConcurrent: runs that share what the runner keeps, at once,
// while another goroutine forgets and replaces it (go test -race checks
// them), all see the region's bytes, and a tenth at least take some from
// the runner.
func TestRunKeepConcurrent(t *testing.T) {
	obj := unitObject(t)
	proofs, _, err := clientruntest.Proofs(obj)
	if err != nil {
		t.Fatal(err)
	}
	keep := clientrun.Keep{Ranges: recUnits(0, 500)}
	r, err := clientrun.New(obj, proofs, clientrun.Config{FetchSize: 100, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	f := clientruntest.NewMemFetcher(unitRegions()...)
	var wg sync.WaitGroup
	var served atomic.Int64
	errs := make(chan error, 9)
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := uint32((g*200 + n*37) % 1000)
				res, err := r.Run(context.Background(), f, clientrun.Call{Handler: "follow", Request: u32(i)})
				if err != nil {
					errs <- err
					return
				}
				if res.Stats.KeptBytes > 0 {
					served.Add(1)
				}
				j := (i*7 + 3) % 1000
				k := (j*7 + 3) % 1000
				if got := binary.LittleEndian.Uint64(res.Reply); got != uint64(k) {
					errs <- fmt.Errorf("follow %d: %d, want %d", i, got, k)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for n := range 20 {
			if n%2 == 0 {
				r.Forget()
			} else if err := r.Keep(keep); err != nil {
				errs <- err
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := served.Load(); n < 160 {
		t.Errorf("%d of 1,600 runs took bytes the runner kept, want a tenth at least", n)
	}
	if r.Kept() > 24*500 {
		t.Errorf("kept %d bytes, at most %d", r.Kept(), 24*500)
	}
}

// afterFetcher is a MemFetcher that calls hook after its first Read.
type afterFetcher struct {
	*clientruntest.MemFetcher
	hook func()
}

func (f *afterFetcher) Read(ctx context.Context, reads []clientrun.Read) error {
	err := f.MemFetcher.Read(ctx, reads)
	if h := f.hook; h != nil {
		f.hook = nil
		h()
	}
	return err
}

// TestRunKeepEpochs: a run that began before a Keep is given no unit kept
// after it (it could not drop one that misled it); a run under way when a
// failed run drops a unit does not add its own copy of it, which may be
// as old. (A review found both.)
func TestRunKeepEpochs(t *testing.T) {
	ctx := context.Background()
	newRunner := func() *clientrun.Runner { return keepRunner(t) }
	next10 := func(regions [][]byte, v uint32) { binary.LittleEndian.PutUint32(regions[0][24*10+16:], v) }

	// follow 1 reads rec 1, then rec 10 (rec 1's next), then rec 10's next.
	// During its first READ a Keep resets the runner and another run keeps
	// rec 10 with a next out of range, which the node then mends: follow 1
	// must fetch rec 10 itself.
	regions := unitRegions()
	f := &hookFetcher{MemFetcher: clientruntest.NewMemFetcher(regions...)}
	r := newRunner()
	f.hook = func() {
		if err := r.Keep(clientrun.Keep{Ranges: recUnits(0, 100)}); err != nil {
			t.Error(err)
		}
		next10(regions, 5000)
		if res, err := r.Run(ctx, f, clientrun.Call{Handler: "checked", Request: u32(10)}); err != nil || res.Outcome != bytecode.OutcomeReply || r.Kept() != 24 {
			t.Errorf("checked 10: %v, outcome %v, kept %d bytes", err, res.Outcome, r.Kept())
		}
		next10(regions, 73)
	}
	if res, err := r.Run(ctx, f, clientrun.Call{Handler: "follow", Request: u32(1)}); err != nil || res.Outcome != bytecode.OutcomeReply || res.Stats.KeptBytes != 0 {
		t.Fatalf("follow 1, begun before the Keep: %v, outcome %v, code %d, %d kept bytes used; want a reply from none", err, res.Outcome, res.Code, res.Stats.KeptBytes)
	}

	// checked 10 fetches rec 10 (next out of range); after its READ
	// another run keeps the same old copy, the node mends rec 10, and a
	// third run fails on the copy and drops it. The first run's commit must
	// not bring the old copy back.
	regions = unitRegions()
	plain := clientruntest.NewMemFetcher(regions...)
	g := &afterFetcher{MemFetcher: plain}
	r = newRunner()
	next10(regions, 5000)
	g.hook = func() {
		if res, err := r.Run(ctx, plain, clientrun.Call{Handler: "checked", Request: u32(10)}); err != nil || res.Outcome != bytecode.OutcomeReply {
			t.Errorf("checked 10: %v, outcome %v", err, res.Outcome)
		}
		next10(regions, 73)
		if res, err := r.Run(ctx, plain, clientrun.Call{Handler: "follow", Request: u32(1)}); err != nil || res.Outcome == bytecode.OutcomeReply || res.Stats.KeptBytes != 24 || r.Kept() != 0 {
			t.Errorf("follow 1 from the old copy: %v, outcome %v, %d kept bytes used, kept %d; want a fail that drops it", err, res.Outcome, res.Stats.KeptBytes, r.Kept())
		}
	}
	if res, err := r.Run(ctx, g, clientrun.Call{Handler: "checked", Request: u32(10)}); err != nil || res.Outcome != bytecode.OutcomeReply {
		t.Fatalf("checked 10 under way: %v, outcome %v", err, res.Outcome)
	}
	if r.Kept() != 0 {
		t.Fatalf("kept %d bytes after the run under way ended, want none (its copy is as old as the one dropped)", r.Kept())
	}
	if res, err := r.Run(ctx, plain, clientrun.Call{Handler: "follow", Request: u32(1)}); err != nil || res.Outcome != bytecode.OutcomeReply {
		t.Fatalf("follow 1 after the drop: %v, outcome %v, code %d", err, res.Outcome, res.Code)
	}
}
