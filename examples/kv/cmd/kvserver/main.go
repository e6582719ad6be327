package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// DemoSecret is the default tenant secret of kvserver and kvclient.
const DemoSecret = "6e61616d2d6b762d64656d6f2d7365637265742d6e6f742d666f722d75736521"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run serves until ctx ends. ready, if not nil, receives the Info once
// the node serves (for tests).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- kv.Info) int {
	fs := flag.NewFlagSet("kvserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:7400", "UDP address to serve on (port 0: any)")
	node := fs.Uint("node", 1, "this node's id")
	tenant := fs.Uint("tenant", 1, "the tenant the table belongs to")
	secret := fs.String("secret", DemoSecret, "the tenant's MAC secret, hex")
	buckets := fs.Uint("buckets", 0, "buckets, a power of two (0: kv.BucketsFor(records), a load of at most 1/4)")
	valueSize := fs.Uint("value-size", 64, "largest value (a multiple of 8, at most 256)")
	records := fs.Uint64("records", 0, "records to preload (KeyOf(n), value-size bytes)")
	region := fs.String("region", "kv", "the name to register the table region under (the program's region kv is bound to it)")
	nicmem := fs.Bool("nicmem", false, "place the table in NIC memory (hot keys)")
	queues := fs.Int("queues", 2, "rx queues (sockets on the port)")
	infoPath := fs.String("info", "", "write the client's Info (JSON) here")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "kvserver:", err)
		return 1
	}
	if *buckets == 0 {
		*buckets = uint(kv.BucketsFor(*records))
	}
	cfg := kv.Config{Region: *region, Buckets: uint32(*buckets), ValueSize: uint32(*valueSize)}
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	key, err := tenantKey(*secret)
	if err != nil {
		return fail(err)
	}
	ap, err := netip.ParseAddrPort(*addr)
	if err != nil {
		return fail(err)
	}
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		return fail(err)
	}
	defer nic.Close()
	obj, err := kvnode.Compile(cfg)
	if err != nil {
		return fail(err)
	}
	reg, err := nic.Register(uint64(*tenant), cfg.Region, cfg.RegionSize(), nicrt.RegionOptions{Writable: true, NICMem: *nicmem})
	if err != nil {
		return fail(err)
	}
	prog, err := nic.InstallWith(uint64(*tenant), obj, cfg.InstallOptions())
	if err != nil {
		return fail(err)
	}
	ids, err := kvnode.IDs(prog)
	if err != nil {
		return fail(err)
	}
	table, err := kv.NewTable(cfg, reg.Bytes())
	if err != nil {
		return fail(err)
	}
	if *records > 0 {
		loaders := []workload.Target{kv.Loader{T: table}, kv.Loader{T: table}}
		if err := workload.Load(ctx, loaders, *records, int(table.Config().ValueSize), 1); err != nil {
			return fail(err)
		}
	}
	qs, err := transport.ListenUDPQueues(transport.UDPConfig{Addr: ap, ReadBuffer: 4 << 20, WriteBuffer: 4 << 20}, max(*queues, 1))
	if err != nil {
		return fail(err)
	}
	conns := make([]transport.Conn, len(qs))
	for i, q := range qs {
		conns[i] = q
	}
	srv, err := server.Serve(nic, conns, server.ServerConfig{Node: uint32(*node), Keys: wire.KeyMap{uint32(*tenant): key}})
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	info := kv.Info{Addr: srv.LocalAddrs()[0].String(), Node: uint32(*node), Tenant: uint32(*tenant), Config: table.Config(), IDs: ids, Region: reg.Ref()}
	if *infoPath != "" {
		if err := kv.WriteInfo(*infoPath, info); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "kvserver: serving %d records in %d buckets (%d-byte values, %s) on %s as node %d, tenant %d; handlers get=%d put=%d delete=%d cas=%d\n",
		table.Len(), cfg.Buckets, info.Config.ValueSize, map[bool]string{false: "host memory", true: "nicmem"}[*nicmem], info.Addr, *node, *tenant, ids.Get, ids.Put, ids.Delete, ids.CAS)
	if ready != nil {
		ready <- info
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil && !errors.Is(err, transport.ErrClosed) {
		return fail(err)
	}
	return 0
}

func tenantKey(secretHex string) (*wire.Key, error) {
	secret, err := hex.DecodeString(secretHex)
	if err != nil {
		return nil, fmt.Errorf("-secret: %w", err)
	}
	return wire.NewKey(secret)
}
