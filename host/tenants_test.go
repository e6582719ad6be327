package host

import (
	"strings"
	"testing"
	"time"
)

// TestOtherTenants: a node serves the tenants of Config.Tenants over the
// wire, each in its own namespace of regions and programs; a tenant it
// has no key for gets no answer.
func TestOtherTenants(t *testing.T) {
	secret2 := []byte("tenant two's key, 32 bytes long!")
	n, err := Start(Config{Tenants: map[uint32][]byte{2: secret2}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := testCtx(t)
	p, err := Dial(ctx, n.Addr().String(), 2, secret2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Register(ctx, "counters", 16*8, RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	prog, err := p.Install(ctx, demoObject(t))
	if err != nil {
		t.Fatal(err)
	}
	var v uint64
	if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{1, 5}, &v); err != nil || v != 5 {
		t.Fatalf("tenant 2's incr: %d, %v", v, err)
	}
	if got := n.NIC().Programs(uint64(n.Tenant())); len(got) != 0 {
		t.Errorf("the node's own tenant has %d programs", len(got))
	}
	if err := p.Uninstall(ctx, prog.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(ctxTimeout(t, 300*time.Millisecond), n.Addr().String(), 3, secret2, 0); err == nil {
		t.Error("tenant 3, which the node has no key for, was answered")
	}
	for _, tc := range []struct {
		tenants map[uint32][]byte
		want    string
	}{
		{map[uint32][]byte{1: secret2}, "tenant 1 is not another tenant"},
		{map[uint32][]byte{0: secret2}, "tenant 0 is not another tenant"},
		{map[uint32][]byte{4: []byte("short")}, "Config.Tenants[4]"},
	} {
		if _, err := Start(Config{Tenants: tc.tenants}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.tenants, err, tc.want)
		}
	}
}
