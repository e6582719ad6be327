package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestServe starts the server on a free loopback port with 2,000
// records, reads its Info and GETs records over UDP, by message and by
// READs.
func TestServe(t *testing.T) {
	info := filepath.Join(t.TempDir(), "kv.json")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan kv.Info, 1)
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-records", "2000", "-info", info, "-queues", "1"}, &out, &errOut, ready)
	}()
	var got kv.Info
	select {
	case got = <-ready:
	case code := <-done:
		t.Fatalf("kvserver exited %d: %s", code, errOut.String())
	case <-time.After(20 * time.Second):
		t.Fatal("kvserver did not start")
	}
	if !strings.Contains(out.String(), "serving 2000 records") {
		t.Errorf("banner %q", out.String())
	}
	read, err := kv.ReadInfo(info)
	if err != nil || read != got {
		t.Fatalf("info file %+v, %v; want %+v", read, err, got)
	}
	secret, _ := hex.DecodeString(DemoSecret)
	key, err := wire.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := transport.ListenUDP(transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := caller.Dial(uc, netip.MustParseAddrPort(got.Addr), caller.ClientConfig{Node: 50, Server: got.Node, Keys: wire.KeyMap{got.Tenant: key}, MaxTries: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	am := kv.NewClient(call.Remote{Client: cl, Tenant: got.Tenant}, got.Config, got.IDs)
	rd := kv.NewRDMAClient(call.RemoteReader{Client: cl, Tenant: got.Tenant, Region: got.Region}, got.Config)
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	for _, n := range []uint64{0, 1, 999, 1999} {
		a, err := am.Get(cctx, kv.KeyOf(n))
		if err != nil || len(a.Value) != 64 || a.Value[0] != byte(n) || a.Value[1] != byte(n>>8) || a.RoundTrips != 1 {
			t.Fatalf("record %d by message: %+v %v", n, a, err)
		}
		r, err := rd.Get(cctx, kv.KeyOf(n))
		if err != nil || !bytes.Equal(r.Value, a.Value) || r.RoundTrips < 2 {
			t.Fatalf("record %d by READs: %+v %v", n, r, err)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("kvserver exited %d: %s", code, errOut.String())
	}
	if code := run(context.Background(), []string{"-buckets", "1000"}, &out, &errOut, nil); code != 1 {
		t.Errorf("1000 buckets: exit %d", code)
	}
}
