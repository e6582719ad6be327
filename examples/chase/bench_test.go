package chase

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// BenchmarkWalk64: a 64-hop walk by one message and by 64 READs, on an
// in-process NIC (NIC.Call) and over loopback UDP (server.Serve and a
// caller.Client): go test ./examples/chase -run '^$' -bench Walk64.
func BenchmarkWalk64(b *testing.B) {
	cfg := DefaultConfig()
	s := newSetup(b, cfg)
	head, _, err := BuildList(s.region.Bytes(), cfg, 64, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		b.Fatal(err)
	}
	secret := make([]byte, 32)
	key, err := wire.NewKey(secret)
	if err != nil {
		b.Fatal(err)
	}
	q, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.Serve(s.nic, []transport.Conn{q}, server.ServerConfig{Node: 1, Keys: wire.KeyMap{tenant: key}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	uc, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	cl, err := caller.Dial(uc, srv.LocalAddrs()[0], caller.ClientConfig{Node: 2, Server: 1, Keys: wire.KeyMap{tenant: key}})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	udpAM := NewClient(call.Remote{Client: cl, Tenant: tenant}, s.ids)
	udpRDMA := NewRDMAClient(call.RemoteReader{Client: cl, Tenant: tenant, Region: s.region.Ref()}, cfg)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		walk func(context.Context, uint32, uint32) (Result, error)
	}{
		{"inproc/am", s.am.Walk}, {"inproc/rdma", s.rdma.Walk},
		{"udp/am", udpAM.Walk}, {"udp/rdma", udpRDMA.Walk},
	} {
		b.Run(c.name, func(b *testing.B) {
			rts := 0
			for b.Loop() {
				r, err := c.walk(ctx, head, 64)
				if err != nil || r.Key != 63 {
					b.Fatalf("%+v %v", r, err)
				}
				rts += r.RoundTrips
			}
			b.ReportMetric(float64(rts)/float64(b.N), "round-trips/op")
		})
	}
}
