package calltest

import (
	"context"
	"errors"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
)

const src = `
region r: [u64; 4] rw
handler echo(x: u64) -> u64 {
    if x == 7 {
        fail(42)
    }
    return x + 1
}
`

func TestLocal(t *testing.T) {
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	obj, err := compiler.Compile(lang.NewFileSet(), "echo.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := nic.Register(1, "r", 32, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.Install(1, obj)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := p.HandlerID("echo")
	ctx := context.Background()
	c := &Local{NIC: nic, Tenant: 1}
	out, err := c.Call(ctx, id, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	if err != nil || len(out) != 8 || out[0] != 2 {
		t.Fatalf("echo(1) = %v, %v", out, err)
	}
	if _, err := c.Call(ctx, id, []byte{7, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Fatal("echo(7) did not fail")
	} else if code, ok := call.Code(err); !ok || code != 42 {
		t.Fatalf("echo(7): %v, code %d %v", err, code, ok)
	}
	if _, err := c.Call(ctx, 9999, nil); !errors.Is(err, nicrt.ErrUnknownHandler) {
		t.Errorf("unknown handler: %v", err)
	}
	if _, ok := call.Code(errors.New("x")); ok {
		t.Error("a plain error has a code")
	}
	other := &Local{NIC: nic, Tenant: 2}
	if _, err := other.Call(ctx, id, make([]byte, 8)); !errors.Is(err, nicrt.ErrForeignHandler) {
		t.Errorf("another tenant's handler: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Call(cancelled, id, make([]byte, 8)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	var v call.Verbs = &LocalReader{NIC: nic, Tenant: 1, Region: reg.Ref()}
	if err := v.Write(ctx, 8, []byte{5, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if old, ok, err := v.CompareAndSwap(ctx, 8, 5, 9); old != 5 || !ok || err != nil {
		t.Errorf("CAS 5→9: %d %v %v", old, ok, err)
	}
	if old, ok, err := v.CompareAndSwap(ctx, 8, 5, 1); old != 9 || ok || err != nil {
		t.Errorf("CAS 5→1 on 9: %d %v %v", old, ok, err)
	}
	if old, err := v.FetchAdd(ctx, 8, 3); old != 9 || err != nil {
		t.Errorf("FETCH-ADD: %d %v", old, err)
	}
	if b, err := v.Read(ctx, 8, 8); err != nil || b[0] != 12 {
		t.Errorf("READ: %v %v", b, err)
	}
	if _, err := v.Read(ctx, 30, 8); !errors.Is(err, nicrt.ErrOutOfBounds) {
		t.Errorf("READ past the end: %v", err)
	}
	if _, _, err := v.CompareAndSwap(ctx, 4, 0, 1); !errors.Is(err, nicrt.ErrMisaligned) {
		t.Errorf("misaligned CAS: %v", err)
	}
}
