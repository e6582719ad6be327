package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/internal/bench/memcache"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// demoSecret is kvserver's default secret.
const demoSecret = "6e61616d2d6b762d64656d6f2d7365637265742d6e6f742d666f722d75736521"

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

type conn struct {
	info  kv.Info
	keys  wire.KeyMap
	node  uint32
	tries int
}

func (c *conn) dial() (*caller.Client, error) {
	ap, err := netip.ParseAddrPort(c.info.Addr)
	if err != nil {
		return nil, err
	}
	uc, err := transport.ListenUDP(transport.UDPConfig{ReadBuffer: 4 << 20, WriteBuffer: 4 << 20})
	if err != nil {
		return nil, err
	}
	cl, err := caller.Dial(uc, ap, caller.ClientConfig{Node: c.node, Server: c.info.Node, Keys: c.keys, MaxTries: c.tries})
	if err != nil {
		uc.Close()
		return nil, err
	}
	c.node++ // the next client gets its own node id
	return cl, nil
}

func (c *conn) clients(cl *caller.Client) (*kv.Client, *kv.RDMAClient) {
	am := kv.NewClient(call.Remote{Client: cl, Tenant: c.info.Tenant}, c.info.Config, c.info.IDs)
	rd := kv.NewRDMAClient(call.RemoteReader{Client: cl, Tenant: c.info.Tenant, Region: c.info.Region}, c.info.Config)
	return am, rd
}

func parseKey(s string) (kv.Key, error) {
	if n, ok := strings.CutPrefix(s, "#"); ok {
		v, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return kv.Key{}, fmt.Errorf("key %q: %w", s, err)
		}
		return kv.KeyOf(v), nil
	}
	return kv.StringKey(s)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvclient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	infoPath := fs.String("info", "kv.json", "the server's Info (kvserver -info)")
	secret := fs.String("secret", demoSecret, "the tenant's MAC secret, hex")
	node := fs.Uint("node", 100, "this client's node id (ycsb clients take the following ones)")
	timeout := fs.Duration("timeout", 5*time.Second, "deadline of a single operation")
	tries := fs.Int("tries", 0, "sends of a request before it times out (0: nicrt's default, 8)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "kvclient:", err)
		return 1
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "kvclient: a command is needed: get, put, delete, cas, rdma-get, rdma-put, ycsb")
		return 2
	}
	info, err := kv.ReadInfo(*infoPath)
	if err != nil {
		return fail(err)
	}
	raw, err := hex.DecodeString(*secret)
	if err != nil {
		return fail(fmt.Errorf("-secret: %w", err))
	}
	key, err := wire.NewKey(raw)
	if err != nil {
		return fail(err)
	}
	c := &conn{info: info, keys: wire.KeyMap{info.Tenant: key}, node: uint32(*node), tries: *tries}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	if cmd == "ycsb" {
		return ycsb(ctx, c, rest, stdout, stderr)
	}
	need := map[string]int{"get": 1, "delete": 1, "rdma-get": 1, "put": 2, "rdma-put": 2, "cas": 3}[cmd]
	if need == 0 {
		fmt.Fprintf(stderr, "kvclient: unknown command %q\n", cmd)
		return 2
	}
	if len(rest) != need {
		fmt.Fprintf(stderr, "kvclient: %s takes %d arguments\n", cmd, need)
		return 2
	}
	k, err := parseKey(rest[0])
	if err != nil {
		return fail(err)
	}
	cl, err := c.dial()
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	am, rd := c.clients(cl)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var rep kv.Reply
	switch cmd {
	case "get":
		rep, err = am.Get(ctx, k)
	case "rdma-get":
		rep, err = rd.Get(ctx, k)
	case "put":
		rep, err = am.Put(ctx, k, []byte(rest[1]))
	case "rdma-put":
		rep, err = rd.Put(ctx, k, []byte(rest[1]))
	case "delete":
		rep, err = am.Delete(ctx, k)
	case "cas":
		var v uint64
		if v, err = strconv.ParseUint(rest[1], 10, 64); err == nil {
			rep, err = am.CompareAndSwap(ctx, k, v, []byte(rest[2]))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kvclient: %s: %v (%d round trips)\n", cmd, err, rep.RoundTrips)
		return 1
	}
	switch cmd {
	case "get", "rdma-get":
		fmt.Fprintf(stdout, "value %q version %d round_trips %d\n", rep.Value, rep.Version, rep.RoundTrips)
	case "cas":
		fmt.Fprintf(stdout, "swapped %v version %d round_trips %d\n", rep.Swapped, rep.Version, rep.RoundTrips)
	default:
		fmt.Fprintf(stdout, "version %d round_trips %d\n", rep.Version, rep.RoundTrips)
	}
	return 0
}

func ycsb(ctx context.Context, c *conn, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ycsb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mixName := fs.String("mix", "B", "YCSB mix: A, B or C")
	dist := fs.String("dist", "zipfian", "key distribution: zipfian or uniform")
	records := fs.Uint64("records", 0, "records the server holds (required: kvserver -records)")
	ops := fs.Uint64("ops", 20000, "operations per mode (0: run for -duration)")
	duration := fs.Duration("duration", 0, "time per mode (0: run for -ops)")
	clients := fs.Int("clients", 2, "clients (one UDP socket and node id each)")
	outstanding := fs.Int("outstanding", 8, "operations in flight per client")
	cdf := fs.String("cdf", "", "write the latency CDF of the modes to this PNG")
	tput := fs.String("throughput", "", "write the throughput bars of the modes to this PNG")
	modes := fs.String("modes", "am,rdma", "modes to run, in order: am, rdma, memcached (starts a local memcached and loads it first)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "kvclient: ycsb:", err)
		return 1
	}
	mix, err := workload.MixByName(*mixName)
	if err != nil {
		return fail(err)
	}
	keys, err := workload.DistributionByName(*dist)
	if err != nil {
		return fail(err)
	}
	if *records == 0 {
		return fail(fmt.Errorf("-records is required"))
	}
	wcfg := workload.Config{Mix: mix, Keys: keys, Records: *records, ValueSize: int(c.info.Config.ValueSize),
		Clients: *clients, Outstanding: *outstanding, Ops: *ops, Duration: *duration}
	var runs []workload.ModeRun
	res := workload.Result{Workload: fmt.Sprintf("ycsb-%s %s %d records, %d-byte values", strings.ToLower(mix.Name), keys.Name, *records, wcfg.ValueSize)}
	for _, mode := range strings.Split(*modes, ",") {
		var targets []workload.Target
		if mode == workload.ModeMemcached {
			mc, stop, err := memcache.Baseline(ctx, *clients, *outstanding, *records, wcfg.ValueSize)
			if err != nil {
				return fail(err)
			}
			defer stop()
			targets = mc
		}
		for range *clients {
			if mode == workload.ModeMemcached {
				break
			}
			cl, err := c.dial()
			if err != nil {
				return fail(err)
			}
			defer cl.Close()
			am, rd := c.clients(cl)
			switch mode {
			case workload.ModeAM:
				targets = append(targets, kv.AMTarget{C: am})
			case workload.ModeRDMA:
				targets = append(targets, kv.RDMATarget{C: rd})
			default:
				return fail(fmt.Errorf("unknown mode %q (am, rdma, memcached)", mode))
			}
		}
		st, err := workload.Run(ctx, wcfg, targets)
		if err != nil {
			return fail(err)
		}
		if st.Errors > 0 {
			fmt.Fprintf(stderr, "kvclient: ycsb %s: %d operations failed, the first: %v\n", mode, st.Errors, st.FirstError)
		}
		res.Modes = append(res.Modes, st.ModeResult(mode))
		runs = append(runs, workload.ModeRun{Mode: mode, Stats: st})
	}
	if *cdf != "" || *tput != "" {
		dir, err := os.MkdirTemp("", "kvclient-plots")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		c, t := *cdf, *tput
		if c == "" {
			c = dir + "/cdf.png"
		}
		if t == "" {
			t = dir + "/throughput.png"
		}
		if err := workload.WritePlots(c, t, res.Workload, runs); err != nil {
			return fail(err)
		}
	}
	if err := res.WriteJSON(stdout); err != nil {
		return fail(err)
	}
	return 0
}
