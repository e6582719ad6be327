package xdp

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/internal/testing/testprog"
)

// TestDiffKV: the KV example's get, put, delete and cas, a random mix
// over a small key space, answer alike in XDP and in the NIC model, and
// leave the same table.
func TestDiffKV(t *testing.T) {
	for _, cfg := range []kv.Config{{Region: "kv", Buckets: 256, Probes: 16, ValueSize: 64}, kv.DefaultConfig()} {
		t.Run(fmt.Sprintf("value%d", cfg.ValueSize), func(t *testing.T) {
			p := newPair(t, Config{})
			obj, err := kvnode.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := cfg
			p.region(c.Region, c.RegionSize(), true, nil)
			ids, notServed := p.install(obj)
			if len(notServed) != 0 {
				t.Fatalf("not served: %v", notServed)
			}
			r := rand.New(rand.NewPCG(7, 8))
			key := func() kv.Key {
				var k kv.Key
				copy(k[:], fmt.Sprintf("user%012d", r.IntN(120)))
				return k
			}
			n := 1500
			if testing.Short() {
				n = 300
			}
			for range n {
				switch op := r.IntN(10); {
				case op < 4:
					p.call(ids[kv.HandlerGet], kv.AppendGet(nil, key()))
				case op < 7:
					v := make([]byte, r.IntN(int(c.ValueSize)+1))
					for i := range v {
						v[i] = byte(r.Uint32())
					}
					b, err := c.AppendPut(nil, key(), v)
					if err != nil {
						t.Fatal(err)
					}
					p.call(ids[kv.HandlerPut], b)
				case op < 8:
					p.call(ids[kv.HandlerDelete], kv.AppendDelete(nil, key()))
				default:
					b, err := c.AppendCAS(nil, key(), uint64(r.IntN(8))*2, []byte("swapped"))
					if err != nil {
						t.Fatal(err)
					}
					p.call(ids[kv.HandlerCAS], b)
				}
			}
			// Requests of the wrong size: the handlers' own checks.
			p.call(ids[kv.HandlerGet], []byte("short"))
			p.call(ids[kv.HandlerPut], make([]byte, 3))
		})
	}
}

// TestDiffChase: the pointer-chasing example's walk and lookup over a
// random list.
func TestDiffChase(t *testing.T) {
	p := newPair(t, Config{})
	// chase.naam as it is: NODES 4096 nodes of 24 bytes (key u64, value
	// u64, next u32), MAX_HOPS 64, region "chase" (examples/chase).
	const nodes, nodeSize, maxHops = 4096, 24, 64
	obj := testprog.CompileFile(t, "../examples/chase/chase.naam")
	mem := make([]byte, nodes*nodeSize)
	r := rand.New(rand.NewPCG(9, 10))
	perm := r.Perm(nodes)
	for i, n := range perm {
		next := uint32(0xffffffff)
		if i+1 < len(perm) && r.IntN(50) != 0 {
			next = uint32(perm[i+1])
		}
		b := mem[n*nodeSize:]
		binary.LittleEndian.PutUint64(b, uint64(i))
		binary.LittleEndian.PutUint64(b[8:], r.Uint64())
		binary.LittleEndian.PutUint32(b[16:], next)
	}
	p.region("chase", nodes*nodeSize, false, mem)
	ids, notServed := p.install(obj)
	if len(notServed) != 0 {
		t.Fatalf("not served: %v", notServed)
	}
	for range 400 {
		head := uint32(perm[r.IntN(len(perm))])
		if r.IntN(20) == 0 {
			head = r.Uint32()
		}
		req := binary.LittleEndian.AppendUint32(nil, head)
		switch r.IntN(2) {
		case 0:
			p.call(ids["walk"], binary.LittleEndian.AppendUint32(req, uint32(r.IntN(maxHops+2))))
		default:
			req = binary.LittleEndian.AppendUint32(req, 0)
			p.call(ids["lookup"], binary.LittleEndian.AppendUint64(req, uint64(r.IntN(4200))))
		}
	}
}
