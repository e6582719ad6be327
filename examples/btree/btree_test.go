package btree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/servetest"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/verifier"
)

type server struct {
	cfg  Config
	tree *Tree
	peer *host.Peer
	am   *Client
	prog *host.Program
}

func testCtx(t testing.TB) context.Context { return servetest.Context(t, 120*time.Second) }

// start serves a tree of cfg, filled by load (if not nil) before the
// program is installed (servetest.Serve says why).
func start(t testing.TB, cfg Config, load func(*Tree) error) *server {
	t.Helper()
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	var tr *Tree
	sv := servetest.Serve(t, obj, cfg.Region, cfg.RegionSize(), cfg.InstallOptions(), func(mem []byte) (err error) {
		if tr, err = NewTree(cfg, mem); err == nil && load != nil {
			err = load(tr)
		}
		return err
	})
	ids, err := PeerIDs(testCtx(t), sv.Peer)
	if err != nil {
		t.Fatal(err)
	}
	return &server{cfg: cfg, tree: tr, peer: sv.Peer, prog: sv.Program, am: NewClient(call.Peer{P: sv.Peer}, cfg, ids)}
}

func (s *server) rdma(cacheLevels int) *RDMAClient {
	return NewRDMAClient(call.PeerRegion{P: s.peer, Region: s.cfg.Region}, s.cfg, cacheLevels)
}

// TestLayout checks the Go layout against the compiled object for several
// fanouts, and that lookup and update verify within the NIC budget.
func TestLayout(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Fanout: 16, Nodes: 100, Scan: 8},
		{Fanout: 64, Nodes: 1 << 16, MaxHeight: 6, Scan: MaxScan},
		{Region: "t", Fanout: 32, Nodes: NodesFor(1_000_000, 32)},
	} {
		t.Run(fmt.Sprintf("%s-%d-%d-%d-%d", cfg.Region, cfg.Fanout, cfg.Nodes, cfg.MaxHeight, cfg.Scan), func(t *testing.T) {
			obj, err := Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verifier.VerifyObject(obj, verifier.Config{})
			if err != nil {
				t.Fatalf("verifier: %+v", err)
			}
			for _, e := range rep.Entries {
				if e.Name != HandlerScan && e.MaxInsns > servetest.NICBudget {
					t.Errorf("%s: bound %d over the NIC budget", e.Name, e.MaxInsns)
				}
				t.Logf("%s: verified bound %d", e.Name, e.MaxInsns)
			}
			c := cfg.withDefaults()
			if len(obj.Regions) != 1 || obj.Regions[0].Name != RegionName || obj.Regions[0].Size != c.RegionSize() || !obj.Regions[0].Writable {
				t.Errorf("regions %+v, want one writable %q of %d bytes", obj.Regions, RegionName, c.RegionSize())
			}
			names := []string{HandlerLookup, HandlerScan, HandlerUpdate}
			for i, h := range obj.Handlers {
				if h.Name != names[i] {
					t.Errorf("handler %d is %q", i, h.Name)
				}
			}
			S := c.Scan
			lookup, scan, update := obj.Handlers[0], obj.Handlers[1], obj.Handlers[2]
			for _, w := range []struct {
				f         bytecode.Field
				off, size uint32
			}{
				{servetest.Field(t, lookup.Args, "key"), 0, 8},
				{servetest.Field(t, lookup.Results, "result"), 0, 8},
				{servetest.Field(t, scan.Args, "start"), 0, 8},
				{servetest.Field(t, scan.Args, "n"), 8, 4},
				{servetest.Field(t, scan.Results, "count"), 0, 4},
				{servetest.Field(t, scan.Results, "end"), 4, 1},
				{servetest.Field(t, scan.Results, "keys"), 8, 8 * S},
				{servetest.Field(t, scan.Results, "vals"), 8 + 8*S, 8 * S},
				{servetest.Field(t, update.Args, "key"), 0, 8},
				{servetest.Field(t, update.Args, "value"), 8, 8},
				{servetest.Field(t, update.Results, "result"), 0, 8},
			} {
				if w.f.Offset != w.off || w.f.Size != w.size {
					t.Errorf("%s @%d size %d, want @%d size %d", w.f.Name, w.f.Offset, w.f.Size, w.off, w.size)
				}
			}
			if c.NodeSize() > 1408 {
				t.Errorf("a node of %d bytes is more than one READ", c.NodeSize())
			}
		})
	}
}

// TestPlacement: lookup and update run on NIC cores, a scan of 32 pairs
// on a host core (its bound is over the NIC budget).
func TestPlacement(t *testing.T) {
	s := start(t, Config{}, nil)
	for _, h := range s.prog.Handlers() {
		want := "nic"
		if h.Name == HandlerScan {
			want = "host-budget"
		}
		if h.Placement.String() != want {
			t.Errorf("%s: placed %s, want %s (bound %d)", h.Name, h.Placement, want, h.MaxInsns)
		}
		t.Logf("%s: placed %s, verified bound %d instructions", h.Name, h.Placement, h.MaxInsns)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Fanout: 24}, "fanout 24 is not a power of two in 16…64"},
		{Config{Fanout: 8}, "fanout 8"},
		{Config{Fanout: 128}, "fanout 128"},
		{Config{MaxHeight: 17}, "max height 17"},
		{Config{Scan: 65}, "scan of 65 pairs"},
		{Config{Fanout: 64, Nodes: 5_000_000}, "a region holds at most"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
		if _, err := Compile(tc.cfg); err == nil {
			t.Errorf("%+v compiled", tc.cfg)
		}
	}
	if c := DefaultConfig(); c != (Config{Region: "btree", Fanout: 32, Nodes: 4096, MaxHeight: 8, Scan: 32}) {
		t.Errorf("DefaultConfig() = %+v", c)
	}
}

// TestBulkLoad loads trees of several shapes and looks every key up on
// the host, a sample by message and by READs, cached and not.
func TestBulkLoad(t *testing.T) {
	for _, tc := range []struct {
		records    uint64
		fanout     uint32
		fill       int
		wantHeight uint32
	}{
		{0, 16, 0, 1},
		{1, 16, 0, 1},
		{16, 16, 16, 1},
		{17, 16, 16, 2},
		{256, 16, 16, 2},
		{257, 16, 16, 3},
		{20_000, 16, 12, 4},
		{50_000, 32, 0, 4},
		{30_000, 64, 64, 3},
	} {
		t.Run(fmt.Sprintf("%d-%d-%d", tc.records, tc.fanout, tc.fill), func(t *testing.T) {
			s := start(t, Config{Fanout: tc.fanout, Nodes: NodesFor(tc.records, tc.fanout)}, func(tr *Tree) error { return Load(tr, tc.records, tc.fill) })
			ctx := testCtx(t)
			if err := s.tree.Check(); err != nil {
				t.Fatal(err)
			}
			if s.tree.Height() != tc.wantHeight || s.tree.Len() != tc.records {
				t.Fatalf("height %d, %d keys; want %d, %d", s.tree.Height(), s.tree.Len(), tc.wantHeight, tc.records)
			}
			for n := range tc.records {
				if v, err := s.tree.Get(KeyOf(n)); err != nil || v != ValueOf(n) {
					t.Fatalf("host lookup of record %d: %d, %v", n, v, err)
				}
			}
			H := int(tc.wantHeight)
			uncached, cached := s.rdma(0), s.rdma(2)
			r := rand.New(rand.NewPCG(tc.records, 1))
			for i := range 200 {
				rec := r.Uint64N(max(tc.records, 1))
				key := KeyOf(rec)
				want, wantErr := ValueOf(rec), error(nil)
				if tc.records == 0 || i%10 == 0 {
					key++ // between two records: absent
					wantErr = ErrNotFound
				}
				v, rep, err := s.am.Lookup(ctx, key)
				if !errors.Is(err, wantErr) || (err == nil && v != want) || rep.RoundTrips != 1 {
					t.Fatalf("lookup %d by message: %d, %v in %d round trips; want %d, %v", key, v, err, rep.RoundTrips, want, wantErr)
				}
				v, rep, err = uncached.Lookup(ctx, key)
				if !errors.Is(err, wantErr) || (err == nil && v != want) || rep.RoundTrips != H {
					t.Fatalf("lookup %d by READs: %d, %v in %d round trips; want %d, %v in %d", key, v, err, rep.RoundTrips, want, wantErr, H)
				}
				v, rep, err = cached.Lookup(ctx, key)
				if !errors.Is(err, wantErr) || (err == nil && v != want) || rep.RoundTrips > H {
					t.Fatalf("lookup %d by cached READs: %d, %v in %d round trips", key, v, err, rep.RoundTrips)
				}
				// Again: the path's upper nodes are cached now.
				if _, rep, _ := cached.Lookup(ctx, key); rep.RoundTrips != max(H-2, 1) {
					t.Fatalf("lookup %d again by cached READs: %d round trips, want %d", key, rep.RoundTrips, max(H-2, 1))
				}
			}
			if uncached.Cached() != 0 {
				t.Errorf("the uncached client holds %d nodes", uncached.Cached())
			}
			checkUpperLevels(t, s.tree)
		})
	}
}

// TestUpperLevelsAfterEmptyLoad: a bulk load of nothing leaves the tree
// empty, so a second load is allowed; UpperLevels is the second's.
func TestUpperLevelsAfterEmptyLoad(t *testing.T) {
	s := start(t, Config{Fanout: 16, Nodes: NodesFor(5000, 16)}, func(tr *Tree) error {
		if err := Load(tr, 0, 0); err != nil {
			return err
		}
		return Load(tr, 5000, 16)
	})
	if s.tree.Height() != 4 {
		t.Fatalf("height %d, want 4", s.tree.Height())
	}
	checkUpperLevels(t, s.tree)
}

// checkUpperLevels: UpperLevels(k) is the nodes of the top k levels, the
// root's included, and never a leaf, whatever k.
func checkUpperLevels(t *testing.T, tr *Tree) {
	t.Helper()
	H := int(tr.Height())
	for k := range H + 2 {
		ranges := tr.UpperLevels(k)
		if k == 0 || H == 1 {
			if ranges != nil {
				t.Errorf("UpperLevels(%d) of a %d-level tree: %v", k, H, ranges)
			}
			continue
		}
		size := tr.cfg.NodeSize()
		in := map[uint32]bool{}
		for _, r := range ranges {
			if r.Region != 0 || (uint64(r.Offset)-HeaderSize)%size != 0 || uint64(r.Length) != size {
				t.Fatalf("UpperLevels(%d): range %+v is not one node", k, r)
			}
			first := uint32((uint64(r.Offset) - HeaderSize) / size)
			for n := range uint32(uint64(r.Length) / size) {
				in[first+n] = true
			}
		}
		lowest := max(H-k, 1)
		for n := range tr.Used() {
			if want := int(tr.readNode(n).level) >= lowest; in[n] != want {
				t.Fatalf("UpperLevels(%d) of a %d-level tree: node %d (level %d) in: %v", k, H, n, tr.readNode(n).level, in[n])
			}
		}
	}
}

func TestBulkLoadErrors(t *testing.T) {
	s := start(t, Config{Fanout: 16, Nodes: 10}, nil)
	for _, tc := range []struct {
		keys, vals []uint64
		fill       int
		want       string
	}{
		{[]uint64{1, 2}, []uint64{1}, 0, "2 keys and 1 values"},
		{[]uint64{1, 3, 2}, []uint64{1, 2, 3}, 0, "key 2 (2) is not above key 1 (3)"},
		{[]uint64{1}, []uint64{1}, 17, "fill 17, want 1…16"},
		{make([]uint64, 200), make([]uint64, 200), 16, "is not above"},
	} {
		if err := s.tree.BulkLoad(tc.keys, tc.vals, tc.fill); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.keys[:min(len(tc.keys), 3)], err, tc.want)
		}
	}
	keys := make([]uint64, 200)
	for i := range keys {
		keys[i] = uint64(i)
	}
	if err := s.tree.BulkLoad(keys, keys, 16); !errors.Is(err, ErrFull) {
		t.Errorf("200 keys in 10 nodes: %v", err)
	}
	if err := s.tree.BulkLoad(keys[:10], keys[:10], 0); err != nil {
		t.Fatal(err)
	}
	if err := s.tree.BulkLoad(keys[:10], keys[:10], 0); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("a second load: %v", err)
	}
}

// TestInsertsAgainstMap inserts random keys into an empty tree of fanout
// 16 until it has five levels, so every level has split (and the root
// four times), checking the structure as it grows and every key, value
// and scan against a Go map.
func TestInsertsAgainstMap(t *testing.T) {
	const keys = 40_000
	s := start(t, Config{Fanout: 16, Nodes: NodesFor(keys, 16), Scan: 16}, nil)
	ctx := testCtx(t)
	r := rand.New(rand.NewPCG(5, 6))
	model := map[uint64]uint64{}
	heights := map[uint32]int{} // inserts made at each height
	for i := range keys {
		k := r.Uint64N(1 << 40)
		if i%7 == 0 && len(model) > 0 {
			k = KeyOf(uint64(i)) // some keys twice: a replace
		}
		v := r.Uint64()
		_, had := model[k]
		replaced, err := s.tree.Insert(k, v)
		if err != nil || replaced != had {
			t.Fatalf("insert %d: replaced %v, %v; had %v", i, replaced, err, had)
		}
		model[k] = v
		heights[s.tree.Height()]++
		if i%5000 == 0 || i == keys-1 {
			if err := s.tree.Check(); err != nil {
				t.Fatalf("after %d inserts: %v", i+1, err)
			}
		}
	}
	if h := s.tree.Height(); h < 5 {
		t.Fatalf("height %d after %d inserts: not every level split", h, keys)
	}
	if s.tree.Len() != uint64(len(model)) {
		t.Fatalf("%d keys, the map has %d", s.tree.Len(), len(model))
	}
	t.Logf("height %d, %d nodes, inserts by height %v", s.tree.Height(), s.tree.Used(), heights)
	sorted := make([]uint64, 0, len(model))
	for k, v := range model {
		sorted = append(sorted, k)
		if got, err := s.tree.Get(k); err != nil || got != v {
			t.Fatalf("host lookup %d: %d, %v; want %d", k, got, err, v)
		}
	}
	slices.Sort(sorted)
	if raceEnabled {
		t.Skip("the host wrote the tree after the install and the handlers read it with plain loads; the race detector reports each")
	}
	rd := s.rdma(2)
	for i := range 300 {
		k := sorted[r.IntN(len(sorted))]
		if v, _, err := s.am.Lookup(ctx, k); err != nil || v != model[k] {
			t.Fatalf("lookup %d by message: %d, %v; want %d", k, v, err, model[k])
		}
		if v, _, err := rd.Lookup(ctx, k); err != nil || v != model[k] {
			t.Fatalf("lookup %d by READs: %d, %v; want %d", k, v, err, model[k])
		}
		if _, _, err := s.am.Lookup(ctx, k+1); model[k+1] == 0 && !errors.Is(err, ErrNotFound) {
			t.Fatalf("lookup of absent %d: %v", k+1, err)
		}
		// A scan from a random point, of 1…16 pairs, is the map's next keys.
		start := r.Uint64N(1 << 40)
		if i%50 == 0 {
			start = sorted[len(sorted)-1-r.IntN(8)] // near the end: the scan ends
		}
		n := uint32(1 + r.IntN(16))
		pairs, end, _, err := s.am.Scan(ctx, start, n)
		if err != nil {
			t.Fatalf("scan %d×%d: %v", start, n, err)
		}
		at, _ := slices.BinarySearch(sorted, start)
		want := sorted[at:min(at+int(n), len(sorted))]
		if len(pairs) != len(want) || end != (len(want) < int(n)) {
			t.Fatalf("scan %d×%d: %d pairs, end %v; want %d", start, n, len(pairs), end, len(want))
		}
		for j, p := range pairs {
			if p.Key != want[j] || p.Value != model[p.Key] {
				t.Fatalf("scan %d×%d: pair %d is %+v, want %d=%d", start, n, j, p, want[j], model[want[j]])
			}
		}
	}
}

// TestFullTree: an insert that would need a node the region lacks fails
// before it changes anything.
func TestFullTree(t *testing.T) {
	s := start(t, Config{Fanout: 16, Nodes: 8}, nil)
	var err error
	n := 0
	for ; err == nil; n++ {
		_, err = s.tree.Insert(uint64(n), uint64(n))
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("after %d inserts: %v", n, err)
	}
	if cerr := s.tree.Check(); cerr != nil || s.tree.Len() != uint64(n-1) {
		t.Fatalf("after the refused insert: %v, %d keys of %d", cerr, s.tree.Len(), n-1)
	}
}

func TestUpdateAndScanErrors(t *testing.T) {
	s := start(t, Config{Fanout: 16, Nodes: 64, Scan: 4}, func(tr *Tree) error { return Load(tr, 100, 0) })
	ctx := testCtx(t)
	rd := s.rdma(1)
	for i, c := range []interface {
		Update(context.Context, uint64, uint64) (uint64, Reply, error)
	}{s.am, rd} {
		rec := uint64(10 + i)
		old, rep, err := c.Update(ctx, KeyOf(rec), 77+uint64(i))
		if err != nil || old != ValueOf(rec) {
			t.Fatalf("update %d: old %d, %v", i, old, err)
		}
		if i == 0 && rep.RoundTrips != 1 || i == 1 && rep.RoundTrips != int(s.tree.Height())+4 {
			t.Errorf("update %d: %d round trips", i, rep.RoundTrips)
		}
		if v, _, err := s.am.Lookup(ctx, KeyOf(rec)); err != nil || v != 77+uint64(i) {
			t.Errorf("after update %d: %d, %v", i, v, err)
		}
		if _, _, err := c.Update(ctx, KeyOf(rec)+1, 1); !errors.Is(err, ErrNotFound) {
			t.Errorf("update %d of an absent key: %v", i, err)
		}
	}
	if !raceEnabled { // the one-sided WRITEs are plain stores the host's check reads
		if err := s.tree.Check(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []uint32{0, 5} {
		if _, _, _, err := s.am.Scan(ctx, 0, n); !errors.Is(err, ErrBadCount) {
			t.Errorf("scan of %d: %v", n, err)
		}
	}
	pairs, end, _, err := s.am.Scan(ctx, KeyOf(98), 4)
	if err != nil || !end || len(pairs) != 2 || pairs[1].Key != KeyOf(99) {
		t.Errorf("scan at the end: %+v %v %v", pairs, end, err)
	}
	if pairs, end, _, err := s.am.Scan(ctx, KeyOf(1000), 4); err != nil || !end || len(pairs) != 0 {
		t.Errorf("scan past the end: %+v %v %v", pairs, end, err)
	}
	if pairs, end, _, err := s.am.Scan(ctx, 0, 4); err != nil || end || len(pairs) != 4 || pairs[0] != (Pair{0, ValueOf(0)}) {
		t.Errorf("scan from 0: %+v %v %v", pairs, end, err)
	}
}

// TestLookupsDuringInserts inserts keys on the host while lookups by
// message and by READs of the loaded keys run: a lookup never misses a
// key that is there (readers move right past halved nodes) and never
// returns another key's value.
func TestLookupsDuringInserts(t *testing.T) {
	if raceEnabled {
		t.Skip("handlers read node words with plain loads while the host writes them; the race detector reports each")
	}
	const records = 2000
	s := start(t, Config{Fanout: 16, Nodes: NodesFor(4*records, 16)}, func(tr *Tree) error { return Load(tr, records, 16) })
	ctx := testCtx(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var looked atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			rd := s.rdma(w % 3)
			for !stop.Load() {
				rec := r.Uint64N(records)
				var v uint64
				var err error
				if w%2 == 0 {
					v, _, err = s.am.Lookup(ctx, KeyOf(rec))
				} else {
					v, _, err = rd.Lookup(ctx, KeyOf(rec))
				}
				if err != nil || v != ValueOf(rec) {
					errs <- fmt.Errorf("worker %d: record %d: %d, %v", w, rec, v, err)
					return
				}
				looked.Add(1)
			}
		}()
	}
	r := rand.New(rand.NewPCG(8, 8))
	h0 := s.tree.Height()
	for i := range 3 * records {
		k := KeyOf(r.Uint64N(records)) + 1 + r.Uint64N(KeyStride-1) // between records
		if _, err := s.tree.Insert(k, 1); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.tree.Check(); err != nil {
		t.Fatal(err)
	}
	if s.tree.Height() <= h0 || looked.Load() < 100 {
		t.Errorf("height %d from %d, %d lookups: the test did not split the root under readers", s.tree.Height(), h0, looked.Load())
	}
}

// TestTargets drives a loaded tree through the benchmark's targets.
func TestTargets(t *testing.T) {
	if raceEnabled {
		t.Skip("updates and lookups of one leaf on several NIC cores: the race detector reports the VM's plain loads")
	}
	const records = 20_000
	s := start(t, Config{Fanout: 16, Nodes: NodesFor(records, 16)}, func(tr *Tree) error { return Load(tr, records, 0) })
	ctx := testCtx(t)
	H := float64(s.tree.Height())
	for _, tc := range []struct {
		name   string
		target workload.Target
		rts    float64 // per lookup
	}{
		{"am", Target{C: s.am}, 1},
		{"rdma", Target{C: s.rdma(0)}, H},
		{"rdma-cached", Target{C: s.rdma(2)}, H - 2},
	} {
		st, err := workload.Run(ctx, workload.Config{Mix: workload.MixC, Records: records, Ops: 2000, Clients: 1, Outstanding: 4}, []workload.Target{tc.target})
		if err != nil || st.Errors != 0 {
			t.Fatalf("%s: %v, %d errors: %v", tc.name, err, st.Errors, st.FirstError)
		}
		if got := st.RoundTripsPerOp(); got < tc.rts || got > tc.rts+0.1 {
			t.Errorf("%s: %.2f round trips per lookup, want %.0f", tc.name, got, tc.rts)
		}
		st, err = workload.Run(ctx, workload.Config{Mix: workload.MixA, Records: records, Ops: 500, Clients: 1, Outstanding: 4, Seed: 2}, []workload.Target{tc.target})
		if err != nil || st.Errors != 0 {
			t.Fatalf("%s ycsb-a: %v, %d errors: %v", tc.name, err, st.Errors, st.FirstError)
		}
	}
	if err := s.tree.Check(); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeScan(f *testing.F) {
	cfg := Config{Scan: 4}
	f.Add(make([]byte, cfg.ScanReplySize()))
	f.Add([]byte{9, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		pairs, _, err := cfg.DecodeScan(b)
		if err == nil && (len(pairs) > 4 || len(b) != cfg.ScanReplySize()) {
			t.Fatalf("DecodeScan(%x) = %d pairs", b, len(pairs))
		}
	})
}
