package server

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// Tenants of the network tests: each has a key; tenantNoKey has none at
// the server.
const (
	tenantA     = 1
	tenantB     = 2
	tenantNoKey = 9
	serverNode  = 100
)

func testKey(t testing.TB, seed byte) *wire.Key {
	t.Helper()
	secret := make([]byte, 32)
	for i := range secret {
		secret[i] = seed + byte(i)
	}
	k, err := wire.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testKeys(t testing.TB) wire.KeyMap {
	return wire.KeyMap{tenantA: testKey(t, 1), tenantB: testKey(t, 2)}
}

// lossyLink sets the retransmission timing of the loss tests: a lossy
// link wants its losses recovered soon, hence a lower floor and first
// timeout than the defaults, which suit a lossless link whose delays are
// the hosts' own; and a cap of 10 ms unless the test sets one, which
// also keeps the floor the reordering's delays raise within 2.5 ms
// (spurious retransmissions cost a reply-cache hit here).
func lossyLink(cfg caller.ClientConfig) caller.ClientConfig {
	cfg.Timeout, cfg.MinTimeout = time.Millisecond, 200*time.Microsecond
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = 10 * time.Millisecond
	}
	return cfg
}

// testNet is a NIC served on an in-memory network.
type testNet struct {
	net  *transporttest.Network
	nic  *nicrt.NIC
	srv  *Server
	addr transport.Addr
	keys wire.KeyMap
}

func newTestNet(t testing.TB, ncfg nicrt.Config, scfg ServerConfig) *testNet {
	t.Helper()
	tn := &testNet{net: transporttest.NewNetwork(transporttest.MemConfig{}), keys: testKeys(t)}
	tn.nic = newNIC(t, ncfg)
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if scfg.Keys == nil {
		scfg.Keys = tn.keys
	}
	if scfg.Node == 0 {
		scfg.Node = serverNode
	}
	tn.srv, err = Serve(tn.nic, []transport.Conn{conn}, scfg)
	if err != nil {
		t.Fatal(err)
	}
	tn.addr = conn.LocalAddr()
	t.Cleanup(func() { tn.srv.Close() })
	return tn
}

// client dials the server from a new endpoint, wrapped by wrap if not nil.
func (tn *testNet) client(t testing.TB, cfg caller.ClientConfig, wrap func(transport.Conn) transport.Conn) *caller.Client {
	t.Helper()
	conn, err := tn.net.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	var c transport.Conn = conn
	if wrap != nil {
		c = wrap(conn)
	}
	if cfg.Keys == nil {
		cfg.Keys = tn.keys
	}
	if cfg.Node == 0 {
		cfg.Node = 1
	}
	if cfg.Server == 0 {
		cfg.Server = serverNode
	}
	cl, err := caller.Dial(c, tn.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// dropConn wraps a Conn and drops received datagrams for which drop
// returns true.
type dropConn struct {
	transport.Conn
	mu   sync.Mutex
	drop func(b []byte) bool
}

func (d *dropConn) ReadBatch(ps []transport.Packet) (int, error) {
	for {
		n, err := d.Conn.ReadBatch(ps)
		if err != nil {
			return n, err
		}
		kept := 0
		d.mu.Lock()
		for i := range n {
			if d.drop(ps[i].Buf[:ps[i].N]) {
				continue
			}
			if kept != i {
				ps[kept].Addr, ps[kept].N = ps[i].Addr, copy(ps[kept].Buf, ps[i].Buf[:ps[i].N])
			}
			kept++
		}
		d.mu.Unlock()
		if kept > 0 {
			return kept, nil
		}
	}
}

// counter reads the first word of a region atomically: over UDP the race
// detector sees no synchronisation between a verb's atomic add and the
// reply the test received.
func counter(r *nicrt.Region) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.Bytes()[0])))
}

func newNIC(t testing.TB, cfg nicrt.Config) *nicrt.NIC {
	t.Helper()
	n, err := nicrt.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func install(t testing.TB, n *nicrt.NIC, tenant uint64, o *bytecode.Object) *nicrt.Program {
	t.Helper()
	p, err := n.Install(tenant, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func register(t testing.TB, n *nicrt.NIC, tenant uint64, name string, size uint64, opts nicrt.RegionOptions) *nicrt.Region {
	t.Helper()
	r, err := n.Register(tenant, name, size, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func id(t testing.TB, p *nicrt.Program, name string) uint32 {
	t.Helper()
	h, ok := p.HandlerID(name)
	if !ok {
		t.Fatalf("no handler %q", name)
	}
	return h
}

func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
