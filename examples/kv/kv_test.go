package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/call/calltest"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/verifier"
)

const tenant = 7

// node is an in-process NIC with one kv table installed.
type node struct {
	nic    *nicrt.NIC
	prog   *nicrt.Program
	region *nicrt.Region
	table  *Table
	am     *Client
	rdma   *RDMAClient
	caller *calltest.Local
}

func newNode(t testing.TB, cfgs ...Config) []*node {
	t.Helper()
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nic.Close() })
	var nodes []*node
	for _, cfg := range cfgs {
		nodes = append(nodes, install(t, nic, cfg, false))
	}
	return nodes
}

func install(t testing.TB, nic *nicrt.NIC, cfg Config, nicmem bool) *node {
	t.Helper()
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	r, err := nic.Register(tenant, cfg.Region, cfg.RegionSize(), nicrt.RegionOptions{Writable: true, NICMem: nicmem})
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.InstallWith(tenant, obj, cfg.InstallOptions())
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	ids, err := IDs(p)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := NewTable(cfg, r.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	caller := &calltest.Local{NIC: nic, Tenant: tenant, Src: 1}
	reader := &calltest.LocalReader{NIC: nic, Tenant: tenant, Src: 1, Region: r.Ref()}
	return &node{nic: nic, prog: p, region: r, table: tb, caller: caller,
		am: NewClient(caller, cfg, ids), rdma: NewRDMAClient(reader, cfg)}
}

func field(t *testing.T, fs []bytecode.Field, name string) bytecode.Field {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no field %q in %+v", name, fs)
	return bytecode.Field{}
}

func extent(fs []bytecode.Field) int {
	n := 0
	for _, f := range fs {
		n = max(n, int(f.Offset+f.Size))
	}
	return n
}

// TestLayout checks the Go constants and codecs against the compiled
// object for several configurations, and that each object verifies.
func TestLayout(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Region: "hot", Buckets: 16, Probes: 4, ValueSize: 64},
		{Buckets: 1 << 20, Probes: 8, ValueSize: 64},
		{Buckets: 8, Probes: 8, ValueSize: 8},
		{Buckets: 1 << 22, Probes: MaxProbes, ValueSize: 64},
	} {
		t.Run(fmt.Sprintf("%s-%d-%d-%d", cfg.Region, cfg.Buckets, cfg.Probes, cfg.ValueSize), func(t *testing.T) {
			obj, err := Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verifier.VerifyObject(obj, verifier.Config{})
			if err != nil {
				t.Fatalf("verifier: %+v", err)
			}
			for _, e := range rep.Entries {
				if e.MaxInsns > nicrt.DefaultConfig().NICBudget {
					t.Errorf("%s: bound %d over the NIC budget", e.Name, e.MaxInsns)
				}
			}
			c := cfg.withDefaults()
			if len(obj.Regions) != 1 || obj.Regions[0].Name != RegionName || obj.Regions[0].Size != c.RegionSize() || !obj.Regions[0].Writable {
				t.Errorf("regions %+v, want one writable %q of %d bytes", obj.Regions, RegionName, c.RegionSize())
			}
			names := []string{HandlerGet, HandlerPut, HandlerDelete, HandlerCAS}
			if len(obj.Handlers) != len(names) {
				t.Fatalf("%d handlers", len(obj.Handlers))
			}
			for i, h := range obj.Handlers {
				if h.Name != names[i] {
					t.Errorf("handler %d is %q, want %q", i, h.Name, names[i])
				}
			}
			V := uint32(c.ValueSize)
			type want struct {
				f            bytecode.Field
				off, size    uint32
				what, handle string
			}
			get, put, del, cas := obj.Handlers[0], obj.Handlers[1], obj.Handlers[2], obj.Handlers[3]
			for _, w := range []want{
				{field(t, get.Args, "key"), 0, 16, "arg", "get"},
				{field(t, get.Results, "version"), 0, 8, "result", "get"},
				{field(t, get.Results, "vlen"), 8, 4, "result", "get"},
				{field(t, get.Results, "value"), 12, V, "result", "get"},
				{field(t, put.Args, "key"), 0, 16, "arg", "put"},
				{field(t, put.Args, "vlen"), 16, 4, "arg", "put"},
				{field(t, put.Args, "value"), 20, V, "arg", "put"},
				{field(t, put.Results, "result"), 0, 8, "result", "put"},
				{field(t, del.Args, "key"), 0, 16, "arg", "delete"},
				{field(t, cas.Args, "expected"), 16, 8, "arg", "cas"},
				{field(t, cas.Args, "vlen"), 24, 4, "arg", "cas"},
				{field(t, cas.Args, "value"), 28, V, "arg", "cas"},
				{field(t, cas.Results, "version"), 0, 8, "result", "cas"},
				{field(t, cas.Results, "swapped"), 8, 1, "result", "cas"},
			} {
				if w.f.Offset != w.off || w.f.Size != w.size {
					t.Errorf("%s %s %s @%d size %d, the codec says @%d size %d", w.handle, w.what, w.f.Name, w.f.Offset, w.f.Size, w.off, w.size)
				}
			}
			for _, s := range []struct {
				name       string
				have, want int
			}{
				{"get request", c.GetRequestSize(), roundUp(extent(get.Args), 1)},
				{"get reply", c.GetReplySize(), roundUp(extent(get.Results), 8)},
				{"put request", c.PutRequestSize(), roundUp(extent(put.Args), 4)},
				{"cas request", c.CASRequestSize(), roundUp(extent(cas.Args), 8)},
				{"cas reply", CASReplySize, roundUp(extent(cas.Results), 8)},
			} {
				if s.have != s.want {
					t.Errorf("%s: codec %d bytes, object %d", s.name, s.have, s.want)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Buckets: 1000},
		{Buckets: 4, Probes: 8},
		{Probes: MaxProbes + 1, Buckets: 64},
		{ValueSize: 12},
		{ValueSize: 264},
		{Buckets: 1 << 31, ValueSize: 256},
	} {
		if _, err := Compile(cfg); err == nil {
			t.Errorf("%+v compiled", cfg)
		}
	}
}

// TestRegionOfAnyName: the table's region may be registered under any
// name; the program's region kv is bound to it at install.
func TestRegionOfAnyName(t *testing.T) {
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	ctx := context.Background()
	for _, name := range []string{"9x", "for", "tables/hot one"} {
		n := install(t, nic, Config{Region: name, Buckets: 64, ValueSize: 8}, false)
		if n.region.Name != name {
			t.Errorf("registered %q", n.region.Name)
		}
		k := KeyOf(1)
		if _, err := n.am.Put(ctx, k, []byte(name[:1])); err != nil {
			t.Fatalf("%s: put: %v", name, err)
		}
		if r, err := n.am.Get(ctx, k); err != nil || string(r.Value) != name[:1] {
			t.Errorf("%s: get %q, %v", name, r.Value, err)
		}
	}
	obj, err := Compile(Config{Region: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nic.InstallWith(tenant, obj, Config{Region: "elsewhere"}.InstallOptions()); !errors.Is(err, nicrt.ErrRegionMissing) || !strings.Contains(err.Error(), `"kv" (bound to "elsewhere")`) {
		t.Errorf("bound to an unregistered region: %v", err)
	}
}

// TestHashAgrees checks Hash against the language's hash helper: a
// handler that returns hash(key).
func TestHashAgrees(t *testing.T) {
	src := "handler h(key: [u8; 16]) -> u64 { return hash(key) }\n"
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	obj, err := compiler.Compile(lang.NewFileSet(), "hash.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.Install(tenant, obj)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := p.HandlerID("h")
	for n := range uint64(50) {
		k := KeyOf(n * 7919)
		r := nic.Call(&nicrt.Message{Tenant: tenant, Handler: id, Payload: k[:]})
		if r.Status != nicrt.StatusOK {
			t.Fatalf("%v %v", r.Status, r.Err)
		}
		if got := binary.LittleEndian.Uint64(r.Data); got != Hash(k) {
			t.Fatalf("key %q: NIC hash %#x, Hash %#x", k[:], got, Hash(k))
		}
	}
}

func TestKeys(t *testing.T) {
	if k := KeyOf(42); string(k[:]) != "user000000000042" {
		t.Errorf("KeyOf(42) = %q", k[:])
	}
	if _, err := StringKey("seventeen bytes!!"); err == nil {
		t.Error("a 17-byte key was accepted")
	}
	k, err := StringKey("hello")
	if err != nil || string(k[:5]) != "hello" || k[5] != 0 {
		t.Errorf("StringKey(hello) = %q, %v", k[:], err)
	}
}

func value(r *rand.Rand, maxLen int) []byte {
	v := make([]byte, r.IntN(maxLen+1))
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// TestOpsAgainstMap runs random operations through the handlers and
// compares every reply with a Go map (and the host-side Table, and the
// RDMA-style client).
func TestOpsAgainstMap(t *testing.T) {
	cfg := Config{Buckets: 1024, Probes: 8, ValueSize: 256}
	n := newNode(t, cfg)[0]
	ctx := context.Background()
	type entry struct {
		val     []byte
		version uint64
	}
	ref := map[Key]entry{}
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]Key, 300)
	for i := range keys {
		keys[i] = KeyOf(uint64(i) * 104729)
	}
	counts := map[string]int{}
	for op := 0; op < 4000; op++ {
		k := keys[r.IntN(len(keys))]
		want, present := ref[k]
		switch x := r.IntN(10); {
		case x < 4: // get
			rep, err := n.am.Get(ctx, k)
			if !present {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("op %d: get of an absent key: %v", op, err)
				}
				counts["get miss"]++
				continue
			}
			if err != nil || !bytes.Equal(rep.Value, want.val) || rep.Version != want.version || rep.RoundTrips != 1 {
				t.Fatalf("op %d: get = %+v, %v; want %x v%d in 1 round trip", op, rep, err, want.val, want.version)
			}
			counts["get hit"]++
		case x < 7: // put, by message or (one time in three) by one-sided verbs
			v := value(r, int(cfg.ValueSize))
			var rep Reply
			var err error
			if x == 6 {
				rep, err = n.rdma.Put(ctx, k, v)
				if err == nil && (rep.RoundTrips < 4 || rep.RoundTrips > 6) {
					t.Fatalf("op %d: rdma put in %d round trips", op, rep.RoundTrips)
				}
				counts["rdma put"]++
			} else {
				rep, err = n.am.Put(ctx, k, v)
				if err == nil && rep.RoundTrips != 1 {
					t.Fatalf("op %d: put in %d round trips", op, rep.RoundTrips)
				}
			}
			if err != nil {
				t.Fatalf("op %d: put: %v", op, err)
			}
			if present && rep.Version <= want.version || rep.Version%2 != 0 {
				t.Fatalf("op %d: put gave version %d after %d", op, rep.Version, want.version)
			}
			ref[k] = entry{v, rep.Version}
			counts["put"]++
		case x < 8: // delete
			_, err := n.am.Delete(ctx, k)
			if present != (err == nil) || !present && !errors.Is(err, ErrNotFound) {
				t.Fatalf("op %d: delete (present %v): %v", op, present, err)
			}
			delete(ref, k)
			counts["delete"]++
		default: // cas, with the right version half of the time
			exp := want.version
			if r.IntN(2) == 0 {
				exp += 2
			}
			v := value(r, int(cfg.ValueSize))
			rep, err := n.am.CompareAndSwap(ctx, k, exp, v)
			switch {
			case !present:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("op %d: cas of an absent key: %v", op, err)
				}
			case err != nil:
				t.Fatalf("op %d: cas: %v", op, err)
			case exp == want.version:
				if !rep.Swapped || rep.Version != want.version+2 {
					t.Fatalf("op %d: cas with the current version: %+v", op, rep)
				}
				ref[k] = entry{v, rep.Version}
				counts["cas swapped"]++
			default:
				if rep.Swapped || rep.Version != want.version {
					t.Fatalf("op %d: cas with a stale version: %+v, current %d", op, rep, want.version)
				}
				counts["cas refused"]++
			}
		}
	}
	t.Logf("%v", counts)
	for _, c := range []string{"get miss", "get hit", "put", "rdma put", "delete", "cas swapped", "cas refused"} {
		if counts[c] == 0 {
			t.Errorf("no %s", c)
		}
	}
	if n.table.Len() != len(ref) {
		t.Errorf("table holds %d keys, the map %d", n.table.Len(), len(ref))
	}
	for _, k := range keys {
		want, present := ref[k]
		hv, hver, herr := n.table.Get(k)
		rep, err := n.rdma.Get(ctx, k)
		if !present {
			if !errors.Is(herr, ErrNotFound) || !errors.Is(err, ErrNotFound) {
				t.Errorf("absent key: table %v, rdma %v", herr, err)
			}
			continue
		}
		if herr != nil || !bytes.Equal(hv, want.val) || hver != want.version {
			t.Errorf("table.Get = %x v%d %v, want %x v%d", hv, hver, herr, want.val, want.version)
		}
		if err != nil || !bytes.Equal(rep.Value, want.val) || rep.Version != want.version || rep.RoundTrips < 2 {
			t.Errorf("rdma get = %+v %v, want %x v%d in ≥2 round trips", rep, err, want.val, want.version)
		}
	}
}

// keysWithHome returns n keys whose home bucket is home.
func keysWithHome(cfg Config, home uint32, n int) []Key {
	var ks []Key
	for i := uint64(0); len(ks) < n; i++ {
		k := KeyOf(i)
		if cfg.Home(k) == home {
			ks = append(ks, k)
		}
	}
	return ks
}

// TestFullWindow fills one probe window, sees CodeFull, frees a bucket
// and reuses the tombstone; keys behind the tombstone stay reachable,
// also when the window wraps past the last bucket.
func TestFullWindow(t *testing.T) {
	cfg := Config{Buckets: 64, Probes: 4, ValueSize: 64}
	for _, home := range []uint32{5, 62} {
		t.Run(fmt.Sprint("home", home), func(t *testing.T) {
			n := newNode(t, cfg)[0]
			ctx := context.Background()
			ks := keysWithHome(cfg, home, 6)
			for i, k := range ks[:4] {
				if _, err := n.am.Put(ctx, k, []byte{byte(i)}); err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
			}
			if _, err := n.am.Put(ctx, ks[4], []byte("x")); !errors.Is(err, ErrFull) {
				t.Fatalf("fifth put in a 4-probe window: %v, want ErrFull", err)
			}
			if _, err := n.table.Put(ks[4], []byte("x")); !errors.Is(err, ErrFull) {
				t.Fatalf("Table.Put into a full window: %v", err)
			}
			if _, err := n.am.Delete(ctx, ks[1]); err != nil {
				t.Fatal(err)
			}
			for _, c := range []interface {
				Get(context.Context, Key) (Reply, error)
			}{n.am, n.rdma} {
				rep, err := c.Get(ctx, ks[3])
				if err != nil || !bytes.Equal(rep.Value, []byte{3}) {
					t.Fatalf("%T: key behind a tombstone: %+v %v", c, rep, err)
				}
				if _, err := c.Get(ctx, ks[1]); !errors.Is(err, ErrNotFound) {
					t.Fatalf("%T: deleted key: %v", c, err)
				}
				if _, err := c.Get(ctx, ks[5]); !errors.Is(err, ErrNotFound) {
					t.Fatalf("%T: absent key in a full window: %v", c, err)
				}
			}
			rep, err := n.rdma.Get(ctx, ks[3])
			wantRT := 2
			if home+4 > cfg.Buckets {
				wantRT = 3 // the window wraps: two READs of headers
			}
			if err != nil || rep.RoundTrips != wantRT {
				t.Errorf("rdma round trips %d (%v), want %d", rep.RoundTrips, err, wantRT)
			}
			if _, err := n.am.Put(ctx, ks[4], []byte("x")); err != nil {
				t.Fatalf("put into the tombstone: %v", err)
			}
			b := n.table.bucket((home + 1) % cfg.Buckets)
			if !bytes.Equal(b[BucketKey:BucketKey+KeySize], ks[4][:]) {
				t.Errorf("the new key did not take the tombstone")
			}
			if _, err := n.am.Put(ctx, ks[5], []byte("y")); !errors.Is(err, ErrFull) {
				t.Fatalf("put into a full window again: %v", err)
			}
		})
	}
}

// TestSizes: the longest value, one byte more, and malformed requests.
func TestSizes(t *testing.T) {
	cfg := Config{Buckets: 256, ValueSize: 256}
	n := newNode(t, cfg)[0]
	ctx := context.Background()
	k := KeyOf(1)
	long := bytes.Repeat([]byte{0xab}, 256)
	if _, err := n.am.Put(ctx, k, long); err != nil {
		t.Fatal(err)
	}
	rep, err := n.am.Get(ctx, k)
	if err != nil || !bytes.Equal(rep.Value, long) {
		t.Fatalf("256-byte value: %d bytes, %v", len(rep.Value), err)
	}
	if rep, err := n.rdma.Get(ctx, k); err != nil || !bytes.Equal(rep.Value, long) {
		t.Fatalf("rdma 256-byte value: %d bytes, %v", len(rep.Value), err)
	}
	if _, err := n.am.Put(ctx, k, make([]byte, 257)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("257-byte value: %v", err)
	}
	// A request that claims a vlen over ValueSize reaches the handler.
	req, _ := cfg.AppendPut(nil, k, nil)
	binary.LittleEndian.PutUint32(req[16:], 257)
	if _, err := n.caller.Call(ctx, n.am.ids.Put, req); !isCode(err, CodeTooLong) {
		t.Fatalf("put with vlen 257: %v", err)
	}
	creq, _ := cfg.AppendCAS(nil, k, 2, nil)
	binary.LittleEndian.PutUint32(creq[24:], 1000)
	if _, err := n.caller.Call(ctx, n.am.ids.CAS, creq); !isCode(err, CodeTooLong) {
		t.Fatalf("cas with vlen 1000: %v", err)
	}
	// Short requests fail before the body runs.
	for _, c := range []struct {
		id  uint32
		req []byte
	}{
		{n.am.ids.Get, k[:15]},
		{n.am.ids.Delete, nil},
		{n.am.ids.Put, req[:len(req)-1]},
		{n.am.ids.CAS, creq[:27]},
	} {
		if _, err := n.caller.Call(ctx, c.id, c.req); !isCode(err, bytecode.FailShortRequest) {
			t.Errorf("handler %d with %d bytes: %v, want FailShortRequest", c.id, len(c.req), err)
		}
	}
	// Replies of the wrong size are refused by the decoders.
	if _, _, err := cfg.DecodeGet(make([]byte, 10)); err == nil {
		t.Error("DecodeGet took 10 bytes")
	}
	bad := make([]byte, cfg.GetReplySize())
	binary.LittleEndian.PutUint32(bad[8:], 300)
	if _, _, err := cfg.DecodeGet(bad); err == nil {
		t.Error("DecodeGet took vlen 300")
	}
	if _, err := DecodeVersion(make([]byte, 4)); err == nil {
		t.Error("DecodeVersion took 4 bytes")
	}
	if _, _, err := DecodeCAS(make([]byte, 8)); err == nil {
		t.Error("DecodeCAS took 8 bytes")
	}
}

func isCode(err error, code uint32) bool {
	c, ok := call.Code(err)
	return ok && c == code
}

// TestHostLoad: values loaded through Table are what the handlers serve,
// and values the handlers store are what Table reads; a bucket a host
// writer holds is busy to both clients.
func TestHostLoad(t *testing.T) {
	cfg := Config{Buckets: 4096, ValueSize: 64}
	n := newNode(t, cfg)[0]
	ctx := context.Background()
	for i := range uint64(1000) {
		if _, err := n.table.Put(KeyOf(i), []byte(fmt.Sprint("v", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := uint64(0); i < 1000; i += 37 {
		rep, err := n.am.Get(ctx, KeyOf(i))
		if err != nil || string(rep.Value) != fmt.Sprint("v", i) || rep.Version != 2 {
			t.Fatalf("key %d: %+v %v", i, rep, err)
		}
	}
	if _, err := n.am.Put(ctx, KeyOf(3), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if v, ver, err := n.table.Get(KeyOf(3)); string(v) != "new" || ver != 4 || err != nil {
		t.Fatalf("table.Get after a put: %q v%d %v", v, ver, err)
	}
	// Hold key 5's bucket as a writer would.
	i, v, found, _, _ := n.table.find(KeyOf(5))
	if !found {
		t.Fatal("key 5 not found")
	}
	*n.table.version(i) = v + 1
	for _, c := range []interface {
		Get(context.Context, Key) (Reply, error)
	}{n.am, n.rdma} {
		rep, err := c.Get(ctx, KeyOf(5))
		want := DefaultRetries
		if _, ok := c.(*RDMAClient); ok {
			want = DefaultRDMARetries
		}
		if !errors.Is(err, ErrBusy) || rep.RoundTrips != want {
			t.Errorf("%T on a locked bucket: %v after %d round trips", c, err, rep.RoundTrips)
		}
	}
	if _, err := n.am.Put(ctx, KeyOf(5), nil); !errors.Is(err, ErrBusy) {
		t.Errorf("put on a locked bucket: %v", err)
	}
	*n.table.version(i) = v
	if _, err := n.am.Get(ctx, KeyOf(5)); err != nil {
		t.Errorf("after unlocking: %v", err)
	}
}

// TestConcurrentNoTornReads: writers on several cores rewrite a few keys
// with self-checking values while readers GET them; every value a GET
// returns is whole.
func TestConcurrentNoTornReads(t *testing.T) {
	if raceEnabled {
		t.Skip("handlers on several cores read words other cores write with plain loads (the VM's memory model); the race detector reports each")
	}
	cfg := Config{Buckets: 256, ValueSize: 256}
	n := newNode(t, cfg)[0]
	ctx := context.Background()
	keys := []Key{KeyOf(1), KeyOf(2), KeyOf(3)}
	mk := func(k Key, seq uint64) []byte {
		v := make([]byte, 256)
		for i := 0; i < 256; i += 8 {
			binary.LittleEndian.PutUint64(v[i:], seq^uint64(k[15]))
		}
		return v
	}
	for _, k := range keys {
		if _, err := n.table.Put(k, mk(k, 0)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad, gets, busy := 0, 0, 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := &calltest.Local{NIC: n.nic, Tenant: tenant, Src: uint64(100 + w)}
			c := NewClient(caller, cfg, n.am.ids)
			for i := range uint64(300) {
				k := keys[int(i)%len(keys)]
				if w%2 == 0 {
					if _, err := c.Put(ctx, k, mk(k, i)); err != nil && !errors.Is(err, ErrBusy) {
						t.Error(err)
						return
					}
					continue
				}
				rep, err := c.Get(ctx, k)
				mu.Lock()
				if errors.Is(err, ErrBusy) {
					busy++
				} else if err != nil {
					t.Error(err)
				} else {
					gets++
					first := binary.LittleEndian.Uint64(rep.Value)
					for j := 8; j < 256; j += 8 {
						if binary.LittleEndian.Uint64(rep.Value[j:]) != first {
							bad++
							break
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d gets, %d busy after retries, %d torn", gets, busy, bad)
	if bad != 0 {
		t.Errorf("%d torn values", bad)
	}
	if gets == 0 {
		t.Error("no get succeeded")
	}
}

// TestHotKeysInNICMem: the same program for a second table in a nicmem
// region; a GET there costs the model no PCIe round trip.
func TestHotKeysInNICMem(t *testing.T) {
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	cold := install(t, nic, Config{Region: "kv", Buckets: 1024, ValueSize: 64}, false)
	hot := install(t, nic, Config{Region: "kv_hot", Buckets: 64, ValueSize: 64}, true)
	if !hot.region.NICMem || cold.region.NICMem {
		t.Fatal("placement not as asked")
	}
	k := KeyOf(9)
	for _, n := range []*node{cold, hot} {
		if _, err := n.table.Put(k, []byte("hot or not")); err != nil {
			t.Fatal(err)
		}
	}
	model := func(n *node) uint64 {
		r := nic.Call(&nicrt.Message{Tenant: tenant, Handler: n.am.ids.Get, Payload: k[:]})
		if r.Status != nicrt.StatusOK || r.Placement != nicrt.PlaceNIC {
			t.Fatalf("get: %v %v on %v", r.Status, r.Err, r.Placement)
		}
		return r.ModelNanos
	}
	c, h := model(cold), model(hot)
	t.Logf("modelled GET: host memory %d ns, nicmem %d ns", c, h)
	if h >= c || c-h < uint64(nic.Config().DMALatency.Nanoseconds()) {
		t.Errorf("nicmem GET %d ns is not a DMA round trip cheaper than %d ns", h, c)
	}
}

// TestYCSBThroughTargets loads records with the host Loader and runs a
// short YCSB-B through both targets: every operation succeeds, the
// active-message target takes 1 round trip per operation, the one-sided
// one at least 2 per read; afterwards every record still reads back.
func TestYCSBThroughTargets(t *testing.T) {
	if raceEnabled {
		t.Skip("handlers on several cores read words other cores write with plain loads (the VM's memory model); the race detector reports each")
	}
	cfg := Config{Buckets: 4096, ValueSize: 64}
	n := newNode(t, cfg)[0]
	ctx := context.Background()
	const records = 1500
	if err := workload.Load(ctx, []workload.Target{Loader{n.table}, Loader{n.table}}, records, 64, 2); err != nil {
		t.Fatal(err)
	}
	if n.table.Len() != records {
		t.Fatalf("%d records loaded", n.table.Len())
	}
	wcfg := workload.Config{Mix: workload.MixB, Keys: workload.Zipfian, Records: records, ValueSize: 64, Clients: 2, Outstanding: 4, Ops: 4000}
	for _, mode := range []string{workload.ModeAM, workload.ModeRDMA} {
		var targets []workload.Target
		for c := range 2 {
			src := uint64(10 + c)
			if mode == workload.ModeAM {
				ids, _ := IDs(n.prog)
				targets = append(targets, AMTarget{NewClient(&calltest.Local{NIC: n.nic, Tenant: tenant, Src: src}, cfg, ids)})
			} else {
				targets = append(targets, RDMATarget{NewRDMAClient(&calltest.LocalReader{NIC: n.nic, Tenant: tenant, Src: src, Region: n.region.Ref()}, cfg)})
			}
		}
		st, err := workload.Run(ctx, wcfg, targets)
		if err != nil {
			t.Fatal(err)
		}
		mr := st.ModeResult(mode)
		t.Logf("%s: %d ops (%d reads), %d errors, %.3f round trips/op, in process %.0f ops/s, p50 %.1f µs, p99 %.1f µs", mode, st.Ops, st.Reads, st.Errors, mr.RoundTripsPerOp, mr.OpsPerSec, mr.P50us, mr.P99us)
		if st.Errors != 0 {
			t.Errorf("%s: %d errors, first %v", mode, st.Errors, st.FirstError)
		}
		readRT := float64(st.RoundTrips) / float64(st.Ops)
		switch mode {
		case workload.ModeAM:
			if readRT < 1 || readRT > 1.01 {
				t.Errorf("am: %.3f round trips per op", readRT)
			}
		default:
			if readRT < 2 {
				t.Errorf("rdma: %.3f round trips per op", readRT)
			}
		}
	}
	for i := range uint64(records) {
		v, _, err := n.table.Get(KeyOf(i))
		if err != nil || len(v) != 64 {
			t.Fatalf("record %d after the runs: %d bytes, %v", i, len(v), err)
		}
	}
}

// TestLoadFactor: BucketsFor's load of 1/4 takes 200,000 benchmark keys
// within the default 16 probes, host side.
func TestLoadFactor(t *testing.T) {
	const records = 200_000
	cfg := Config{Buckets: BucketsFor(records), ValueSize: 8}
	mem := make([]uint64, cfg.RegionSize()/8)
	tb, err := NewTable(cfg, unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), cfg.RegionSize()))
	if err != nil {
		t.Fatal(err)
	}
	far := 0
	for i := range uint64(records) {
		if _, err := tb.Put(KeyOf(i), []byte{byte(i)}); err != nil {
			t.Fatalf("record %d of %d in %d buckets: %v", i, records, cfg.Buckets, err)
		}
	}
	for i := range uint64(records) {
		j, _, found, _, _ := tb.find(KeyOf(i))
		if !found {
			t.Fatalf("record %d lost", i)
		}
		far = max(far, int((j-tb.cfg.Home(KeyOf(i)))&(cfg.Buckets-1)))
	}
	t.Logf("%d records in %d buckets: the farthest is %d buckets from home", records, cfg.Buckets, far)
}

// FuzzDecode: the reply decoders never panic, and what DecodeGet accepts
// is within the value size and aliases the reply.
func FuzzDecode(f *testing.F) {
	cfg := Config{ValueSize: 64}
	good := make([]byte, cfg.GetReplySize())
	binary.LittleEndian.PutUint32(good[8:], 64)
	f.Add(good)
	f.Add(make([]byte, 16))
	f.Add(make([]byte, 8))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, v, err := cfg.DecodeGet(b); err == nil {
			if len(v) > 64 || len(b) != cfg.GetReplySize() || int(binary.LittleEndian.Uint32(b[8:])) != len(v) {
				t.Fatalf("accepted %d bytes with a %d-byte value", len(b), len(v))
			}
		}
		if _, err := DecodeVersion(b); (err == nil) != (len(b) == VersionReplySize) {
			t.Fatalf("DecodeVersion of %d bytes: %v", len(b), err)
		}
		if _, _, err := DecodeCAS(b); (err == nil) != (len(b) == CASReplySize) {
			t.Fatalf("DecodeCAS of %d bytes: %v", len(b), err)
		}
	})
}

// TestHotSplit: the hottest Zipfian records live in a nicmem table, the
// rest in host memory; a YCSB-C run through a SplitTarget finds every
// record and sends the hot share of GETs to the nicmem table.
func TestHotSplit(t *testing.T) {
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	const records = 4000
	coldCfg := Config{Region: "kv", Buckets: BucketsFor(records), ValueSize: 64}
	hotCfg := Config{Region: "kv_hot", Buckets: BucketsFor(64), ValueSize: 64}
	cold := install(t, nic, coldCfg, false)
	hot := install(t, nic, hotCfg, true)
	hotKeys := workload.HotKeys(workload.Zipfian, records, 64, 100_000, 1)
	split := NewSplitTarget(Loader{hot.table}, Loader{cold.table}, hotKeys)
	ctx := context.Background()
	if err := workload.Load(ctx, []workload.Target{split}, records, 64, 1); err != nil {
		t.Fatal(err)
	}
	if hot.table.Len() != 64 || cold.table.Len() != records-64 {
		t.Fatalf("hot table %d records, cold %d", hot.table.Len(), cold.table.Len())
	}
	run := NewSplitTarget(AMTarget{hot.am}, AMTarget{cold.am}, hotKeys)
	st, err := workload.Run(ctx, workload.Config{Mix: workload.MixC, Keys: workload.Zipfian, Records: records, Clients: 1, Outstanding: 2, Ops: 5000, Seed: 2}, []workload.Target{run})
	if err != nil || st.Errors != 0 {
		t.Fatalf("%v; %d errors, first %v", err, st.Errors, st.FirstError)
	}
	hs, _ := nic.HandlerStats(hot.am.ids.Get)
	cs, _ := nic.HandlerStats(cold.am.ids.Get)
	share := float64(hs.Runs) / float64(hs.Runs+cs.Runs)
	t.Logf("%d GETs: %.1f%% to the nicmem table of 64 records", hs.Runs+cs.Runs, 100*share)
	if hs.Runs+cs.Runs != 5000 || share < 0.1 {
		t.Errorf("%d hot and %d cold GETs", hs.Runs, cs.Runs)
	}
}
