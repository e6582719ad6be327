package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// The tests give requests 40 tries instead of 8: a loaded machine (the
// whole suite on 2 CPUs) can delay a loopback reply past 8 (about 51 ms).

// serveTable serves a kv table of records over loopback UDP, as kvserver
// does, and writes its Info.
func serveTable(t *testing.T, records uint64) string {
	t.Helper()
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nic.Close() })
	cfg := kv.Config{Buckets: kv.BucketsFor(records), ValueSize: 64}
	obj, err := kvnode.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := nic.Register(1, "kv", cfg.RegionSize(), nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.Install(1, obj)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := kvnode.IDs(p)
	tb, err := kv.NewTable(cfg, reg.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := workload.Load(context.Background(), []workload.Target{kv.Loader{T: tb}}, records, 64, 1); err != nil {
		t.Fatal(err)
	}
	secret, _ := hex.DecodeString(demoSecret)
	key, _ := wire.NewKey(secret)
	q, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Serve(nic, []transport.Conn{q}, server.ServerConfig{Node: 1, Keys: wire.KeyMap{1: key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	path := filepath.Join(t.TempDir(), "kv.json")
	if err := kv.WriteInfo(path, kv.Info{Addr: srv.LocalAddrs()[0].String(), Node: 1, Tenant: 1, Config: tb.Config(), IDs: ids, Region: reg.Ref()}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommands(t *testing.T) {
	info := serveTable(t, 500)
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"get", "#7"}, 0, "version 2 round_trips 1"},
		{[]string{"rdma-get", "#7"}, 0, "version 2 round_trips 2"},
		{[]string{"put", "hello", "world"}, 0, "version 2 round_trips 1"},
		{[]string{"get", "hello"}, 0, `value "world" version 2 round_trips 1`},
		{[]string{"cas", "hello", "2", "there"}, 0, "swapped true version 4"},
		{[]string{"cas", "hello", "2", "again"}, 0, "swapped false version 4"},
		{[]string{"rdma-put", "hello", "one-sided"}, 0, "version 6 round_trips 5"},
		{[]string{"rdma-get", "hello"}, 0, `value "one-sided" version 6 round_trips 2`},
		{[]string{"delete", "hello"}, 0, "version 8"},
		{[]string{"get", "hello"}, 1, "not found"},
		{[]string{"get", "seventeen-bytes!!"}, 1, "at most 16"},
		{[]string{"frob", "x"}, 2, "unknown command"},
		{[]string{"put", "x"}, 2, "takes 2 arguments"},
	} {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"-info", info, "-tries", "40"}, c.args...), &out, &errOut)
		all := out.String() + errOut.String()
		if code != c.code || !strings.Contains(all, c.out) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, all, c.code, c.out)
		}
	}
}

func TestYCSB(t *testing.T) {
	info := serveTable(t, 2000)
	var out, errOut bytes.Buffer
	cdf := filepath.Join(t.TempDir(), "cdf.png")
	code := run(context.Background(), []string{"-info", info, "-tries", "40", "ycsb", "-records", "2000", "-ops", "3000", "-clients", "2", "-outstanding", "4", "-mix", "C", "-cdf", cdf}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res workload.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(res.Modes) != 2 || res.Modes[0].Mode != "am" || res.Modes[1].Mode != "rdma" {
		t.Fatalf("modes %+v", res.Modes)
	}
	t.Logf("%s", out.String())
	// Read-only, so nothing is ever busy: exactly 1 and 2 round trips.
	if res.Modes[0].RoundTripsPerOp != 1 || res.Modes[1].RoundTripsPerOp != 2 {
		t.Errorf("round trips per op: am %v, rdma %v", res.Modes[0].RoundTripsPerOp, res.Modes[1].RoundTripsPerOp)
	}
	for _, m := range res.Modes {
		if m.OpsPerSec <= 0 || m.P50us <= 0 || m.P99us < m.P50us {
			t.Errorf("%+v", m)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
	if fi, err := os.Stat(cdf); err != nil || fi.Size() < 1000 {
		t.Errorf("the CDF plot: %v", err)
	}
}

func TestYCSBMemcached(t *testing.T) {
	if _, err := exec.LookPath("memcached"); err != nil {
		t.Skip("memcached is not installed (apt-get install memcached)")
	}
	info := serveTable(t, 500)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-info", info, "-tries", "40", "ycsb", "-records", "500", "-ops", "2000", "-clients", "2", "-outstanding", "4", "-modes", "memcached"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res workload.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Modes) != 1 || res.Modes[0].Mode != "memcached" || res.Modes[0].RoundTripsPerOp != 1 || res.Modes[0].OpsPerSec <= 0 {
		t.Errorf("%+v", res.Modes)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
}
