package xdp

import (
	"fmt"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// BenchmarkTierKernel: the tier's path for one packet, timed by the
// kernel in BPF_PROG_TEST_RUN: parse, MAC, claim, tail call, the handler,
// the reply sealed, cached and written into the frame. Every run is a new
// request id (sealed in Go beforehand, outside the kernel's time), except
// in cache-hit, where one request is answered from the reply cache again
// and again. empty is an XDP program that returns at once: the test run's
// own cost, in every other figure. The packet programs run once per test
// run (a test run with repeats would run the later repeats on the reply
// the first one wrote); kernel-ns/pkt is the kernel's time for that run.
func BenchmarkTierKernel(b *testing.B) {
	needKernel(b)
	b.Run("empty", func(b *testing.B) {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
		if err != nil {
			b.Fatal(err)
		}
		defer prog.Close()
		kernelBench(b, prog, frameOf(make([]byte, 120)))
	})
	p := newPair(b, Config{})
	counter := p.region("counter", 64, true, nil)
	cfg := kv.Config{Region: "kv", Buckets: 1024, Probes: 16, ValueSize: 64}
	obj, err := kvnode.Compile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p.region("kv", cfg.RegionSize(), true, nil)
	ids, notServed := p.install(obj)
	if len(notServed) != 0 {
		b.Fatal(notServed)
	}
	nullObj, _ := compile(b, "null.naam", nullSource)
	nullIDs, _ := p.install(nullObj)
	var key kv.Key
	copy(key[:], "user000000000042")
	put, err := cfg.AppendPut(nil, key, make([]byte, 64))
	if err != nil {
		b.Fatal(err)
	}
	p.call(ids[kv.HandlerPut], put)
	for _, tc := range []struct {
		name    string
		handler uint32
		payload []byte
	}{
		{"null", nullIDs["null"], make([]byte, 64)},
		{"fetch-add", nicrt.HandlerFetchAdd, wire.AppendFetchAdd(nil, counter.nic.Ref(), 0, 1)},
		{"kv-get", ids[kv.HandlerGet], kv.AppendGet(nil, key)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var frames [][]byte
			var total time.Duration
			runs := 0
			for b.Loop() {
				if len(frames) == 0 {
					for range 512 {
						p.nextID++
						h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: tc.handler, RequestID: p.nextID, Src: testClient, Dst: testNode}
						frames = append(frames, p.sealed(h, tc.payload))
					}
				}
				f := frames[0]
				frames = frames[1:]
				ret, d, err := p.tier.disp.Benchmark(f, 1, nil)
				if err != nil || ret != xdpTx {
					b.Fatalf("action %d, %v; counters %v", ret, err, nonzero(must(p.tier.Counters())))
				}
				total += d
				runs++
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(runs), "kernel-ns/pkt")
		})
	}
	// One request answered again and again from the cache. Each run gets
	// its own copy of the request: a test run with repeats would run the
	// later repeats on the reply the first one wrote.
	b.Run("cache-hit", func(b *testing.B) {
		p.nextID++
		f := p.sealed(faaHeader(p.nextID), wire.AppendFetchAdd(nil, counter.nic.Ref(), 0, 1))
		if act, _, err := p.tier.Run(f); err != nil || act != xdpTx {
			b.Fatal(act, err)
		}
		var total time.Duration
		runs := 0
		for b.Loop() {
			ret, d, err := p.tier.disp.Benchmark(f, 1, nil)
			if err != nil || ret != xdpTx {
				b.Fatalf("action %d, %v", ret, err)
			}
			total += d
			runs++
		}
		b.ReportMetric(float64(total.Nanoseconds())/float64(runs), "kernel-ns/pkt")
	})
}

const nullSource = `
handler null() -> u64 {
    return 0
}
`

// BenchmarkTierCall: as BenchmarkTierKernel/null, with the sealing in Go
// and the system call: what a caller of Tier.Run pays.
func BenchmarkTierCall(b *testing.B) {
	p := newPair(b, Config{})
	obj, _ := compile(b, "null.naam", nullSource)
	ids, _ := p.install(obj)
	for _, n := range []int{0, 64, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			payload := make([]byte, n)
			b.ReportAllocs()
			for b.Loop() {
				p.nextID++
				h := wire.Header{Type: wire.TypeRequest, Tenant: testTenant, Handler: ids["null"], RequestID: p.nextID, Src: testClient, Dst: testNode}
				if act, _, err := p.tier.Run(p.sealed(h, payload)); err != nil || act != xdpTx {
					b.Fatal(act, err)
				}
			}
		})
	}
}
