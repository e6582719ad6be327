package server

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// TestNetInstallBinds: region bindings travel in an install's first chunk
// (of several) and link the object's region to the one named; a binding
// the node refuses names both sides.
func TestNetInstallBinds(t *testing.T) {
	tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
	cl := tn.client(t, caller.ClientConfig{MaxPayload: 256}, nil)
	ctx := context.Background()
	ref, err := cl.Register(ctx, tenantA, "cells_b", 4*8, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "cells.naam", []byte(
		"region cells: [u64; 4] rw\n\nhandler swap(i: u32, v: u64) -> u64 {\n    let old = cells[i & 3]\n    cells[i & 3] = v\n    return old\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if file, _ := obj.Marshal(); len(file) <= 256 {
		t.Fatalf("the object has %d bytes: one chunk, the test wants several", len(file))
	}
	if _, err := cl.Install(ctx, tenantA, obj); !errors.Is(err, nicrt.ErrControlFailed) || !strings.Contains(err.Error(), `regions[0] "cells" (tenant`) {
		t.Errorf("unbound install: %v", err)
	}
	_, err = cl.InstallWith(ctx, tenantA, obj, nicrt.InstallOptions{Regions: map[string]string{"cells": "nope"}})
	if !errors.Is(err, nicrt.ErrControlFailed) || !strings.Contains(err.Error(), `regions[0] "cells" (bound to "nope")`) {
		t.Errorf("bound to a missing region: %v", err)
	}
	inst, err := cl.InstallWith(ctx, tenantA, obj, nicrt.InstallOptions{Regions: map[string]string{"cells": "cells_b"}})
	if err != nil {
		t.Fatal(err)
	}
	req := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 2), 5)
	if _, err := cl.Call(ctx, tenantA, inst.Handlers[0].ID, req); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.Read(ctx, tenantA, ref, 16, 8); err != nil || u64(got) != 5 {
		t.Fatalf("the bound region holds %x (%v), want 5 in cell 2", got, err)
	}
	// Bindings too large for a packet are refused before anything is sent.
	big := map[string]string{}
	for i := range 40 {
		big["counters"+strings.Repeat("x", i)] = strings.Repeat("y", 20)
	}
	if _, err := cl.InstallWith(ctx, tenantA, obj, nicrt.InstallOptions{Regions: big}); err == nil || !strings.Contains(err.Error(), "do not fit a packet") {
		t.Errorf("oversized bindings: %v", err)
	}
}
