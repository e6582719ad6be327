package host_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/lang"
)

// counterSource is a program with one region and two handlers.
const counterSource = `
region counters: [u64; 8] rw

handler add(slot: u64, by: u64) -> u64 {
    if slot >= 8 {
        fail(7)
    }
    counters[slot] += by
    return counters[slot]
}

handler read(slot: u64) -> u64 {
    if slot >= 8 {
        fail(7)
    }
    return counters[slot]
}
`

// server starts a node serving counterSource and returns it with a peer
// dialed to it from a second node.
func server() (srv, client *host.Node, peer *host.Peer) {
	srv, err := host.Start(host.Config{Name: "server"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := srv.Register("counters", 8*8, host.RegionOptions{Writable: true}); err != nil {
		log.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(counterSource))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := srv.Install(obj); err != nil {
		log.Fatal(err)
	}
	client, err = host.Start(host.Config{Name: "client"})
	if err != nil {
		log.Fatal(err)
	}
	peer, err = client.Dial(context.Background(), srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	return srv, client, peer
}

func ExampleStart() {
	n, err := host.Start(host.Config{Name: "example", Listen: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	fmt.Println(n.Name(), n.Addr().Addr(), n.ID() == host.NodeID("example"))
	// Output: example 127.0.0.1 true
}

func ExampleNode_Register() {
	n, err := host.Start(host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	r, err := n.Register("table", 4096, host.RegionOptions{Writable: true, NICMem: true})
	if err != nil {
		log.Fatal(err)
	}
	// The host reads and writes the region's memory directly.
	binary.LittleEndian.PutUint64(r.Bytes()[8:], 42)
	fmt.Println(r.Name(), r.Size(), binary.LittleEndian.Uint64(r.Bytes()[8:]))
	// Output: table 4096 42
}

func ExampleNode_Install() {
	n, err := host.Start(host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Register("counters", 64, host.RegionOptions{Writable: true}); err != nil {
		log.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(counterSource))
	if err != nil {
		log.Fatal(err)
	}
	// Install verifies the object and links its regions by name.
	p, err := n.Install(obj)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range p.Handlers() {
		fmt.Println(h.Name, h.MaxInsns > 0)
	}
	// Output:
	// add true
	// read true
}

func ExampleNode_Dial() {
	srv, client, _ := server()
	defer srv.Close()
	defer client.Close()
	peer, err := client.Dial(context.Background(), srv.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range peer.Handlers() {
		fmt.Println(h, h.Args)
	}
	// Output:
	// counter.add [{slot u64 0 8} {by u64 8 8}]
	// counter.read [{slot u64 0 8}]
}

func ExamplePeer_Call() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	// Arguments by name from a struct; a single result into a scalar.
	var total uint64
	for range 3 {
		if err := peer.Call(ctx, "add", struct{ Slot, By uint64 }{Slot: 2, By: 10}, &total); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("total:", total)
	// A handler's failure is a *HandlerError with its code.
	err := peer.Call(ctx, "add", struct{ Slot, By uint64 }{Slot: 9, By: 1}, &total)
	var he *host.HandlerError
	fmt.Println(errors.As(err, &he), he.Code)
	// Output:
	// total: 30
	// true 7
}

func ExamplePeer_Go() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	const n = 100
	done := make(chan *host.Call, n)
	results := make([]uint64, n)
	for i := range n {
		peer.Go(ctx, "add", struct{ Slot, By uint64 }{Slot: 1, By: 1}, &results[i], done)
	}
	largest := uint64(0)
	for range n {
		c := <-done
		if c.Error != nil {
			log.Fatal(c.Error)
		}
		largest = max(largest, *c.Result.(*uint64))
	}
	fmt.Println("largest:", largest)
	// Output: largest: 100
}

func ExamplePeer_Read() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	var v uint64
	if err := peer.Call(ctx, "add", struct{ Slot, By uint64 }{Slot: 0, By: 7}, &v); err != nil {
		log.Fatal(err)
	}
	b, err := peer.Read(ctx, "counters", 0, 8)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(binary.LittleEndian.Uint64(b))
	// Output: 7
}

func ExamplePeer_Write() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	if err := peer.Write(ctx, "counters", 3*8, binary.LittleEndian.AppendUint64(nil, 99)); err != nil {
		log.Fatal(err)
	}
	var v uint64
	if err := peer.Call(ctx, "read", uint64(3), &v); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
	// Output: 99
}

func ExamplePeer_CompareAndSwap() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	old, swapped, err := peer.CompareAndSwap(ctx, "counters", 0, 0, 5)
	fmt.Println(old, swapped, err)
	old, swapped, err = peer.CompareAndSwap(ctx, "counters", 0, 0, 6)
	fmt.Println(old, swapped, err)
	// Output:
	// 0 true <nil>
	// 5 false <nil>
}

func ExamplePeer_FetchAdd() {
	srv, client, peer := server()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	for range 4 {
		if _, err := peer.FetchAdd(ctx, "counters", 8, 25); err != nil {
			log.Fatal(err)
		}
	}
	var v uint64
	if err := peer.Call(ctx, "read", uint64(1), &v); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
	// Output: 100
}
