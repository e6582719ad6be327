// Package servetest serves an example's program for the example's tests:
// a host node with the program's region registered and the program
// installed, and a peer that reaches it from a second node over
// loopback UDP, as a client elsewhere would. Only tests import it.
package servetest

import (
	"context"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host"
)

// NICBudget is the NIC cores' instruction budget (spec/nic.md, Defaults):
// a handler whose verified bound is within it runs on a NIC core.
const NICBudget = 2000

// Served is a program on a node and the way to it.
type Served struct {
	Node    *host.Node
	Region  *host.Region
	Program *host.Program
	Peer    *host.Peer // from another node
}

// Context is a context that ends after d or with the test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Serve registers a writable region called region of size bytes on a new
// node, runs load on its bytes (if load is not nil), installs obj with
// opts, and dials the node from another. load runs before the install:
// what the host writes then is ordered before every handler run (the
// install publishes the program atomically), which the race detector
// sees. Both nodes close with the test.
func Serve(t testing.TB, obj *bytecode.Object, region string, size uint64, opts host.InstallOptions, load func(mem []byte) error) *Served {
	t.Helper()
	n, err := host.Start(host.Config{Name: "servetest-server"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	r, err := n.Register(region, size, host.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	if load != nil {
		if err := load(r.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	p, err := n.InstallWith(obj, opts)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	c, err := host.Start(host.Config{Name: "servetest-client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	peer, err := c.Dial(Context(t, 10*time.Second), n.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return &Served{Node: n, Region: r, Program: p, Peer: peer}
}

// Field is the field called name of a layout, or the test fails.
func Field(t testing.TB, fs []bytecode.Field, name string) bytecode.Field {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no field %q in %+v", name, fs)
	return bytecode.Field{}
}
