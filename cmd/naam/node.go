package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/nicrt"
)

// nodeFlags are naam node's settings; a --config file (JSON, the flags'
// names as keys) gives values that flags override.
type nodeFlags struct {
	Name       string
	Listen     string
	Advertise  string
	ID         uint32
	Tenant     uint32
	SecretFile string
	Queues     int
	Programs   []string
	Regions    []string
	Gossip     string
	Join       []string
	Peers      []string
	Metrics    string
	LogLevel   string
	LogFormat  string
	AddrFile   string
	Tier       string
	xdp        xdpFlags
	NIC        nicFlags
}

func newNodeCmd() *cobra.Command {
	var f nodeFlags
	var configFile string
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run a NAAM node until interrupted",
		Long: `node runs one NAAM node: a modelled SmartNIC answering active messages on a
UDP address, with the regions and programs given, until SIGINT or SIGTERM,
when it shuts down gracefully (leaves the cluster, stops taking requests,
answers the ones it took, closes).

Regions are name:SIZE[:nicmem][:ro] (SIZE in bytes, or with a K, M or G
suffix); they are registered before the programs, whose regions link to
them by name. Programs are FILE[:OBJREGION=REGION]...: an object file from
naamc build (.nobj) or a handler source (.naam), compiled here, each
verified before it installs; a :OBJREGION=REGION suffix binds the
program's region OBJREGION to the registered region REGION instead of the
one of its own name (so one program can serve several regions).

The tenant's key comes from --secret-file or $NAAM_SECRET (at least 16
bytes); without either the node uses the public development key, and says
so in its log. Settings can also come from a JSON file (--config) with the
flags' names as keys ("listen", "region": [...], ...); flags win.

With --metrics ADDR the node serves Prometheus metrics at /metrics,
/healthz (200 while the process serves) and /readyz (200 once the regions
and programs given are in place, 503 before that and while shutting
down). Failed and faulting handler runs are logged (rate-limited) with the
handler's name and source position.

When the node is ready it prints one line to stdout:
  node NAME listening on ADDR id=ID gossip=ADDR metrics=URL`,
		Example: `  naam node --listen 127.0.0.1:7000 --region counters:4K --program counter.nobj
  naam node --listen 127.0.0.1:7001 --gossip 127.0.0.1:7946 --program kv.naam --region kv:64M:nicmem
  naam node --region hot:4K --region cold:4K --program counter.nobj:counters=hot --program counter.nobj:counters=cold
  naam node --listen 127.0.0.1:7002 --join 127.0.0.1:7946 --metrics 127.0.0.1:9100
  naam node --config node.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if err := mergeConfig(cmd, configFile); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runNode(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "JSON file of settings (keys as the flags' names); flags override it")
	fl.StringVar(&f.Name, "name", "", "the node's name in the cluster (default naam-ADDR)")
	fl.StringVar(&f.Listen, "listen", "127.0.0.1:0", "UDP address for active messages")
	fl.StringVar(&f.Advertise, "advertise", "", "IP address other nodes reach this one at (needed with membership when --listen is 0.0.0.0 or [::])")
	fl.Uint32Var(&f.ID, "id", 0, "node id on the wire (default: derived from the name)")
	fl.Uint32Var(&f.Tenant, "tenant", 1, "tenant the node's regions and programs belong to")
	fl.StringVar(&f.SecretFile, "secret-file", "", "file holding the tenant's key (default $NAAM_SECRET, else the development key)")
	fl.IntVar(&f.Queues, "queues", 1, "rx queues (SO_REUSEPORT sockets)")
	fl.StringArrayVar(&f.Programs, "program", nil, "program to install: F.nobj or F.naam, then :OBJREGION=REGION to bind a region (repeatable)")
	fl.StringArrayVar(&f.Regions, "region", nil, "region to register: name:SIZE[:nicmem][:ro] (repeatable)")
	fl.StringVar(&f.Gossip, "gossip", "", "address for cluster membership (memberlist); needed to be joined")
	fl.StringArrayVar(&f.Join, "join", nil, "gossip address of a cluster member to join through (repeatable)")
	fl.StringArrayVar(&f.Peers, "peer", nil, "active-message address of a node to reach without membership (repeatable)")
	fl.StringVar(&f.Metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics")
	fl.StringVar(&f.LogLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&f.LogFormat, "log-format", "text", "text or json (logs go to stderr)")
	fl.StringVar(&f.AddrFile, "addr-file", "", "write the address the node listens on to this file when ready")
	f.xdp.add(fl)
	fl.StringVar(&f.Tier, "tier", "interp", "how host cores run handlers: interp, jit (wasmtime; needs a cgo build) or auto (the JIT once a handler is hot)")
	f.NIC.register(fl, true)
	return cmd
}

// mergeConfig sets, from a JSON file, the flags the command line did not
// set: each key is a flag's name (with _ for -), an array gives a
// repeatable flag its values.
func mergeConfig(cmd *cobra.Command, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + strings.Count(string(b[:se.Offset]), "\n")
			return fmt.Errorf("%s:%d: %v", file, line, err)
		}
		return fmt.Errorf("%s: %v", file, err)
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, key := range names {
		name := strings.ReplaceAll(key, "_", "-")
		fl := cmd.Flags().Lookup(name)
		if fl == nil || name == "config" {
			return fmt.Errorf("%s: unknown field %q", file, key)
		}
		if fl.Changed {
			continue // the command line wins
		}
		var vals []json.RawMessage
		if err := json.Unmarshal(keys[key], &vals); err != nil {
			vals = []json.RawMessage{keys[key]}
		}
		for _, v := range vals {
			var text string
			if err := json.Unmarshal(v, &text); err != nil {
				text = string(v) // a number
			}
			if err := cmd.Flags().Set(name, text); err != nil {
				return fmt.Errorf("%s: %s: %v", file, key, err)
			}
		}
	}
	return nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// readSecret reads the tenant key from file, else $NAAM_SECRET; nil means
// the development key.
func readSecret(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		return []byte(strings.TrimRight(string(b), "\r\n")), nil
	}
	if s := os.Getenv("NAAM_SECRET"); s != "" {
		return []byte(s), nil
	}
	return nil, nil
}

// regionSpec is a parsed --region.
type regionSpec struct {
	name string
	size uint64
	opts host.RegionOptions
}

func parseRegion(s string) (regionSpec, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || parts[0] == "" {
		return regionSpec{}, fmt.Errorf("--region %q: want name:SIZE[:nicmem][:ro]", s)
	}
	size, err := parseSize(parts[1])
	if err != nil {
		return regionSpec{}, fmt.Errorf("--region %q: %v", s, err)
	}
	r := regionSpec{name: parts[0], size: size, opts: host.RegionOptions{Writable: true}}
	for _, p := range parts[2:] {
		switch p {
		case "nicmem":
			r.opts.NICMem = true
		case "ro":
			r.opts.Writable = false
		default:
			return regionSpec{}, fmt.Errorf("--region %q: %q is not nicmem or ro", s, p)
		}
	}
	return r, nil
}

func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n > (1<<32-1)/mult {
		return 0, fmt.Errorf("size %q: want 1 … 4G-1 bytes, e.g. 4096, 64K, 16M", s)
	}
	return n * mult, nil
}

// programSpec is one --program: the file and its region bindings.
type programSpec struct {
	file string
	opts host.InstallOptions
}

// parseProgram reads FILE[:OBJREGION=REGION]...: the suffixes with an =
// are bindings, the rest is the file's name.
func parseProgram(s string) (programSpec, error) {
	parts := strings.Split(s, ":")
	n := len(parts)
	for n > 1 && strings.Contains(parts[n-1], "=") {
		n--
	}
	p := programSpec{file: strings.Join(parts[:n], ":")}
	if p.file == "" {
		return p, fmt.Errorf("--program %q: want FILE[:OBJREGION=REGION]...", s)
	}
	for _, b := range parts[n:] {
		obj, reg, _ := strings.Cut(b, "=")
		if obj == "" || reg == "" {
			return p, fmt.Errorf("--program %q: %q: want OBJREGION=REGION", s, b)
		}
		if _, dup := p.opts.Regions[obj]; dup {
			return p, fmt.Errorf("--program %q: region %s bound twice", s, obj)
		}
		if p.opts.Regions == nil {
			p.opts.Regions = map[string]string{}
		}
		p.opts.Regions[obj] = reg
	}
	return p, nil
}

// healthMux serves the node's metrics at /metrics, 200 "ok" at /healthz
// while the process serves, and at /readyz 200 "ready" once ready is set
// and until the node begins to shut down, 503 and why otherwise.
func healthMux(n *host.Node, ready *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", n.MetricsHandler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		err := n.Ready()
		if err == nil && !ready.Load() {
			err = errors.New("registering regions and installing programs")
		}
		if err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

func runNode(ctx context.Context, stdout, stderr io.Writer, f nodeFlags) error {
	log, err := newLogger(stderr, f.LogLevel, f.LogFormat)
	if err != nil {
		return err
	}
	secret, err := readSecret(f.SecretFile)
	if err != nil {
		return err
	}
	var regions []regionSpec
	for _, s := range f.Regions {
		r, err := parseRegion(s)
		if err != nil {
			return err
		}
		regions = append(regions, r)
	}
	var progs []programSpec
	var objs []*bytecode.Object
	for _, s := range f.Programs {
		p, err := parseProgram(s)
		if err != nil {
			return err
		}
		obj, err := loadObject(stderr, p.file, nil)
		if err != nil {
			return err
		}
		progs = append(progs, p)
		objs = append(objs, obj)
	}
	var ncfg nicrt.Config
	switch f.Tier {
	case "interp", "":
		ncfg.Tier = nicrt.TierInterp
	case "jit":
		ncfg.Tier = nicrt.TierJIT
	case "auto":
		ncfg.Tier = nicrt.TierAuto
	default:
		return fmt.Errorf("--tier %q: want interp, jit or auto", f.Tier)
	}
	f.NIC.apply(&ncfg)
	cfg := host.Config{
		NIC:  ncfg,
		Name: f.Name, Listen: f.Listen, Advertise: f.Advertise, ID: f.ID, Tenant: f.Tenant, Secret: secret, Queues: f.Queues,
		Gossip: f.Gossip, Join: f.Join, Peers: f.Peers, Logger: log,
	}
	if err := f.xdp.apply(&cfg); err != nil {
		return err
	}
	n, err := host.Start(cfg)
	if err != nil {
		return err
	}
	defer n.Close()
	// The metrics listener answers from here on: /healthz says the process
	// serves HTTP, /readyz that the node has its regions and programs and
	// is not shutting down.
	var ready atomic.Bool
	metricsURL := "-"
	if f.Metrics != "" {
		ln, err := net.Listen("tcp", f.Metrics)
		if err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
		srv := &http.Server{Handler: healthMux(n, &ready), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		metricsURL = "http://" + ln.Addr().String() + "/metrics"
	}
	for _, r := range regions {
		if _, err := n.Register(r.name, r.size, r.opts); err != nil {
			return err
		}
	}
	for i, obj := range objs {
		if _, err := n.InstallWith(obj, progs[i].opts); err != nil {
			return fmt.Errorf("%s: %w", progs[i].file, err)
		}
	}
	ready.Store(true)
	gossip := n.GossipAddr()
	if gossip == "" {
		gossip = "-"
	}
	if f.AddrFile != "" {
		if err := os.WriteFile(f.AddrFile, []byte(n.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "node %s listening on %v id=%d gossip=%s metrics=%s\n", n.Name(), n.Addr(), n.ID(), gossip, metricsURL)
	<-ctx.Done()
	log.Info("shutting down", "reason", context.Cause(ctx))
	return n.Close()
}
