package server

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

const failingSource = `region cells: [u64; 4] rw

handler pick(i: u64) -> u64 {
    if i == 7 {
        fail(7)
    }
    return cells[i]
}
`

// A handler's failure reaches the caller with the failing site's
// position, and nicrt.Config.Failed hears of it with the handler's name.
func TestNetFailurePosition(t *testing.T) {
	var mu sync.Mutex
	var failures []nicrt.Failure
	tn := newTestNet(t, nicrt.Config{Failed: func(f nicrt.Failure) {
		mu.Lock()
		failures = append(failures, f)
		mu.Unlock()
	}}, ServerConfig{})
	obj, err := compiler.Compile(lang.NewFileSet(), "cells.naam", []byte(failingSource))
	if err != nil {
		t.Fatal(err)
	}
	register(t, tn.nic, tenantA, "cells", 32, nicrt.RegionOptions{Writable: true})
	p := install(t, tn.nic, tenantA, obj)
	cl := tn.client(t, caller.ClientConfig{}, nil)
	ctx := context.Background()
	pick := id(t, p, "pick")
	for _, tc := range []struct {
		i    uint64
		code uint32
		pos  string
	}{
		{7, 7, "cells.naam:5:9"},
		{9, bytecode.FailIndexOutOfRange, "cells.naam:7:18"},
	} {
		_, err := cl.Call(ctx, tenantA, pick, binary.LittleEndian.AppendUint64(nil, tc.i))
		var he *caller.HandlerError
		if !errors.As(err, &he) || he.Code != tc.code || he.Pos != tc.pos {
			t.Errorf("pick(%d): %v, want code %#x at %s", tc.i, err, tc.code, tc.pos)
		}
		if err != nil && !strings.Contains(err.Error(), " at "+tc.pos) {
			t.Errorf("pick(%d): %q does not name %s", tc.i, err, tc.pos)
		}
	}
	if _, err := cl.Call(ctx, tenantA, pick, binary.LittleEndian.AppendUint64(nil, 1)); err != nil {
		t.Fatalf("pick(1): %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 2 {
		t.Fatalf("Failed heard %d failures, want 2: %+v", len(failures), failures)
	}
	for i, want := range []string{"cells.naam:5:9", "cells.naam:7:18"} {
		f := failures[i]
		if f.Status != nicrt.StatusError || f.Handler.Name != "pick" || f.Handler.Source != "cells.naam" || f.Handler.Program != p.ID || f.Pos.String() != want {
			t.Errorf("failure %d: %+v, want pick of cells.naam (program %d) at %s", i, f, p.ID, want)
		}
	}
}

// A fault carries the faulting instruction's position, and its text on
// the wire starts with it.
func TestNetFaultPosition(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	// A reply longer than the reply buffer (MaxReply): a return fault at
	// the exit, slot 1, which the verifier does not rule out.
	obj := testprog.Object(t, nil, testprog.Src{Name: "long", Asm: "mov %r0, 4000\nexit"})
	obj.Source = "long.naam"
	obj.Lines = []bytecode.Line{{Insn: 0, File: "long.naam", Line: 2, Col: 5}, {Insn: 1, File: "long.naam", Line: 3, Col: 5}}
	p := install(t, tn.nic, tenantA, obj)
	r := tn.nic.Call(&nicrt.Message{Tenant: tenantA, Handler: id(t, p, "long")})
	if r.Status != nicrt.StatusFault || r.Pos.String() != "long.naam:3:5" {
		t.Errorf("reply %+v, want a fault at long.naam:3:5", r)
	}
	cl := tn.client(t, caller.ClientConfig{}, nil)
	_, err := cl.Call(context.Background(), tenantA, id(t, p, "long"), nil)
	var re *caller.RemoteError
	if !errors.As(err, &re) || re.Status != nicrt.StatusFault || !strings.HasPrefix(re.Msg, "long.naam:3:5: ") {
		t.Errorf("call: %v, want a fault whose text starts with long.naam:3:5", err)
	}
}

// The stats op answers a tenant with its own handlers' counters and the
// verbs', named PROGRAM.HANDLER, never another tenant's.
func TestNetStatsForTenant(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	obj, err := compiler.Compile(lang.NewFileSet(), "cells.naam", []byte(failingSource))
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []uint64{tenantA, tenantB} {
		register(t, tn.nic, tenant, "cells", 32, nicrt.RegionOptions{Writable: true})
		install(t, tn.nic, tenant, obj)
	}
	other, err := compiler.Compile(lang.NewFileSet(), "secret.naam", []byte(strings.ReplaceAll(failingSource, "pick", "hidden")))
	if err != nil {
		t.Fatal(err)
	}
	install(t, tn.nic, tenantB, other)
	cl := tn.client(t, caller.ClientConfig{}, nil)
	cs, err := cl.NodeStats(context.Background(), tenantA, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cs {
		seen[c.Name] = true
		if strings.Contains(c.Name, "secret") || strings.Contains(c.Name, "hidden") {
			t.Errorf("tenant %d reads %s, another tenant's", tenantA, c.Name)
		}
	}
	for _, name := range []string{"handler.cells.pick.runs", "verb.read.runs", "verb.fetch_add.rejected", "server.requests"} {
		if !seen[name] {
			t.Errorf("no counter %s", name)
		}
	}
}
