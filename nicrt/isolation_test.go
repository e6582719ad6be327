package nicrt

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

func TestTenantIsolation(t *testing.T) {
	n := newNIC(t, Config{})
	ra := register(t, n, 1, "v", 64, RegionOptions{Writable: true})
	rb := register(t, n, 2, "v", 64, RegionOptions{Writable: true})
	binaryPut(ra.Bytes(), 100)
	binaryPut(rb.Bytes(), 200)
	pa := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8}}, testprog.Src{Name: "get", Asm: testprog.ValueAsm(0)}))
	pb := install(t, n, 2, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8}}, testprog.Src{Name: "get", Asm: testprog.ValueAsm(0)}))
	ha, hb := id(t, pa, "get"), id(t, pb, "get")
	// Same object, same region name: each tenant's handler sees its own region.
	if rep := n.Call(&Message{Tenant: 1, Handler: ha}); rep.Status != StatusOK || u64(rep.Data) != 100 {
		t.Errorf("tenant 1: %+v", rep)
	}
	if rep := n.Call(&Message{Tenant: 2, Handler: hb}); rep.Status != StatusOK || u64(rep.Data) != 200 {
		t.Errorf("tenant 2: %+v", rep)
	}
	for _, tc := range []struct {
		name string
		msg  Message
		want Status
	}{
		{"foreign handler", Message{Tenant: 2, Handler: ha}, StatusForeignHandler},
		{"forged tenant", Message{Tenant: 3, Handler: ha}, StatusForeignHandler},
		{"unknown handler", Message{Tenant: 1, Handler: 9999}, StatusUnknownHandler},
		{"handler 0", Message{Tenant: 1, Handler: 0}, StatusUnknownHandler},
		{"foreign region", Message{Tenant: 2, Handler: HandlerRead, Payload: wire.AppendRead(nil, ra.Ref(), 0, 8)}, StatusForeignRegion},
		{"foreign region write", Message{Tenant: 2, Handler: HandlerWrite, Payload: wire.AppendWrite(nil, ra.Ref(), 0, []byte{1})}, StatusForeignRegion},
		{"wrong key", Message{Tenant: 1, Handler: HandlerRead, Payload: wire.AppendRead(nil, RegionRef{ID: ra.ID, Key: ra.Key ^ 1}, 0, 8)}, StatusWrongKey},
		{"another's key", Message{Tenant: 1, Handler: HandlerFetchAdd, Payload: wire.AppendFetchAdd(nil, RegionRef{ID: ra.ID, Key: rb.Key}, 0, 1)}, StatusWrongKey},
		{"unknown region", Message{Tenant: 1, Handler: HandlerRead, Payload: wire.AppendRead(nil, RegionRef{ID: 999, Key: ra.Key}, 0, 8)}, StatusUnknownRegion},
	} {
		rep := n.Call(&tc.msg)
		if rep.Status != tc.want || !errors.Is(rep.Err, tc.want.Err()) || rep.Data != nil {
			t.Errorf("%s: %+v, want %s", tc.name, rep, tc.want)
		}
	}
	if u64(ra.Bytes()) != 100 {
		t.Errorf("tenant 1's region changed: %d", u64(ra.Bytes()))
	}
	s := n.Stats()
	for st, want := range map[Status]uint64{
		StatusForeignHandler: 2, StatusUnknownHandler: 2, StatusForeignRegion: 2, StatusWrongKey: 2, StatusUnknownRegion: 1,
	} {
		if s.Rejected[st] != want {
			t.Errorf("Rejected[%s] = %d, want %d", st, s.Rejected[st], want)
		}
	}
	if hs, _ := n.HandlerStats(ha); hs.Rejected != 2 || hs.Runs != 1 {
		t.Errorf("handler stats: %+v", hs)
	}
}
