package kvnode

import (
	"maps"
	"testing"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/nicrt"
)

// TestDeclared: the defaults the client uses are what kv.naam declares.
func TestDeclared(t *testing.T) {
	have := kv.DefaultConfig().Constants()
	want := prog.Declared("BUCKETS", "PROBES", "VALUE")
	if !maps.Equal(have, want) {
		t.Errorf("kv's defaults %v, kv.naam declares %v", have, want)
	}
}

// TestCompileInstall: the default table compiles, installs on a NIC and
// has its four handlers.
func TestCompileInstall(t *testing.T) {
	cfg := kv.DefaultConfig()
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	if _, err := nic.Register(1, cfg.Region, cfg.RegionSize(), nicrt.RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	p, err := nic.InstallWith(1, obj, cfg.InstallOptions())
	if err != nil {
		t.Fatal(err)
	}
	ids, err := IDs(p)
	if err != nil || ids.Get == 0 || ids.Put == 0 || ids.Delete == 0 || ids.CAS == 0 {
		t.Errorf("ids %+v, %v", ids, err)
	}
	if _, err := Compile(kv.Config{Buckets: 3}); err == nil {
		t.Error("3 buckets compiled")
	}
}
