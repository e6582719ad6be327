package clientrun_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"go/constant"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/clientrun/clientruntest"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// The example services' handler programs, run at the client and at the
// node: every client-eligible handler gives the same replies and leaves
// the same region bytes (clientruntest.Twin checks each request), at the
// round trips its declaration allows.

// exampleObject compiles examples/DIR/FILE with the constant overrides.
func exampleObject(t testing.TB, file string, defs map[string]uint64) *bytecode.Object {
	t.Helper()
	path := filepath.Join("..", "examples", file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	conf := lang.Config{Constants: map[string]constant.Value{}}
	for k, v := range defs {
		conf.Constants[k] = constant.MakeUint64(v)
	}
	obj, err := compiler.CompileWith(conf, lang.NewFileSet(), path, src)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func newTwin(t testing.TB, obj *bytecode.Object) *clientruntest.Twin {
	t.Helper()
	var regions [][]byte
	for _, r := range obj.Regions {
		regions = append(regions, make([]byte, r.Size))
	}
	w, err := clientruntest.NewTwin(obj, regions, clientrun.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// call runs one request at both places and fails the test where they
// differ.
func call(t *testing.T, w *clientruntest.Twin, handler string, req []byte) clientruntest.TwinResult {
	t.Helper()
	res, err := w.Call(context.Background(), clientrun.Call{Handler: handler, Request: req, SrcNode: 5, Tenant: 1, RequestID: 9})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEligibleExamples(t *testing.T) {
	want := map[string][]string{
		"kv/kv.naam":       {"get"},
		"chase/chase.naam": {"walk", "lookup"},
		"rpc/ledger.naam":  {"balance", "entry"},
		"mica/mica.naam":   {"get"},
		"btree/btree.naam": {"lookup", "scan"},
	}
	for file, names := range want {
		r, err := clientruntest.NewRunner(exampleObject(t, file, nil), clientrun.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range r.Object().Handlers {
			if r.Eligible(h.Name) == nil {
				got = append(got, h.Name)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(names) {
			t.Errorf("%s: eligible %v, want %v", file, got, names)
		}
	}
}

// kvKey is the YCSB-style key of record i: "user" and 12 digits.
func kvKey(i int) []byte { return fmt.Appendf(nil, "user%012d", i) }

func kvPut(key []byte, value []byte, valueSize int) []byte {
	req := append([]byte(nil), key...)
	req = binary.LittleEndian.AppendUint32(req, uint32(len(value)))
	req = append(req, value...)
	return append(req, make([]byte, valueSize-len(value))...)
}

// TestKVYCSB runs a YCSB-B stream (95% GETs of Zipf-distributed records,
// 5% updates, and GETs of records that do not exist) against the KV
// program: each GET at the client and at the node gives the same reply,
// and one that finds its key takes two round trips: the declared probe
// window, then the value slot.
func TestKVYCSB(t *testing.T) {
	for _, cfg := range []struct {
		name           string
		defs           map[string]uint64
		records, value int
		ops            int
	}{
		{"default", nil, 600, 256, 3000},
		// A small table, full enough that probe windows wrap past the
		// last bucket, with DELETED buckets probes must pass.
		{"small", map[string]uint64{"BUCKETS": 64, "PROBES": 8, "VALUE": 64}, 40, 64, 2000},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			w := newTwin(t, exampleObject(t, "kv/kv.naam", cfg.defs))
			rng := rand.New(rand.NewPCG(1, 2))
			// A value of 24 to cfg.value bytes that names its record and op.
			value := func(i, op int) []byte {
				v := fmt.Appendf(nil, "%08d/%08d/", i, op)
				for len(v) < 24+rng.IntN(cfg.value-23) {
					v = append(v, byte(rng.Uint32()))
				}
				return v
			}
			for i := range cfg.records {
				res := call(t, w, "put", kvPut(kvKey(i), value(i, 0), cfg.value))
				if res.Node.Code != 0 {
					t.Fatalf("put %d: code %d", i, res.Node.Code)
				}
			}
			if cfg.name == "small" {
				for i := 0; i < cfg.records; i += 5 {
					call(t, w, "delete", kvKey(i))
				}
			}
			zipf := rand.NewZipf(rng, 1.1, 1, uint64(cfg.records-1))
			var gets, found, trips, missing, wraps int
			for op := range cfg.ops {
				i := int(zipf.Uint64())
				switch p := rng.IntN(100); {
				case p < 5:
					call(t, w, "put", kvPut(kvKey(i), value(i, op), cfg.value))
				case p < 10:
					res := call(t, w, "get", kvKey(cfg.records+rng.IntN(1000)))
					if res.Client.Code != 1 { // NOT_FOUND
						t.Fatalf("get of a missing key: code %d", res.Client.Code)
					}
					missing++
				default:
					res := call(t, w, "get", kvKey(i))
					gets++
					if !res.AtClient {
						t.Fatal("get did not run at the client")
					}
					if res.Client.Code == 0 {
						found++
						trips += res.Client.Stats.RoundTrips
						if s := res.Client.Stats; s.RoundTrips != 2 || s.ExtraReads != 1 || s.Declared < 1 {
							t.Fatalf("get %d: %+v, want the window, then the slot", i, s)
						}
						if res.Client.Stats.Declared == 2 {
							wraps++ // the window's part past the last bucket
						}
					}
				}
			}
			if found < gets/2 || missing == 0 || cfg.name == "small" && wraps == 0 {
				t.Errorf("%d of %d GETs found their key (%d windows wrapped), %d missing", found, gets, wraps, missing)
			}
			t.Logf("%d GETs (%d found, %.2f round trips each, %d windows wrapped), %d of missing keys", gets, found, float64(trips)/float64(found), wraps, missing)
		})
	}
}

// TestChase walks lists at the client: the head node is declared, each
// further node is an extra read, so a walk of k hops is k round trips.
func TestChase(t *testing.T) {
	w := newTwin(t, exampleObject(t, "chase/chase.naam", nil))
	const length = 40
	// List node k at slot 100k + 13: each node lies past the fetch
	// (FetchSize, 2,048 bytes: 85 nodes) that brought the one before it.
	slot := func(k int) uint32 { return uint32(100*k + 13) }
	for _, mem := range [][]byte{w.Node[0], w.Client[0]} {
		for k := range length {
			s := slot(k)
			binary.LittleEndian.PutUint64(mem[24*s:], uint64(1000+k))
			binary.LittleEndian.PutUint64(mem[24*s+8:], uint64(k*k))
			next := uint32(0xffffffff)
			if k+1 < length {
				next = slot(k + 1)
			}
			binary.LittleEndian.PutUint32(mem[24*s+16:], next)
		}
	}
	req := func(a uint32, b uint64) []byte {
		r := binary.LittleEndian.AppendUint32(nil, a)
		return binary.LittleEndian.AppendUint32(r, uint32(b))
	}
	for hops := range 66 {
		res := call(t, w, "walk", req(slot(0), uint64(hops)))
		if hops > length && hops <= 64 {
			if res.Client.Code != 2 { // END
				t.Errorf("walk %d: code %d", hops, res.Client.Code)
			}
			continue
		}
		if hops == 0 || hops > 64 {
			if res.Client.Code != 3 { // BAD_HOPS
				t.Errorf("walk %d: code %d", hops, res.Client.Code)
			}
			continue
		}
		if got := binary.LittleEndian.Uint32(res.Client.Reply); got != slot(hops-1) || res.Client.Stats.RoundTrips != hops {
			t.Errorf("walk %d: node %d in %d round trips", hops, got, res.Client.Stats.RoundTrips)
		}
	}
	call(t, w, "walk", req(5000, 2)) // an index past the region
	for _, key := range []uint64{1000, 1001, 1030, 1039, 1040, 7} {
		r := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, slot(0)), 0)[:8]
		r = binary.LittleEndian.AppendUint64(r, key)
		res := call(t, w, "lookup", r)
		if key >= 1000 && key < 1000+length {
			if h := int(binary.LittleEndian.Uint32(res.Client.Reply[8:])); h != int(key-999) || res.Client.Stats.RoundTrips != h {
				t.Errorf("lookup %d: %d hops, %d round trips", key, h, res.Client.Stats.RoundTrips)
			}
		}
	}
}

// TestLedger runs the ledger's read-only handlers at the client between
// deposits and transfers at the node, over a history ring small enough
// to wrap: balances and history entries (NOT_YET, GONE and present) agree,
// each in one round trip.
func TestLedger(t *testing.T) {
	w := newTwin(t, exampleObject(t, "rpc/ledger.naam", map[string]uint64{"ACCOUNTS": 32, "HISTORY": 16}))
	rng := rand.New(rand.NewPCG(3, 4))
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	next := uint64(0)
	for op := range 600 {
		switch p := rng.IntN(10); {
		case p < 2:
			req := append(le32(uint32(rng.IntN(40))), 0, 0, 0, 0)
			if res := call(t, w, "deposit", binary.LittleEndian.AppendUint64(req, uint64(rng.IntN(1000)))); res.Node.Code == 0 {
				next++
			}
		case p < 4:
			req := append(le32(uint32(rng.IntN(32))), le32(uint32(rng.IntN(34)))...)
			if res := call(t, w, "transfer", binary.LittleEndian.AppendUint64(req, uint64(rng.IntN(300)))); res.Node.Code == 0 {
				next++
			}
		case p < 7:
			res := call(t, w, "balance", le32(uint32(rng.IntN(36))))
			if res.Client.Stats.RoundTrips > 1 {
				t.Errorf("op %d: balance in %d round trips", op, res.Client.Stats.RoundTrips)
			}
		default:
			seq := uint64(rng.IntN(int(next) + 3))
			res := call(t, w, "entry", binary.LittleEndian.AppendUint64(nil, seq))
			if !res.AtClient || res.Client.Stats.RoundTrips != 1 {
				t.Errorf("op %d: entry %d: %+v", op, seq, res.Client.Stats)
			}
		}
	}
	if next < 40 {
		t.Errorf("only %d history entries: the ring did not wrap", next)
	}
}

// TestMICA: GETs at the client between PUTs and DELETEs at the node, with
// a log small enough to wrap (evicting) and buckets small enough to
// displace. A GET that finds its key reads the declared bucket, then the
// entry: two round trips.
func TestMICA(t *testing.T) {
	w := newTwin(t, exampleObject(t, "mica/mica.naam", map[string]uint64{"BUCKETS": 16, "WAYS": 3, "ENTRIES": 64}))
	rng := rand.New(rand.NewPCG(5, 6))
	const keys, value = 80, 64
	hits := 0
	for op := range 3000 {
		k := kvKey(rng.IntN(keys))
		switch p := rng.IntN(10); {
		case p < 3:
			v := fmt.Appendf(nil, "%016d", op)
			call(t, w, "put", kvPut(k, v, value))
		case p < 4:
			call(t, w, "delete", k)
		default:
			res := call(t, w, "get", k)
			if !res.AtClient {
				t.Fatal("get did not run at the client")
			}
			if res.Client.Code == 0 {
				hits++
				if s := res.Client.Stats; s.RoundTrips < 2 || s.Declared != 1 {
					t.Fatalf("op %d: a hit in %+v", op, s)
				}
			}
		}
	}
	if hits < 200 {
		t.Errorf("%d GETs found their key", hits)
	}
}

// btreeRegion lays out a two-level tree of the default configuration
// (FANOUT 32, nodes of 552 bytes after a 64-byte header): a root over 10
// leaves of 20 keys, keys 3i and values 7k + 1 for i < 200.
func btreeRegion(mem []byte) {
	le := binary.LittleEndian
	const header, nodeSize, leaves, perLeaf = 64, 552, 10, 20
	node := func(i int) []byte { return mem[header+i*nodeSize:] }
	le.PutUint32(mem[0:], leaves+1) // used
	le.PutUint32(mem[4:], 2)        // height
	le.PutUint64(mem[8:], leaves*perLeaf)
	root := node(0)
	le.PutUint32(root[8:], 1) // level
	le.PutUint32(root[12:], leaves)
	le.PutUint32(root[16:], 0xffffffff)
	for j := range leaves {
		le.PutUint64(root[32+8*j:], uint64(3*perLeaf*j))
		le.PutUint64(root[288+8*j:], uint64(j+1))
		n := node(j + 1)
		le.PutUint32(n[12:], perLeaf)
		next := uint32(j + 2)
		if j == leaves-1 {
			next = 0xffffffff
		}
		le.PutUint32(n[16:], next)
		le.PutUint64(n[24:], uint64(3*perLeaf*(j+1)))
		for i := range perLeaf {
			k := uint64(3 * (perLeaf*j + i))
			le.PutUint64(n[32+8*i:], k)
			le.PutUint64(n[288+8*i:], 7*k+1)
		}
	}
}

// TestBTree: lookups and scans at the client: the root is declared, the
// leaf is one more round trip (a whole node in one fetch), and a scan
// that crosses into the next leaves one more each.
func TestBTree(t *testing.T) {
	obj := exampleObject(t, "btree/btree.naam", nil)
	regions := [][]byte{make([]byte, obj.Regions[0].Size)}
	btreeRegion(regions[0])
	w, err := clientruntest.NewTwin(obj, regions, clientrun.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for key := range uint64(610) {
		res := call(t, w, "lookup", binary.LittleEndian.AppendUint64(nil, key))
		switch {
		case key%3 == 0 && key < 600:
			if got := binary.LittleEndian.Uint64(res.Client.Reply); got != 7*key+1 || res.Client.Stats.RoundTrips != 2 {
				t.Errorf("lookup %d: %d in %d round trips", key, got, res.Client.Stats.RoundTrips)
			}
		case res.Client.Code != 1: // NOT_FOUND
			t.Errorf("lookup %d: code %d", key, res.Client.Code)
		}
	}
	// A copy of a leaf a writer tore (its version_end not its version)
	// fails BUSY at the client as at the node, and a lookup once the
	// writer is done finds the key.
	const leaf1End = 64 + 552 + 544 // node 1's version_end
	for _, r := range [][]byte{w.Node[0], w.Client[0]} {
		binary.LittleEndian.PutUint64(r[leaf1End:], 1)
	}
	if res := call(t, w, "lookup", binary.LittleEndian.AppendUint64(nil, 3)); res.Client.Code != 2 { // BUSY
		t.Errorf("lookup in a torn leaf: code %d, reply %x", res.Client.Code, res.Client.Reply)
	}
	for _, r := range [][]byte{w.Node[0], w.Client[0]} {
		binary.LittleEndian.PutUint64(r[leaf1End:], 0)
	}
	if res := call(t, w, "lookup", binary.LittleEndian.AppendUint64(nil, 3)); binary.LittleEndian.Uint64(res.Client.Reply) != 22 {
		t.Errorf("lookup after the write: code %d, reply %x", res.Client.Code, res.Client.Reply)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		req := binary.LittleEndian.AppendUint64(nil, uint64(rng.IntN(640)))
		req = binary.LittleEndian.AppendUint32(req, uint32(rng.IntN(35)))
		call(t, w, "scan", append(req, 0, 0, 0, 0))
	}
}
