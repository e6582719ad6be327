package mica

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/servetest"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/workload"
	"github.com/naam-project/naam/verifier"
)

// server is a store on a node, reached from another node over loopback.
type server struct {
	cfg   Config
	store *Store
	peer  *host.Peer
	am    *Client
	rdma  *RDMAClient
	prog  *host.Program
}

func testCtx(t testing.TB) context.Context { return servetest.Context(t, 60*time.Second) }

func start(t testing.TB, cfg Config) *server {
	t.Helper()
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	var st *Store
	sv := servetest.Serve(t, obj, cfg.Region, cfg.RegionSize(), cfg.InstallOptions(), func(mem []byte) (err error) {
		st, err = NewStore(cfg, mem)
		return err
	})
	ids, err := PeerIDs(testCtx(t), sv.Peer)
	if err != nil {
		t.Fatal(err)
	}
	if local, err := ProgramIDs(sv.Program); err != nil || local != ids {
		t.Fatalf("ProgramIDs %+v, %v; PeerIDs %+v", local, err, ids)
	}
	return &server{cfg: cfg, store: st, peer: sv.Peer, prog: sv.Program,
		am:   NewClient(call.Peer{P: sv.Peer}, cfg, ids),
		rdma: NewRDMAClient(call.PeerRegion{P: sv.Peer, Region: cfg.Region}, cfg)}
}

// TestLayout checks the Go layout and codecs against the compiled object
// for several configurations, and that every handler verifies within the
// NIC budget.
func TestLayout(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Region: "hot", Buckets: 16, Ways: 2, Entries: 64, ValueSize: 16},
		{Buckets: 1 << 20, Entries: 1 << 21, ValueSize: 64},
		{Buckets: 8, Ways: MaxWays, Entries: 8, ValueSize: 8},
		{Buckets: 1 << 10, Ways: 7, Entries: 1 << 12, ValueSize: MaxValueSize},
	} {
		t.Run(fmt.Sprintf("%s-%d-%d-%d-%d", cfg.Region, cfg.Buckets, cfg.Ways, cfg.Entries, cfg.ValueSize), func(t *testing.T) {
			obj, err := Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verifier.VerifyObject(obj, verifier.Config{})
			if err != nil {
				t.Fatalf("verifier: %+v", err)
			}
			for _, e := range rep.Entries {
				if e.MaxInsns > servetest.NICBudget {
					t.Errorf("%s: bound %d over the NIC budget", e.Name, e.MaxInsns)
				}
			}
			c := cfg.withDefaults()
			if len(obj.Regions) != 1 || obj.Regions[0].Name != RegionName || obj.Regions[0].Size != c.RegionSize() || !obj.Regions[0].Writable {
				t.Errorf("regions %+v, want one writable %q of %d bytes", obj.Regions, RegionName, c.RegionSize())
			}
			names := []string{HandlerGet, HandlerPut, HandlerDelete}
			if len(obj.Handlers) != len(names) {
				t.Fatalf("%d handlers", len(obj.Handlers))
			}
			for i, h := range obj.Handlers {
				if h.Name != names[i] {
					t.Errorf("handler %d is %q, want %q", i, h.Name, names[i])
				}
			}
			V := c.ValueSize
			get, put, del := obj.Handlers[0], obj.Handlers[1], obj.Handlers[2]
			for _, w := range []struct {
				f         bytecode.Field
				off, size uint32
			}{
				{servetest.Field(t, get.Args, "key"), 0, 16},
				{servetest.Field(t, get.Results, "seq"), 0, 8},
				{servetest.Field(t, get.Results, "vlen"), 8, 4},
				{servetest.Field(t, get.Results, "value"), 12, V},
				{servetest.Field(t, put.Args, "key"), 0, 16},
				{servetest.Field(t, put.Args, "vlen"), 16, 4},
				{servetest.Field(t, put.Args, "value"), 20, V},
				{servetest.Field(t, put.Results, "result"), 0, 8},
				{servetest.Field(t, del.Args, "key"), 0, 16},
				{servetest.Field(t, del.Results, "result"), 0, 8},
			} {
				if w.f.Offset != w.off || w.f.Size != w.size {
					t.Errorf("%s @%d size %d, want @%d size %d", w.f.Name, w.f.Offset, w.f.Size, w.off, w.size)
				}
			}
			if got := c.GetReplySize(); got != (12+int(V)+7)/8*8 {
				t.Errorf("get reply %d", got)
			}
			if c.PutRequestSize() != 20+int(V) {
				t.Errorf("put request %d", c.PutRequestSize())
			}
		})
	}
}

// TestPlacedOnNIC: the default store's handlers run on NIC cores.
func TestPlacedOnNIC(t *testing.T) {
	s := start(t, Config{})
	for _, h := range s.prog.Handlers() {
		if h.Placement.String() != "nic" || h.MaxInsns > servetest.NICBudget {
			t.Errorf("%s: placed %s, bound %d", h.Name, h.Placement, h.MaxInsns)
		}
		t.Logf("%s: verified bound %d instructions", h.Name, h.MaxInsns)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Buckets: 1000}, "1000 buckets is not a power of two"},
		{Config{Ways: 16}, "16 ways, want 1…15"},
		{Config{Entries: 3}, "3 log entries is not a power of two"},
		{Config{ValueSize: 12}, "value size 12"},
		{Config{ValueSize: 2048}, "value size 2048"},
		{Config{Buckets: 1 << 26, Entries: 1 << 26}, "a region holds at most"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
		if _, err := Compile(tc.cfg); err == nil {
			t.Errorf("%+v compiled", tc.cfg)
		}
	}
	if c := DefaultConfig(); c != (Config{Region: "mica", Buckets: 1024, Ways: 7, Entries: 8192, ValueSize: 64}) {
		t.Errorf("DefaultConfig() = %+v", c)
	}
	c := ConfigFor(1_000_000, 64)
	if c.Validate() != nil || c.Buckets != 1<<20 || c.Entries != 1<<21 || c.ValueSize != 64 {
		t.Errorf("ConfigFor(1M, 64) = %+v: %v", c, c.Validate())
	}
}

// model is the store as a set of live entries per bucket, with the
// handlers' policy, so that every GET's hit or miss is predicted exactly.
type model struct {
	cfg     Config
	tail    uint64
	buckets map[uint32][]modelEntry // the keys the index points at
	values  map[Key][]byte          // the value of each entry, by key: the latest PUT
}

type modelEntry struct {
	key   Key
	stamp uint64
}

func newModel(cfg Config) *model {
	return &model{cfg: cfg, buckets: map[uint32][]modelEntry{}, values: map[Key][]byte{}}
}

// live is a copy of bucket b's entries that the log's wrap has not
// overwritten.
func (m *model) live(b uint32) []modelEntry {
	var es []modelEntry
	for _, e := range m.buckets[b] {
		if m.cfg.Live(e.stamp, m.tail) {
			es = append(es, e)
		}
	}
	return es
}

// put returns the new entry's sequence number and the key it displaced,
// if any.
func (m *model) put(key Key, value []byte) (seq uint64, displaced *Key) {
	seq = m.tail
	m.tail++
	b := m.cfg.Bucket(key)
	es := m.live(b)
	m.values[key] = value
	if i := slices.IndexFunc(es, func(e modelEntry) bool { return e.key == key }); i >= 0 {
		es[i].stamp = seq + 1
	} else {
		if len(es) == int(m.cfg.Ways) {
			o := 0
			for i, e := range es {
				if e.stamp < es[o].stamp {
					o = i
				}
			}
			d := es[o].key
			displaced = &d
			es = slices.Delete(es, o, o+1)
		}
		es = append(es, modelEntry{key, seq + 1})
	}
	m.buckets[b] = es
	return seq, displaced
}

func (m *model) get(key Key) (value []byte, seq uint64, ok bool) {
	for _, e := range m.live(m.cfg.Bucket(key)) {
		if e.key == key {
			return m.values[key], e.stamp - 1, true
		}
	}
	return nil, 0, false
}

func (m *model) delete(key Key) (uint64, bool) {
	b := m.cfg.Bucket(key)
	es := m.live(b)
	for i, e := range es {
		if e.key == key {
			m.buckets[b] = slices.Delete(es, i, i+1)
			return e.stamp - 1, true
		}
	}
	m.buckets[b] = es
	return 0, false
}

func randValue(r *rand.Rand, maxLen int) []byte {
	v := make([]byte, r.IntN(maxLen+1))
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// TestOpsAgainstModel runs random operations through every way in (the
// handlers by message, the one-sided client, the host-side Store) on a
// store small enough that the log wraps many times and buckets overflow,
// and checks every reply against the model: a hit returns the latest
// value of the key and its entry, a miss happens exactly where the key
// was never stored, deleted, evicted by the wrap or displaced.
func TestOpsAgainstModel(t *testing.T) {
	cfg := Config{Buckets: 8, Ways: 3, Entries: 32, ValueSize: 24}
	s := start(t, cfg)
	ctx := testCtx(t)
	m := newModel(s.cfg)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]Key, 60)
	for i := range keys {
		keys[i] = kv.KeyOf(uint64(i))
	}
	var hits, misses, evicted, displaced, deletes, wraps int
	const ops = 3000
	for op := range ops {
		key := keys[r.IntN(len(keys))]
		via := r.IntN(3) // 0: handlers, 1: one-sided, 2: the host's Store
		if raceEnabled && via == 2 {
			via = 0 // the host's atomics and the VM's plain loads: the detector reports each
		}
		switch k := r.IntN(10); {
		case k < 4:
			val := randValue(r, int(s.cfg.ValueSize))
			var seq uint64
			var err error
			switch via {
			case 0:
				var rep Reply
				rep, err = s.am.Put(ctx, key, val)
				seq = rep.Seq
				if rep.RoundTrips != 1 {
					t.Fatalf("op %d: am put took %d round trips", op, rep.RoundTrips)
				}
			case 1:
				var rep Reply
				rep, err = s.rdma.Put(ctx, key, val)
				seq = rep.Seq
				if rep.RoundTrips < 7 {
					t.Fatalf("op %d: one-sided put took %d round trips", op, rep.RoundTrips)
				}
			case 2:
				seq, err = s.store.Put(key, val)
			}
			want, d := m.put(key, val)
			if err != nil || seq != want {
				t.Fatalf("op %d: put %q via %d = %d, %v; want %d", op, key, via, seq, err, want)
			}
			if d != nil {
				displaced++
			}
			if seq > 0 && seq%uint64(s.cfg.Entries) == 0 {
				wraps++
			}
		case k < 9:
			var val []byte
			var seq uint64
			var err error
			switch via {
			case 0:
				var rep Reply
				rep, err = s.am.Get(ctx, key)
				val, seq = rep.Value, rep.Seq
			case 1:
				var rep Reply
				rep, err = s.rdma.Get(ctx, key)
				val, seq = rep.Value, rep.Seq
				if rep.RoundTrips < 1 || rep.RoundTrips > 1+int(s.cfg.Ways) {
					t.Fatalf("op %d: one-sided get took %d round trips", op, rep.RoundTrips)
				}
			case 2:
				val, seq, err = s.store.Get(key)
			}
			wantVal, wantSeq, ok := m.get(key)
			switch {
			case ok && (err != nil || seq != wantSeq || !bytes.Equal(val, wantVal)):
				t.Fatalf("op %d: get %q via %d = %x seq %d, %v; want %x seq %d", op, key, via, val, seq, err, wantVal, wantSeq)
			case !ok && !errors.Is(err, ErrNotFound):
				t.Fatalf("op %d: get %q via %d = %x seq %d, %v; want a miss", op, key, via, val, seq, err)
			case ok:
				hits++
			default:
				misses++
				if _, stored := m.values[key]; stored {
					evicted++
				}
			}
		default:
			if via == 1 {
				via = 0 // the one-sided client has no delete
			}
			var seq uint64
			var err error
			if via == 0 {
				var rep Reply
				rep, err = s.am.Delete(ctx, key)
				seq = rep.Seq
			} else {
				seq, err = s.store.Delete(key)
			}
			want, ok := m.delete(key)
			if ok != (err == nil) || (ok && seq != want) || (!ok && !errors.Is(err, ErrNotFound)) {
				t.Fatalf("op %d: delete %q via %d = %d, %v; want %d, %v", op, key, via, seq, err, want, ok)
			}
			if ok {
				deletes++
			}
		}
	}
	if n := s.store.Len(); n != m.len() {
		t.Errorf("the index holds %d live keys, the model %d", n, m.len())
	}
	t.Logf("%d ops: %d hits, %d misses (%d of stored keys), %d displaced, %d deletes, %d log wraps", ops, hits, misses, evicted, displaced, deletes, wraps)
	if hits < 200 || evicted < 100 || displaced < 20 || deletes < 50 || wraps < 10 {
		t.Errorf("the sequence did not exercise the store: %d hits, %d misses of stored keys, %d displaced, %d deletes, %d wraps", hits, evicted, displaced, deletes, wraps)
	}
}

func (m *model) len() int {
	n := 0
	for b := range m.buckets {
		n += len(m.live(b))
	}
	return n
}

func TestTooLong(t *testing.T) {
	s := start(t, Config{Buckets: 16, Entries: 16, ValueSize: 8})
	ctx := testCtx(t)
	key := kv.KeyOf(1)
	if _, err := s.am.Put(ctx, key, make([]byte, 9)); !errors.Is(err, ErrTooLong) {
		t.Errorf("am: %v", err)
	}
	if _, err := s.rdma.Put(ctx, key, make([]byte, 9)); !errors.Is(err, ErrTooLong) {
		t.Errorf("rdma: %v", err)
	}
	if _, err := s.store.Put(key, make([]byte, 9)); !errors.Is(err, ErrTooLong) {
		t.Errorf("store: %v", err)
	}
	// The handler's own check: a request that claims more than VALUE.
	req := make([]byte, s.cfg.PutRequestSize())
	binary.LittleEndian.PutUint32(req[16:], 9)
	if _, err := s.peer.CallID(ctx, s.am.ids.Put, req); !isCode(err, CodeTooLong) {
		t.Errorf("vlen 9: %v", err)
	}
	if s.store.Tail() != 0 {
		t.Errorf("a refused PUT appended: tail %d", s.store.Tail())
	}
}

func isCode(err error, code uint32) bool {
	c, ok := call.Code(err)
	return ok && c == code
}

// TestBusy: a bucket whose lock is held refuses writers with BUSY (the
// clients retry, then give up), while GETs go on.
func TestBusy(t *testing.T) {
	if raceEnabled {
		t.Skip("the host takes a bucket's lock that handlers then read with plain loads; the race detector reports each")
	}
	s := start(t, Config{Buckets: 16, Entries: 64, ValueSize: 8})
	ctx := testCtx(t)
	key := kv.KeyOf(3)
	if _, err := s.am.Put(ctx, key, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := s.store.lock(s.cfg.Bucket(key)); err != nil {
		t.Fatal(err)
	}
	s.am.Retries, s.rdma.Retries = 3, 3
	if rep, err := s.am.Put(ctx, key, []byte("v2")); !errors.Is(err, ErrBusy) || rep.RoundTrips != 3 {
		t.Errorf("am put on a locked bucket: %v after %d round trips", err, rep.RoundTrips)
	}
	if _, err := s.am.Delete(ctx, key); !errors.Is(err, ErrBusy) {
		t.Errorf("am delete on a locked bucket: %v", err)
	}
	if _, err := s.rdma.Put(ctx, key, []byte("v2")); !errors.Is(err, ErrBusy) {
		t.Errorf("rdma put on a locked bucket: %v", err)
	}
	if rep, err := s.am.Get(ctx, key); err != nil || string(rep.Value) != "v1" {
		t.Errorf("get on a locked bucket: %q, %v", rep.Value, err)
	}
	s.store.unlock(s.cfg.Bucket(key))
	if _, err := s.am.Put(ctx, key, []byte("v2")); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}

// TestConcurrent runs writers and readers of overlapping keys through all
// three ways at once on a store whose log wraps every few dozen PUTs: a
// GET may miss, but every value it returns is one that was written for
// that key, whole.
func TestConcurrent(t *testing.T) {
	if raceEnabled {
		t.Skip("handlers read entries with plain loads while other cores write them; the race detector reports each")
	}
	s := start(t, Config{Buckets: 4, Ways: 3, Entries: 64, ValueSize: 32})
	ctx := testCtx(t)
	const keys, perWorker = 12, 300
	// Four buckets for six writers, one-sided ones holding a lock for
	// five round trips: retry for as long as it takes.
	s.am.Retries, s.rdma.Retries = 10_000, 10_000
	// A value: the key's record number, the writer, a counter, and a
	// checksum of the three, so a torn value or another key's shows.
	mk := func(rec, writer, n uint64) []byte {
		v := make([]byte, 32)
		binary.LittleEndian.PutUint64(v, rec)
		binary.LittleEndian.PutUint64(v[8:], writer)
		binary.LittleEndian.PutUint64(v[16:], n)
		binary.LittleEndian.PutUint64(v[24:], rec*31+writer*17+n*7+1)
		return v
	}
	check := func(rec uint64, v []byte) error {
		if len(v) != 32 || binary.LittleEndian.Uint64(v) != rec {
			return fmt.Errorf("record %d: value %x is not its own", rec, v)
		}
		w, n := binary.LittleEndian.Uint64(v[8:]), binary.LittleEndian.Uint64(v[16:])
		if binary.LittleEndian.Uint64(v[24:]) != rec*31+w*17+n*7+1 {
			return fmt.Errorf("record %d: value %x is torn", rec, v)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	var hits [3]int
	var mu sync.Mutex
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for n := range perWorker {
				rec := r.Uint64N(keys)
				key := kv.KeyOf(rec)
				via := (w + n) % 3
				var err error
				if r.IntN(2) == 0 {
					v := mk(rec, uint64(w), uint64(n))
					switch via {
					case 0:
						_, err = s.am.Put(ctx, key, v)
					case 1:
						_, err = s.rdma.Put(ctx, key, v)
					case 2:
						_, err = s.store.Put(key, v)
						for errors.Is(err, ErrBusy) {
							time.Sleep(time.Microsecond)
							_, err = s.store.Put(key, v)
						}
					}
				} else {
					var v []byte
					switch via {
					case 0:
						var rep Reply
						rep, err = s.am.Get(ctx, key)
						v = rep.Value
					case 1:
						var rep Reply
						rep, err = s.rdma.Get(ctx, key)
						v = rep.Value
					case 2:
						v, _, err = s.store.Get(key)
					}
					if err == nil {
						err = check(rec, v)
						mu.Lock()
						hits[via]++
						mu.Unlock()
					} else if errors.Is(err, ErrNotFound) {
						err = nil
					}
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d op %d via %d: %w", w, n, via, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if hits[0] == 0 || hits[1] == 0 || hits[2] == 0 {
		t.Errorf("hits by way: %v", hits)
	}
	if s.store.Tail() < uint64(s.cfg.Entries)*5 {
		t.Errorf("the log wrapped fewer than 5 times: tail %d", s.store.Tail())
	}
}

// TestYCSBThroughTargets drives a loaded store through the benchmark's
// targets: the GET by message is one round trip, by READs two.
func TestYCSBThroughTargets(t *testing.T) {
	if raceEnabled {
		t.Skip("GETs and PUTs of one key on several NIC cores: the race detector reports the VM's plain loads")
	}
	const records = 2000
	s := start(t, ConfigFor(records, 64))
	ctx := testCtx(t)
	if err := workload.Load(ctx, []workload.Target{Loader{S: s.store}}, records, 64, 2); err != nil {
		t.Fatal(err)
	}
	if n := s.store.Len(); n != records {
		t.Fatalf("loaded %d of %d", n, records)
	}
	for _, tc := range []struct {
		name   string
		target workload.Target
		rts    float64
	}{
		{"am", Target{C: s.am, Misses: new(Misses)}, 1},
		{"rdma", Target{C: s.rdma, Misses: new(Misses)}, 2},
	} {
		st, err := workload.Run(ctx, workload.Config{Mix: workload.MixC, Records: records, Ops: 1000, Clients: 1, Outstanding: 4}, []workload.Target{tc.target})
		if err != nil || st.Errors != 0 {
			t.Fatalf("%s: %v, %d errors: %v", tc.name, err, st.Errors, st.FirstError)
		}
		if got := st.RoundTripsPerOp(); got < tc.rts || got > tc.rts+0.05 {
			t.Errorf("%s: %.3f round trips per GET, want %.0f", tc.name, got, tc.rts)
		}
		st, err = workload.Run(ctx, workload.Config{Mix: workload.MixA, Records: records, Ops: 600, Clients: 1, Outstanding: 4, Seed: 3}, []workload.Target{tc.target})
		if err != nil || st.Errors != 0 {
			t.Fatalf("%s ycsb-a: %v, %d errors: %v", tc.name, err, st.Errors, st.FirstError)
		}
	}
	for rec := range uint64(records) {
		v, _, err := s.store.Get(kv.KeyOf(rec))
		if err != nil || len(v) != 64 {
			t.Fatalf("record %d after the runs: %d bytes, %v", rec, len(v), err)
		}
	}
}

func FuzzDecodeGet(f *testing.F) {
	cfg := Config{ValueSize: 16}
	f.Add(make([]byte, cfg.GetReplySize()))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, v, err := cfg.DecodeGet(b)
		if err == nil && (len(v) > 16 || len(b) != cfg.GetReplySize() || seq != binary.LittleEndian.Uint64(b)) {
			t.Fatalf("DecodeGet(%x) = %d %x", b, seq, v)
		}
		if _, err := DecodeSeq(b); (err == nil) != (len(b) == 8) {
			t.Fatalf("DecodeSeq(%x): %v", b, err)
		}
	})
}
