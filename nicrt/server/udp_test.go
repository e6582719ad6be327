package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// udpServer serves a NIC on queues SO_REUSEPORT sockets of 127.0.0.1.
func udpServer(t testing.TB, ncfg nicrt.Config, queues int, ucfg transport.UDPConfig) (*nicrt.NIC, *Server, wire.KeyMap) {
	t.Helper()
	keys := testKeys(t)
	n := newNIC(t, ncfg)
	ucfg.ReadBuffer, ucfg.WriteBuffer = 4<<20, 4<<20
	qs, err := transport.ListenUDPQueues(ucfg, queues)
	if err != nil {
		t.Fatal(err)
	}
	var conns []transport.Conn
	for _, q := range qs {
		conns = append(conns, q)
	}
	s, err := Serve(n, conns, ServerConfig{Node: serverNode, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return n, s, keys
}

func udpClient(t testing.TB, srv *Server, keys wire.Keys, cfg caller.ClientConfig, ucfg transport.UDPConfig, wrap func(transport.Conn) transport.Conn) *caller.Client {
	t.Helper()
	ucfg.ReadBuffer, ucfg.WriteBuffer = 4<<20, 4<<20
	conn, err := transport.ListenUDP(ucfg)
	if err != nil {
		t.Fatal(err)
	}
	var c transport.Conn = conn
	if wrap != nil {
		c = wrap(conn)
	}
	cfg.Keys, cfg.Server = keys, serverNode
	if cfg.Node == 0 {
		cfg.Node = 1
	}
	cl, err := caller.Dial(c, srv.LocalAddrs()[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestUDP runs handlers and verbs over real UDP on 127.0.0.1 with two rx
// queues, on each of the transport's paths.
func TestUDP(t *testing.T) {
	for _, path := range []struct {
		name string
		cfg  transport.UDPConfig
	}{{"conn", transport.UDPConfig{}}, {"portable", transport.UDPConfig{Portable: true}}} {
		t.Run(path.name, func(t *testing.T) {
			n, srv, keys := udpServer(t, nicrt.Config{}, 2, path.cfg)
			reg := register(t, n, tenantA, "c", 64, nicrt.RegionOptions{Writable: true})
			p := install(t, n, tenantA, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}, testprog.Src{Name: "err", Asm: testprog.ErrAsm}))
			ctx := context.Background()
			// Several clients, so that both queues see traffic.
			var wg sync.WaitGroup
			for i := range 4 {
				cl := udpClient(t, srv, keys, caller.ClientConfig{Node: uint32(i + 1)}, path.cfg, nil)
				wg.Go(func() {
					for range 200 {
						if _, err := cl.FetchAdd(ctx, tenantA, reg.Ref(), 0, 1); err != nil {
							t.Error(err)
							return
						}
						if r, err := cl.Call(ctx, tenantA, id(t, p, "null"), []byte("x")); err != nil || len(r) != 0 {
							t.Errorf("null: %q %v", r, err)
							return
						}
					}
					var he *caller.HandlerError
					if _, err := cl.Call(ctx, tenantA, id(t, p, "err"), nil); !errors.As(err, &he) || he.Code != 42 {
						t.Errorf("err: %v", err)
					}
					if err := cl.Write(ctx, tenantA, reg.Ref(), 8+8*uint64(i), []byte("abcdefgh")); err != nil {
						t.Error(err)
					}
					if got, err := cl.Read(ctx, tenantA, reg.Ref(), 8+8*uint64(i), 8); err != nil || string(got) != "abcdefgh" {
						t.Errorf("read %q %v", got, err)
					}
				})
			}
			wg.Wait()
			if v := counter(reg); v != 800 {
				t.Errorf("counter %d", v)
			}
			s := srv.Stats()
			// Spurious retransmissions (a timeout shorter than a round
			// trip delayed by the scheduler) are answered from the cache or
			// dropped while running; nothing else may be dropped.
			if s.Requests != 4*403 || s.Dropped() != s.DuplicatesRunning {
				t.Errorf("stats %+v", s)
			}
			// A forgery over UDP is dropped and counted.
			raw, err := transport.ListenUDP(transport.UDPConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			b := seal(t, wire.KeyMap{tenantA: testKey(t, 50)}, wire.Header{Type: wire.TypeRequest, Tenant: tenantA, Handler: nicrt.HandlerFetchAdd, RequestID: 1, Src: 9, Dst: serverNode}, wire.AppendFetchAdd(nil, reg.Ref(), 0, 1))
			for _, a := range srv.LocalAddrs() {
				raw.WriteBatch([]transport.Packet{{Addr: a, Buf: b, N: len(b)}})
			}
			deadline := time.Now().Add(2 * time.Second)
			for srv.Stats().BadMAC == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if srv.Stats().BadMAC == 0 || counter(reg) != 800 {
				t.Errorf("forgery: %+v", srv.Stats())
			}
		})
	}
}

// TestUDPFault is the fault test over real UDP: the clients' sockets are
// wrapped in Lossy conns with 10% loss, 5% duplication and 5% reordering.
func TestUDPFault(t *testing.T) {
	n := faultN(t) / 5
	for _, loss := range []float64{0.01, 0.30} {
		t.Run(fmt.Sprintf("loss=%v", loss), func(t *testing.T) {
			nic, srv, keys := udpServer(t, nicrt.Config{}, 2, transport.UDPConfig{})
			tn := &testNet{nic: nic, srv: srv, keys: keys}
			f := transporttest.Faults{Drop: loss, Duplicate: 0.05, Reorder: 0.05}
			cfg := lossyLink(caller.ClientConfig{MaxTries: 30, MaxTimeout: 10 * time.Millisecond})
			r := fetchAddStorm(t, tn, n, f, cfg, 5*time.Minute, func(i int, wrap func(transport.Conn) transport.Conn) *caller.Client {
				cfg := cfg
				cfg.Node = uint32(i + 1)
				return udpClient(t, srv, keys, cfg, transport.UDPConfig{}, wrap)
			})
			if r.counter != uint64(n) || r.ok != n {
				t.Errorf("counter %d after %d FETCH-ADDs (%d replies, %d timeouts)", r.counter, n, r.ok, r.timeouts)
			}
			s := srv.Stats()
			t.Logf("%d FETCH-ADDs in %v; server: %d requests, %d cache hits, %d running duplicates",
				n, r.took.Round(time.Millisecond), s.Requests, s.CacheHits, s.DuplicatesRunning)
		})
	}
}
