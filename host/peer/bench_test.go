package peer_test

import (
	"context"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/lang"
)

type incrArgs struct{ Slot, By uint64 }

// BenchmarkCall compares Peer.Call with the runtime's own call (the same
// handler, payload and reply through caller.Client.AppendCall) in one run,
// over loopback UDP: the difference is what the host library adds.
//
//	go test ./host/peer -run '^$' -bench Call -benchmem -count 5
func BenchmarkCall(b *testing.B) {
	a := startDemo(b)
	ctx := testCtx(b)
	p, err := peer.Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h, err := p.Handler(ctx, "incr")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("runtime", func(b *testing.B) {
		payload := make([]byte, 16)
		binary.LittleEndian.PutUint64(payload[8:], 1)
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			cl, tenant := peer.ClientOf(p)
			reply, err := cl.AppendCall(ctx, buf[:0], tenant, h.ID, payload)
			if err != nil || len(reply) != 8 {
				b.Fatal(err)
			}
		}
	})
	b.Run("host", func(b *testing.B) {
		var v uint64
		args := &incrArgs{Slot: 0, By: 1}
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Call(ctx, "incr", args, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallOverhead is what Peer.Call does besides the runtime's call,
// without the network: the handler lookup, encoding the arguments from a
// struct and decoding the result, with the pooled buffer.
//
//	go test ./host/peer -run '^$' -bench CallOverhead -benchmem
func BenchmarkCallOverhead(b *testing.B) {
	a := startDemo(b)
	ctx := testCtx(b)
	p, err := peer.Dial(ctx, a.Addr().String(), 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	reply := binary.LittleEndian.AppendUint64(nil, 41)
	var v uint64
	args := &incrArgs{Slot: 3, By: 1}
	b.ReportAllocs()
	for b.Loop() {
		h, err := p.Handler(ctx, "incr")
		if err != nil {
			b.Fatal(err)
		}
		bp := peer.Buffer(p)
		payload, err := h.Encode((*bp)[:0], args)
		if err != nil || len(payload) != 16 {
			b.Fatal(err)
		}
		if err := h.Decode(reply, &v); err != nil || v != 41 {
			b.Fatal(err)
		}
		peer.PutBuffer(p, bp)
	}
}

// startDemo starts a node with host's demo program (host/testdata) and
// its region.
func startDemo(b *testing.B) *host.Node {
	b.Helper()
	n, err := host.Start(host.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	if _, err := n.Register("counters", 16*8, host.RegionOptions{Writable: true}); err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile("../testdata/demo.naam")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "demo.naam", src)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := n.Install(obj); err != nil {
		b.Fatal(err)
	}
	return n
}

func testCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	b.Cleanup(cancel)
	return ctx
}
