package host_test

import (
	"context"
	"fmt"
	"log"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/wire"
)

// serverWithObject is server with the peer given the object the server
// installed.
func serverWithObject() (srv, client *host.Node, peer *host.Peer) {
	srv, client, peer = server()
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(counterSource))
	if err != nil {
		log.Fatal(err)
	}
	if err := peer.AddObject(obj, wire.InstallOptions{}); err != nil {
		log.Fatal(err)
	}
	return srv, client, peer
}

// A caller that holds the installed object runs the handlers that only
// read (and use atomics) itself, over one-sided READs: the RDMA-style
// way, with no one-sided client of its own.
func ExamplePeer_SetPlacement() {
	srv, client, peer := serverWithObject()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	peer.SetPlacement(host.AtClient)
	var v uint64
	// add stores: it cannot run at the client, and runs at the node.
	if err := peer.Call(ctx, "add", struct{ Slot, By uint64 }{Slot: 1, By: 5}, &v); err != nil {
		log.Fatal(err)
	}
	// read runs here, with one READ of the region.
	if err := peer.Call(ctx, "read", uint64(1), &v); err != nil {
		log.Fatal(err)
	}
	for _, s := range peer.PlacementStats() {
		fmt.Printf("%s: at the node %d, at the client %d (round trips %d)\n", s.Handler, s.Node, s.Client, s.ClientRoundTrips)
	}
	fmt.Println("read:", v)
	// Output:
	// counter.add: at the node 1, at the client 0 (round trips 0)
	// counter.read: at the node 0, at the client 1 (round trips 1)
	// read: 5
}

// CallPlaced places one call and says where it ran; Auto chooses per
// call between the node and the client by their measured times.
func ExamplePeer_CallPlaced() {
	srv, client, peer := serverWithObject()
	defer srv.Close()
	defer client.Close()
	ctx := context.Background()
	read, err := peer.Handler(ctx, "read")
	if err != nil {
		log.Fatal(err)
	}
	payload, err := read.Encode(nil, uint64(3))
	if err != nil {
		log.Fatal(err)
	}
	for _, pl := range []host.Placement{host.AtNode, host.AtClient} {
		_, info, err := peer.CallPlaced(ctx, read, payload, pl)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(info.Placement, info.RoundTrips)
	}
	// Output:
	// node 1
	// client 1
}
