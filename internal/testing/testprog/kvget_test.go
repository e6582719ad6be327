package testprog_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

// The failure codes of lang (FailShortRequest, FailShortReply), written
// here because the handler returns them as literals.
const (
	failShortRequest = 0x7fffff02
	failShortReply   = 0x7fffff03
)

// Bucket field offsets (kv_get.naam's struct Bucket).
const (
	bucketUsed  = 16
	bucketVlen  = 20
	bucketVer   = 24
	bucketValue = 32
)

// verifyKVGet verifies the hand-written handler under the configuration its
// object describes: one entry per handler, the object's regions.
func verifyKVGet(t *testing.T) (code []byte, rep *verifier.Report) {
	t.Helper()
	o, err := testprog.KVGetHandObject()
	if err != nil {
		t.Fatal(err)
	}
	insns, err := bytecode.Decode(o.Code)
	if err != nil {
		t.Fatal(err)
	}
	var cfg verifier.Config
	for _, h := range o.Handlers {
		cfg.Entries = append(cfg.Entries, verifier.Entry{Name: h.Name, Slot: h.Entry})
	}
	for _, r := range o.Regions {
		cfg.Regions = append(cfg.Regions, verifier.Region{Name: r.Name, Size: r.Size, Writable: r.Writable})
	}
	rep, err = verifier.Verify(insns, cfg)
	if err != nil {
		t.Fatalf("the verifier rejects the hand-written KV GET: %+v", err)
	}
	return o.Code, rep
}

// TestKVGetHandVerifies checks that the handler is accepted in handler mode
// and reports its size and worst case, the figures the compiler is compared
// with.
func TestKVGetHandVerifies(t *testing.T) {
	code, rep := verifyKVGet(t)
	if want := []int{0}; !reflect.DeepEqual(rep.RegionsRead, want) || len(rep.RegionsWritten) != 0 {
		t.Errorf("regions read %v written %v, want read [0] and none written", rep.RegionsRead, rep.RegionsWritten)
	}
	if want := []uint32{1, 2}; !reflect.DeepEqual(rep.Helpers, want) {
		t.Errorf("helpers %v, want %v (hash, copy)", rep.Helpers, want)
	}
	t.Logf("%d slots; %v", len(code)/8, rep)
}

// TestKVGetHandObject checks that the object survives its file form and
// that its code is KVGetHand's.
func TestKVGetHandObject(t *testing.T) {
	o, err := testprog.KVGetHandObject()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := bytecode.UnmarshalObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, back) {
		t.Errorf("object changed through Marshal and UnmarshalObject:\n%+v\n%+v", o, back)
	}
	insns, err := testprog.KVGetHand()
	if err != nil {
		t.Fatal(err)
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(code, o.Code) {
		t.Error("KVGetHand and KVGetHandObject disagree on the code")
	}
	if h := o.Handlers[0]; h.Name != "get" || h.ID != 0 || h.Entry != 0 || len(o.Regions) != 1 || o.Regions[0].Size != testprog.KVGetTableSize {
		t.Errorf("handler %+v, regions %+v", h, o.Regions)
	}
}

// kvTable is the region of kv_get.naam, filled in Go.
type kvTable []byte

func newKVTable() kvTable { return make(kvTable, testprog.KVGetTableSize) }

func fnv1a(key []byte) uint64 {
	h := fnv.New64a()
	h.Write(key)
	return h.Sum64()
}

func (t kvTable) bucket(i uint64) []byte {
	i %= testprog.KVGetBuckets
	return t[i*testprog.KVGetBucketSize : (i+1)*testprog.KVGetBucketSize]
}

// insert puts key in the first unused bucket from its home bucket on,
// probing without the handler's limit (so keys can land out of its reach),
// and returns how many buckets it passed.
func (t kvTable) insert(key []byte, value []byte, version uint64) (probe uint64) {
	h := fnv1a(key)
	probe = t.free(h)
	b := t.bucket(h + probe)
	copy(b, key)
	b[bucketUsed] = 1
	binary.LittleEndian.PutUint32(b[bucketVlen:], uint32(len(value)))
	binary.LittleEndian.PutUint64(b[bucketVer:], version)
	copy(b[bucketValue:bucketValue+testprog.KVGetValueSize], value)
	return probe
}

// free returns the probe at which a key hashing to h would be inserted.
func (t kvTable) free(h uint64) (probe uint64) {
	for probe = 0; t.bucket(h + probe)[bucketUsed] != 0; probe++ {
	}
	return probe
}

// get is the reference: kv_get.naam's handler in Go. It returns r0 and the
// reply bytes up to r0 (nil for an error).
func (t kvTable) get(req []byte, replyLen int) (int64, []byte) {
	switch {
	case len(req) < testprog.KVGetKeySize:
		return -failShortRequest, nil
	case replyLen < testprog.KVGetReplySize:
		return -failShortReply, nil
	}
	key := req[:testprog.KVGetKeySize]
	h := fnv1a(key)
	for probe := range uint64(testprog.KVGetProbes) {
		b := t.bucket(h + probe)
		if b[bucketUsed] == 0 {
			return -testprog.KVGetNotFound, nil
		}
		if bytes.Equal(b[:testprog.KVGetKeySize], key) {
			reply := make([]byte, testprog.KVGetReplySize)
			copy(reply, b[bucketVlen:bucketVlen+4])
			copy(reply[4:], b[bucketValue:])
			return testprog.KVGetReplySize, reply
		}
	}
	return -testprog.KVGetNotFound, nil
}

// keysAt returns n distinct keys whose home bucket is home. With a
// prefix, every key starts with it: such keys differ only in their second
// half, which the handler compares second.
func keysAt(rng *rand.Rand, home uint64, n int, prefix []byte) [][]byte {
	var keys [][]byte
	for len(keys) < n {
		key := make([]byte, testprog.KVGetKeySize)
		binary.LittleEndian.PutUint64(key, rng.Uint64())
		binary.LittleEndian.PutUint64(key[8:], rng.Uint64())
		copy(key, prefix)
		if fnv1a(key)%testprog.KVGetBuckets == home {
			keys = append(keys, key)
		}
	}
	return keys
}

func randomKey(rng *rand.Rand) []byte {
	key := make([]byte, testprog.KVGetKeySize)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	return key
}

func randomValue(rng *rand.Rand) []byte {
	v := make([]byte, 1+rng.IntN(testprog.KVGetValueSize))
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return v
}

// TestKVGetHandInVM runs the handler against a filled table, checked and
// unchecked, and compares every answer with the Go reference.
func TestKVGetHandInVM(t *testing.T) {
	_, rep := verifyKVGet(t)
	insns, err := testprog.KVGetHand()
	if err != nil {
		t.Fatal(err)
	}
	p, err := vm.Load(insns)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 0x6e7))
	table := newKVTable()

	type query struct {
		name     string
		req      []byte
		replyLen int
		want     int64 // r0; the reply bytes come from the reference
	}
	var queries []query
	hit := func(name string, key []byte) {
		queries = append(queries, query{name, key, testprog.KVGetReplySize, testprog.KVGetReplySize})
	}
	miss := func(name string, key []byte) {
		queries = append(queries, query{name, key, testprog.KVGetReplySize, -testprog.KVGetNotFound})
	}

	// A chain of ten keys at bucket 300: probes 0..7 are reachable, 8 and 9
	// are past the probe limit; a key that is absent walks all 8. They share
	// their first 8 bytes, so every probe compares both halves (the
	// costliest path).
	chain := keysAt(rng, 300, 11, []byte("samehalf"))
	for i, key := range chain[:10] {
		if probe := table.insert(key, randomValue(rng), uint64(i)); probe != uint64(i) {
			t.Fatalf("chain key %d landed at probe %d", i, probe)
		}
	}
	for i := range 8 {
		hit(fmt.Sprintf("chain probe %d", i), chain[i])
	}
	miss("chain probe 8 (past the limit)", chain[8])
	miss("chain probe 9 (past the limit)", chain[9])
	miss("absent from a full chain (probe limit)", chain[10])

	// A chain that wraps from the last bucket to the first.
	wrap := keysAt(rng, testprog.KVGetBuckets-1, 4, nil)
	for i, key := range wrap[:3] {
		table.insert(key, randomValue(rng), uint64(i))
	}
	hit("wrap probe 0", wrap[0])
	hit("wrap probe 2 (bucket 1)", wrap[2])
	miss("absent after a wrapped chain (unused bucket 2)", wrap[3])

	// An unused bucket whose key bytes match: used is tested first.
	ghost := keysAt(rng, 500, 1, nil)[0]
	copy(table.bucket(500), ghost)
	miss("key bytes in an unused bucket", ghost)

	// The zero key against its home bucket, unused and all zeros: random
	// keys below keep out of it.
	zero := make([]byte, testprog.KVGetKeySize)
	zeroHome := fnv1a(zero) % testprog.KVGetBuckets
	if table.bucket(zeroHome)[bucketUsed] != 0 {
		t.Fatalf("bucket %d of the zero key is used", zeroHome)
	}
	miss("zero key, empty home bucket", zero)

	// Random keys, about a quarter of the table.
	var stored [][]byte
	for range 250 {
		key := randomKey(rng)
		if h := fnv1a(key); (h+table.free(h))%testprog.KVGetBuckets == zeroHome {
			continue
		}
		if table.insert(key, randomValue(rng), rng.Uint64()) < testprog.KVGetProbes {
			stored = append(stored, key)
		}
	}
	for i, key := range stored {
		hit(fmt.Sprintf("random %d", i), key)
	}
	for i := range 250 {
		key := randomKey(rng)
		r0, _ := table.get(key, testprog.KVGetReplySize)
		queries = append(queries, query{fmt.Sprintf("random absent %d", i), key, testprog.KVGetReplySize, r0})
	}

	// Request and reply sizes.
	key := chain[3]
	queries = append(queries,
		query{"empty request", nil, testprog.KVGetReplySize, -failShortRequest},
		query{"15-byte request", key[:15], testprog.KVGetReplySize, -failShortRequest},
		query{"request and reply short", key[:15], 67, -failShortRequest},
		query{"67-byte reply", key, 67, -failShortReply},
		query{"empty reply", key, 0, -failShortReply},
		query{"67-byte reply, absent key", chain[10], 67, -failShortReply},
		query{"extra request bytes", append(append([]byte(nil), key...), 1, 2, 3), testprog.KVGetReplySize, testprog.KVGetReplySize},
		query{"larger reply buffer", key, 100, testprog.KVGetReplySize},
	)

	regions := []vm.RegionMem{{Data: table, Writable: false}}
	before := bytes.Clone(table)
	for _, unchecked := range []bool{false, true} {
		m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil)), Unchecked: unchecked})
		var most uint64
		for _, q := range queries {
			reply := make([]byte, q.replyLen)
			for i := range reply {
				reply[i] = 0xee // Invoke zeroes it
			}
			res, err := m.Invoke(p, &vm.Invocation{Entry: 0, Request: q.req, Reply: reply, Regions: regions})
			if err != nil {
				t.Fatalf("unchecked=%v %s: %v", unchecked, q.name, err)
			}
			wantR0, wantReply := table.get(q.req, q.replyLen)
			if wantR0 != q.want {
				t.Fatalf("%s: the reference returns %d, the test expects %d", q.name, wantR0, q.want)
			}
			if res.R0 != wantR0 || !bytes.Equal(res.Reply, wantReply) {
				t.Errorf("unchecked=%v %s: r0 = %d reply %x, want %d reply %x", unchecked, q.name, res.R0, res.Reply, wantR0, wantReply)
			}
			if res.Insns > rep.MaxInsns {
				t.Errorf("unchecked=%v %s: %d instructions, over the verifier's bound %d", unchecked, q.name, res.Insns, rep.MaxInsns)
			}
			most = max(most, res.Insns)
		}
		t.Logf("unchecked=%v: %d queries, at most %d instructions (bound %d)", unchecked, len(queries), most, rep.MaxInsns)
	}
	if !bytes.Equal(table, before) {
		t.Error("the handler changed the read-only table")
	}
}
