package nicrt

import (
	"encoding/binary"
	"sync"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
)

func newNIC(t testing.TB, cfg Config) *NIC {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func install(t testing.TB, n *NIC, tenant uint64, o *bytecode.Object) *Program {
	t.Helper()
	p, err := n.Install(tenant, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func register(t testing.TB, n *NIC, tenant uint64, name string, size uint64, opts RegionOptions) *Region {
	t.Helper()
	r, err := n.Register(tenant, name, size, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func id(t testing.TB, p *Program, name string) uint32 {
	t.Helper()
	h, ok := p.HandlerID(name)
	if !ok {
		t.Fatalf("no handler %q", name)
	}
	return h
}

func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// recorder is an Outbox that records, and can hold a core inside Send
// until released (to fill queues deterministically).
type recorder struct {
	mu       sync.Mutex
	sent     []sent
	forwards []sent
	hold     chan struct{} // when not nil, Send waits on it
	entered  chan struct{} // when not nil, Send signals it first
	refuse   error
}

type sent struct {
	from    Origin
	node    uint64
	handler uint32
	payload []byte
}

func (r *recorder) Send(from Origin, node uint64, handler uint32, payload []byte) error {
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.sent = append(r.sent, sent{from, node, handler, append([]byte{}, payload...)})
	return nil
}

func (r *recorder) Forward(from Origin, req *Message, node uint64, handler uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.forwards = append(r.forwards, sent{from, node, handler, append([]byte{}, req.Payload...)})
	return nil
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
