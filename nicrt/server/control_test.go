package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// The control plane's limits per tenant and per node (spec/nic.md,
// Control ops), over the wire: each refusal is a control-failed error
// reply whose text names the limit.

// fakeClock is a server's upload clock that the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// refused checks that err is a control-failed (or, with bad, bad-control)
// error reply whose text contains want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !errors.Is(err, nicrt.ErrControlFailed) && !errors.Is(err, nicrt.ErrBadControl) {
		t.Errorf("%s: %v, want a control error", what, err)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %q does not name %q", what, err, want)
	}
}

// TestNetControlUploads: a tenant's stalled uploads (first chunks, never
// the rest) are bounded by MaxUploads; at MaxNodeUploads another tenant's
// install takes the place of one of them; an upload without a chunk for
// UploadTimeout is dropped, and its memory with it.
func TestNetControlUploads(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{MaxUploads: 2, MaxNodeUploads: 2, UploadTimeout: 10 * time.Second})
	clock := &fakeClock{now: time.Unix(1000, 0)}
	tn.srv.ctlMu.Lock()
	tn.srv.now = clock.Now
	tn.srv.ctlMu.Unlock()
	stalled := tn.client(t, caller.ClientConfig{Node: 1}, nil)
	other := tn.client(t, caller.ClientConfig{Node: 2}, nil)
	ctx := context.Background()
	// begin sends the first 100 bytes of a 10,000-byte upload.
	begin := func(cl *caller.Client, tenant uint32, upload uint64) error {
		var r wire.InstallReply
		err := cl.Control(ctx, tenant, &wire.Install{Upload: upload, Total: 10000, Data: make([]byte, 100)}, &r)
		if err == nil && r.Received != 100 {
			t.Errorf("upload %d: the node holds %d bytes, want 100", upload, r.Received)
		}
		return err
	}
	// next sends the 100 bytes at off.
	next := func(cl *caller.Client, tenant uint32, upload, off uint64) error {
		return cl.Control(ctx, tenant, &wire.Install{Upload: upload, Total: 10000, Offset: off, Data: make([]byte, 100)}, &wire.InstallReply{})
	}
	for u := range uint64(2) {
		if err := begin(stalled, tenantA, 1+u); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, "a third upload of tenant A", begin(stalled, tenantA, 3), "ServerConfig.MaxUploads (2)")
	clock.Add(time.Second)
	if err := next(stalled, tenantA, 2, 100); err != nil { // upload 2 is the less idle
		t.Fatal(err)
	}
	// The node holds MaxNodeUploads, all tenant A's: tenant B installs
	// all the same, in the place of A's idlest upload (1).
	obj := testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm})
	inst, err := other.Install(ctx, tenantB, obj)
	if err != nil || inst.Program == 0 {
		t.Fatalf("tenant B's install beside tenant A's stalled uploads: %+v %v", inst, err)
	}
	refused(t, "the next chunk of A's upload 1", next(stalled, tenantA, 1, 100), "ServerConfig.MaxNodeUploads")
	if err := next(stalled, tenantA, 2, 200); err != nil {
		t.Errorf("A's upload 2 goes on: %v", err)
	}
	// At the node's cap with one upload of each tenant, a second of B's
	// is refused (A has no more than B), naming the limit.
	if err := begin(other, tenantB, 7); err != nil {
		t.Fatal(err)
	}
	refused(t, "B's second upload at the node's cap", begin(other, tenantB, 8), "ServerConfig.MaxNodeUploads (2)")
	// Ten seconds without a chunk: both are dropped (by the server's
	// ticker or at the next install), and the tenants start anew.
	clock.Add(10 * time.Second)
	for u := range uint64(2) {
		if err := begin(stalled, tenantA, 10+u); err != nil {
			t.Errorf("tenant A after the timeout: %v", err)
		}
	}
	refused(t, "B's upload 7 after the timeout", next(other, tenantB, 7, 100), "ServerConfig.UploadTimeout, 10s")
	st := tn.srv.Stats()
	if st.UploadsExpired != 2 || st.UploadsDropped != 1 || st.Uploads != 2 {
		t.Errorf("uploads: %d expired, %d dropped, %d in progress; want 2, 1, 2", st.UploadsExpired, st.UploadsDropped, st.Uploads)
	}
}

// TestNetControlRegisterLimits: register over the wire until a tenant's
// cap, then another tenant until the node's; unregister over the wire,
// or by the host, gives the bytes back; nicmem counts as host memory.
func TestNetControlRegisterLimits(t *testing.T) {
	const page = 4096
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{MaxRegisterBytes: 2 * page, MaxTenantRegisterBytes: 3 * page, MaxNodeRegisterBytes: 5 * page})
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	reg := func(tenant uint32, name string, size uint64, opts nicrt.RegionOptions) (nicrt.RegionRef, error) {
		return cl.Register(ctx, tenant, name, size, opts)
	}
	_, err := reg(tenantA, "big", 2*page+1, nicrt.RegionOptions{})
	refused(t, "one region over MaxRegisterBytes", err, "ServerConfig.MaxRegisterBytes (8192)")
	var refs []nicrt.RegionRef
	for i, opts := range []nicrt.RegionOptions{{}, {NICMem: true}, {Writable: true}} {
		ref, err := reg(tenantA, "a"+string(rune('0'+i)), page, opts)
		if err != nil {
			t.Fatalf("tenant A's region %d: %v", i, err)
		}
		refs = append(refs, ref)
	}
	_, err = reg(tenantA, "a3", 1, nicrt.RegionOptions{})
	refused(t, "tenant A past its cap", err, "ServerConfig.MaxTenantRegisterBytes (12288)")
	for i := range 2 {
		if _, err := reg(tenantB, "b"+string(rune('0'+i)), page, nicrt.RegionOptions{}); err != nil {
			t.Fatalf("tenant B's region %d: %v", i, err)
		}
	}
	_, err = reg(tenantB, "b2", page, nicrt.RegionOptions{})
	refused(t, "tenant B past the node's cap", err, "ServerConfig.MaxNodeRegisterBytes (20480)")
	// Unregistered over the wire: B's third fits now.
	if err := cl.Unregister(ctx, tenantA, refs[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := reg(tenantB, "b2", page, nicrt.RegionOptions{}); err != nil {
		t.Errorf("after an unregister: %v", err)
	}
	_, err = reg(tenantA, "a3", page, nicrt.RegionOptions{})
	refused(t, "the node full again", err, "ServerConfig.MaxNodeRegisterBytes")
	// Unregistered by the host (A's nicmem region): A's next fits.
	for _, r := range tn.nic.Regions(tenantA) {
		if r.ID == refs[1].ID {
			if err := tn.nic.Unregister(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := reg(tenantA, "a3", page, nicrt.RegionOptions{}); err != nil {
		t.Errorf("after the host's unregister: %v", err)
	}
	// The NIC's own limit, nicmem, is named too.
	small := newTestNet(t, nicrt.Config{NICMemBytes: page}, ServerConfig{})
	_, err = small.client(t, caller.ClientConfig{}, nil).Register(ctx, tenantA, "n", 2*page, nicrt.RegionOptions{NICMem: true})
	refused(t, "past the NIC's memory", err, "Config.NICMemBytes")
}

// TestNetControlUnregister: the unregister op removes the tenant's own
// regions, whoever registered them, and refuses, as the host's Unregister
// does, one an installed program links; another tenant's region, or an
// unknown id, is not the tenant's to remove.
func TestNetControlUnregister(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	ref, err := cl.Register(ctx, tenantA, "counters", 64, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Write(ctx, tenantA, ref, 0, []byte("12345678")); err != nil {
		t.Fatal(err)
	}
	local := register(t, tn.nic, tenantA, "local", 8, nicrt.RegionOptions{})
	p := install(t, tn.nic, tenantA, testprog.Object(t, []bytecode.Region{{Name: "counters", Size: 64}}, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	refused(t, "a region a program links", cl.Unregister(ctx, tenantA, ref.ID), "linked by 1 program")
	refused(t, "another tenant's region", cl.Unregister(ctx, tenantB, ref.ID), "tenant 2 has no region")
	refused(t, "an unknown region", cl.Unregister(ctx, tenantA, 999), "tenant 1 has no region 999")
	if err := tn.nic.Uninstall(p); err != nil {
		t.Fatal(err)
	}
	if err := cl.Unregister(ctx, tenantA, ref.ID); err != nil {
		t.Fatalf("after the uninstall: %v", err)
	}
	if _, err := cl.Read(ctx, tenantA, ref, 0, 8); !errors.Is(err, nicrt.ErrUnknownRegion) {
		t.Errorf("a read of the unregistered region: %v", err)
	}
	refused(t, "a second unregister", cl.Unregister(ctx, tenantA, ref.ID), "has no region")
	// One the host registered.
	if err := cl.Unregister(ctx, tenantA, local.ID); err != nil {
		t.Errorf("the host's region: %v", err)
	}
	if d, err := cl.Describe(ctx, tenantA); err != nil || len(d.Regions) != 0 {
		t.Errorf("describe after: %+v %v", d.Regions, err)
	}
	// A malformed body: region 0.
	body := []byte{0x81, 0xa6, 'r', 'e', 'g', 'i', 'o', 'n', 0x00}
	if _, err := cl.ControlBody(ctx, tenantA, wire.OpUnregister, body); !errors.Is(err, nicrt.ErrBadControl) || !strings.Contains(err.Error(), "unregister.region") {
		t.Errorf("region 0: %v", err)
	}
}

// TestNetControlOps: a tenant runs at most MaxControlOps control ops at
// once; one more is refused as overloaded, naming the limit, and another
// tenant's ops run meanwhile.
func TestNetControlOps(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{MaxControlOps: 2})
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	// Two of tenant A's ops running (as a verifying install would be).
	for range 2 {
		if why := tn.srv.startControl(tenantA); why != "" {
			t.Fatal(why)
		}
	}
	_, err := cl.NodeStats(ctx, tenantA, "server.control")
	if !errors.Is(err, nicrt.ErrOverloaded) || !strings.Contains(err.Error(), "ServerConfig.MaxControlOps (2)") {
		t.Errorf("a third op of tenant A: %v", err)
	}
	if _, err := cl.NodeStats(ctx, tenantB, "server.control"); err != nil {
		t.Errorf("tenant B's op beside them: %v", err)
	}
	tn.srv.endControl(tenantA)
	if cs, err := cl.NodeStats(ctx, tenantA, "server.control_refused"); err != nil || len(cs) != 1 || cs[0].Value != 1 {
		t.Errorf("tenant A's op once one ended: %v %v", cs, err)
	}
}
