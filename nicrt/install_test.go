package nicrt

import (
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
)

func TestInstallCallsHandlers(t *testing.T) {
	n := newNIC(t, Config{})
	r := register(t, n, 1, "v", 8, RegionOptions{})
	binaryPut(r.Bytes(), 1000)
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8}},
		testprog.Src{Name: "null", Asm: testprog.NullAsm}, testprog.Src{Name: "err", Asm: testprog.ErrAsm}, testprog.Src{Name: "value", Asm: testprog.ValueAsm(5)}))
	hs := p.Handlers()
	if len(hs) != 3 || hs[0].ID < FirstHandlerID || hs[1].ID != hs[0].ID+1 || hs[2].ObjectID != 2 {
		t.Fatalf("handlers: %+v", hs)
	}
	for _, tc := range []struct {
		name string
		want Status
		code int32
		data uint64
	}{
		{"null", StatusOK, 0, 0},
		{"err", StatusError, 42, 0},
		{"value", StatusOK, 0, 1005},
	} {
		rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, tc.name), RequestID: 1, SrcNode: 2})
		if rep.Status != tc.want || rep.Code != tc.code || rep.Err != nil {
			t.Errorf("%s: %+v, want %s code %d", tc.name, rep, tc.want, tc.code)
		}
		if tc.data != 0 && (len(rep.Data) != 8 || u64(rep.Data) != tc.data) {
			t.Errorf("%s: data %x, want %d", tc.name, rep.Data, tc.data)
		}
		if rep.Placement != PlaceNIC || rep.Core < 0 || rep.Core >= 8 || rep.Insns == 0 || rep.ModelNanos == 0 {
			t.Errorf("%s: placement %s core %d insns %d model %d", tc.name, rep.Placement, rep.Core, rep.Insns, rep.ModelNanos)
		}
	}
	if got, ok := p.ResolveLocal(2); !ok || got != id(t, p, "value") {
		t.Errorf("ResolveLocal(2) = %d, %v", got, ok)
	}
}

func binaryPut(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

func TestInstallRefusesWhatTheVerifierRejects(t *testing.T) {
	n := newNIC(t, Config{})
	register(t, n, 1, "v", 8, RegionOptions{})
	// An 8-byte load at offset 100 of an 8-byte region.
	o := testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8}}, testprog.Src{Name: "bad", Asm: "lddw %r1, region[0]\nldxdw %r0, [%r1+100]\nexit"})
	_, err := n.Install(1, o)
	var verr *verifier.Error
	if !errors.As(err, &verr) || verr.Code != verifier.CodeOutOfBounds {
		t.Fatalf("err = %v, want a verifier out-of-bounds rejection", err)
	}
	if !strings.Contains(err.Error(), verr.Error()) {
		t.Errorf("%q does not carry the verifier's message %q", err, verr)
	}
	// A loop bound over the install budget is the verifier's too.
	n2 := newNIC(t, Config{HostBudget: 100, NICBudget: 50})
	_, err = n2.Install(1, testprog.Object(t, nil, testprog.Src{Name: "loop", Asm: testprog.LoopAsm}))
	if !errors.As(err, &verr) || verr.Code != verifier.CodeBudget {
		t.Fatalf("err = %v, want a budget rejection", err)
	}
	if s := n.Stats(); s.Programs != 0 || len(s.Handlers) != 4 { // the four verbs
		t.Errorf("after rejections: %d programs, %d handlers", s.Programs, len(s.Handlers))
	}
}

func TestInstallRefusesInvalidObjects(t *testing.T) {
	n := newNIC(t, Config{})
	o := testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm})
	o.Magic = "naam-ob"
	var oerr *bytecode.ObjectError
	if _, err := n.Install(1, o); !errors.As(err, &oerr) || oerr.Field != "magic" {
		t.Errorf("bad magic: %v", err)
	}
	o = testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm})
	o.Handlers = nil
	if _, err := n.Install(1, o); !errors.Is(err, ErrNoHandlers) {
		t.Errorf("no handlers: %v", err)
	}
	if _, err := n.Install(1, nil); err == nil {
		t.Error("nil object installed")
	}
}

func TestInstallLinksRegions(t *testing.T) {
	n := newNIC(t, Config{})
	register(t, n, 1, "ro", 64, RegionOptions{})
	register(t, n, 1, "rw", 64, RegionOptions{Writable: true})
	register(t, n, 2, "other", 64, RegionOptions{Writable: true})
	read := testprog.ValueAsm(0)
	for _, tc := range []struct {
		name   string
		region bytecode.Region
		code   string
		want   error
	}{
		{"missing", bytecode.Region{Name: "nope", Size: 8}, read, ErrRegionMissing},
		{"another tenant's", bytecode.Region{Name: "other", Size: 8}, read, ErrRegionMissing},
		{"too large", bytecode.Region{Name: "ro", Size: 65}, read, ErrRegionTooSmall},
		{"writes read-only", bytecode.Region{Name: "ro", Size: 8, Writable: true}, testprog.IncrAsm, ErrRegionReadOnly},
		{"smaller is fine", bytecode.Region{Name: "ro", Size: 8}, read, nil},
		{"ro view of rw", bytecode.Region{Name: "rw", Size: 64}, read, nil},
		{"rw", bytecode.Region{Name: "rw", Size: 64, Writable: true}, testprog.IncrAsm, nil},
	} {
		_, err := n.Install(1, testprog.Object(t, []bytecode.Region{tc.region}, testprog.Src{Name: "h", Asm: tc.code}))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestUnregister(t *testing.T) {
	n := newNIC(t, Config{})
	r := register(t, n, 1, "v", 8, RegionOptions{Writable: true})
	p := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, testprog.Src{Name: "incr", Asm: testprog.IncrAsm}))
	if err := n.Unregister(r); !errors.Is(err, ErrRegionInUse) {
		t.Errorf("linked region unregistered: %v", err)
	}
	if err := n.Uninstall(p); err != nil {
		t.Fatal(err)
	}
	if err := n.Uninstall(p); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("second Uninstall: %v", err)
	}
	if err := n.Unregister(r); err != nil {
		t.Fatal(err)
	}
	if err := n.Unregister(r); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("second Unregister: %v", err)
	}
	rep := n.Call(&Message{Tenant: 1, Handler: HandlerRead, Payload: wire.AppendRead(nil, r.Ref(), 0, 8)})
	if rep.Status != StatusUnknownRegion {
		t.Errorf("READ of an unregistered region: %s", rep.Status)
	}
	// The name is free again.
	register(t, n, 1, "v", 8, RegionOptions{})
}

func TestRegister(t *testing.T) {
	n := newNIC(t, Config{NICMemBytes: 100})
	a := register(t, n, 1, "a", 13, RegionOptions{})
	b := register(t, n, 2, "a", 16, RegionOptions{}) // names are per tenant
	if a.ID == b.ID || a.Key == b.Key || a.Key == 0 {
		t.Errorf("ids %d %d keys %x %x", a.ID, b.ID, a.Key, b.Key)
	}
	if len(a.Bytes()) != 13 || a.Size() != 13 || uintptrOf(a.Bytes())%8 != 0 {
		t.Errorf("region memory: %d bytes at %#x", len(a.Bytes()), uintptrOf(a.Bytes()))
	}
	if _, err := n.Register(1, "a", 8, RegionOptions{}); !errors.Is(err, ErrRegionExists) {
		t.Errorf("duplicate: %v", err)
	}
	for _, size := range []uint64{0, 1 << 32} {
		if _, err := n.Register(1, "big", size, RegionOptions{}); !errors.Is(err, ErrRegionSize) {
			t.Errorf("size %d: %v", size, err)
		}
	}
	register(t, n, 1, "nm", 60, RegionOptions{NICMem: true})
	if _, err := n.Register(1, "nm2", 41, RegionOptions{NICMem: true}); !errors.Is(err, ErrNICMemFull) {
		t.Errorf("nicmem overcommitted: %v", err)
	}
	register(t, n, 1, "nm2", 40, RegionOptions{NICMem: true})
	if s := n.Stats(); s.NICMemUsed != 100 || s.Regions != 4 || s.Tenants != 2 {
		t.Errorf("stats: nicmem %d regions %d tenants %d", s.NICMemUsed, s.Regions, s.Tenants)
	}
}
