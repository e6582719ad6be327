package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/naam-project/naam/nicrt"
)

// Scenario is one simulation: the cluster, the workload, the network and
// what happens when. It is a plain value whose zero fields take the
// defaults their comments name; ReadScenario reads it from JSON (the
// field names are the json tags) and Validate names the field of
// anything wrong with it.
type Scenario struct {
	// Seed seeds every random stream of the run. Default 1.
	Seed uint64 `json:"seed"`
	// Nodes is the number of simulated nodes, 1 … MaxNodes. Default 16.
	Nodes int `json:"nodes"`
	// Messages is the number of operations the clients issue in all.
	// Default 10,000.
	Messages int `json:"messages"`
	// Clients is the number of callers (pure callers, as host.Dial
	// makes), client i beside node i mod Nodes. Default Nodes, at most
	// 4,096.
	Clients int `json:"clients"`
	// Outstanding is each client's operations in flight (closed loop).
	// Default 1.
	Outstanding int `json:"outstanding"`
	// Duration, if set, ends the run at that virtual time even if
	// operations remain.
	Duration Duration `json:"duration"`

	// Caller is where callers run handlers: node (every operation is an
	// active message to its node) or client (the handlers the verifier
	// proved client-eligible run at the caller over one-sided verbs,
	// spec/client.md; the others go to the node). Default node.
	Caller string `json:"caller"`

	Workload   Workload   `json:"workload"`
	NIC        NIC        `json:"nic"`
	Network    Network    `json:"network"`
	Retransmit Retransmit `json:"retransmit"`
	// Events happen at given virtual times, in the order given for one
	// time.
	Events []Event `json:"events"`

	// HotSpots is how many nodes the hot-spot list names. Default 10.
	HotSpots int `json:"hot_spots"`
	// Bin is the width of the placements-over-time series. Default 1ms;
	// a run longer than 2,048 bins doubles it as often as it must.
	Bin Duration `json:"bin"`
}

// MaxNodes bounds Scenario.Nodes.
const MaxNodes = 1 << 20

// maxInFlight bounds the operations in flight (Clients × Outstanding).
const maxInFlight = 1 << 22

// Workload is what the clients do.
type Workload struct {
	// Kind is kv, chase, ledger or shift. Default kv.
	Kind string `json:"kind"`
	// Mix is the YCSB mix of kv: A, B or C. Default B.
	Mix string `json:"mix"`
	// Keys is the key distribution: uniform or zipfian. Default
	// zipfian.
	Keys string `json:"keys"`
	// Records is kv's records, sharded over the nodes by record mod
	// Nodes. Default 16 per node.
	Records int `json:"records"`
	// ValueSize is kv's value bytes, a multiple of 8 in 8 … 256. Default
	// 64.
	ValueSize int `json:"value_size"`
	// Lists and Hops are chase's: lists of Hops elements each on Hops
	// distinct nodes, walked by forward. Defaults 64 and 4 (Hops at most
	// 64, Lists at most 4,096).
	Lists int `json:"lists"`
	Hops  int `json:"hops"`
	// Accounts is ledger's accounts per node, each starting with
	// Balance. Defaults 16 and 1,000,000.
	Accounts int    `json:"accounts"`
	Balance  uint64 `json:"balance"`
}

// NIC is every node's modelled NIC (nicrt.Config's fields of the same
// names; zero takes nicrt's default).
type NIC struct {
	NICCores  int `json:"nic_cores"`
	HostCores int `json:"host_cores"`
	// Placement is auto, nic, host or steer. Default auto; steer for the
	// shift workload.
	Placement string `json:"placement"`
	// HostLoad is every node's host load at the start, 0 … 1.
	HostLoad float64 `json:"host_load"`
	// NICMem puts the workload's regions in nicmem.
	NICMem bool `json:"nicmem"`
	// NICClockHz and HostClockHz are the cores' clocks (nicrt's
	// defaults 2.5 GHz and 3 GHz).
	NICClockHz  float64 `json:"nic_clock_hz"`
	HostClockHz float64 `json:"host_clock_hz"`
}

// Network is the default link and the links that differ from it.
type Network struct {
	// Latency is every link's one-way latency. Default uniform 4µs +
	// [0, 2µs).
	Latency Latency `json:"latency"`
	// BandwidthGbps is each endpoint's port rate. Default nicrt's
	// LinkBitsPerSec (200 Gb/s).
	BandwidthGbps float64 `json:"bandwidth_gbps"`
	// Loss and Duplicate are the chance that a datagram is lost, and
	// that one is delivered twice.
	Loss      float64 `json:"loss"`
	Duplicate float64 `json:"duplicate"`
	// Reply is how a forwarded request's reply reaches a client: relayed
	// back along the chain (relayed, what a pure caller gets: spec/wire.md,
	// No reflection) or direct. Default relayed.
	Reply string `json:"reply"`
	// Links override the default for datagrams from a node in From to a
	// node in To (empty: every node); later rules win. A client's
	// datagrams count as its node's.
	Links []Link `json:"links"`
}

// Link overrides some links' properties; nil fields keep the default.
type Link struct {
	From          NodeSet  `json:"from"`
	To            NodeSet  `json:"to"`
	Latency       *Latency `json:"latency"`
	BandwidthGbps float64  `json:"bandwidth_gbps"`
	Loss          *float64 `json:"loss"`
	Duplicate     *float64 `json:"duplicate"`
}

// Latency is a one-way latency distribution: Base plus a draw of Dist
// with scale Jitter: constant (none), uniform [0, Jitter), exponential
// (mean Jitter), normal (|N(0, Jitter)|), lognormal (median Jitter, σ
// 1/2).
type Latency struct {
	Dist   string   `json:"dist"`
	Base   Duration `json:"base"`
	Jitter Duration `json:"jitter"`
}

// Retransmission is the caller's schedule (spec/nic.md, The requester;
// defaults nicrt/caller's): the first try waits srtt + 4·rttvar, or
// Timeout before a sample, within [MinTimeout, MaxTimeout]; each retry
// doubles the wait up to MaxTimeout; after MaxTries sends the operation
// fails.
type Retransmit struct {
	Timeout    Duration `json:"timeout"`
	MinTimeout Duration `json:"min_timeout"`
	MaxTimeout Duration `json:"max_timeout"`
	MaxTries   int      `json:"max_tries"`
}

// Event is something that happens at virtual time At: fail (the nodes
// stop: queued work and in-flight datagrams to them are lost), restart
// (they come back empty: regions reloaded, windows and reply caches
// lost), partition (Groups cannot reach each other; nodes in no group
// form one more), heal, host_load (HostLoad on the nodes).
type Event struct {
	At       Duration  `json:"at"`
	Kind     string    `json:"kind"`
	Nodes    NodeSet   `json:"nodes"`
	Groups   []NodeSet `json:"groups"`
	HostLoad float64   `json:"host_load"`
}

// Duration is a time.Duration written as a string ("250us", "10ms") in
// JSON.
type Duration time.Duration

// UnmarshalJSON reads a duration string, or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a duration such as \"10ms\", have %s", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"10ms\", have %q", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration's string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// NodeSet is a set of node indices (0 … Nodes−1), written as a JSON array
// of numbers and "lo-hi" ranges: [0, 3, "10-19"].
type NodeSet []NodeRange

// NodeRange is the nodes Lo … Hi.
type NodeRange struct{ Lo, Hi int }

// UnmarshalJSON reads the array.
func (s *NodeSet) UnmarshalJSON(b []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return fmt.Errorf("want an array of node numbers and \"lo-hi\" ranges, have %s", b)
	}
	out := make(NodeSet, 0, len(items))
	for i, it := range items {
		var n int
		if err := json.Unmarshal(it, &n); err == nil {
			out = append(out, NodeRange{n, n})
			continue
		}
		var str string
		if err := json.Unmarshal(it, &str); err != nil {
			return fmt.Errorf("[%d]: want a node number or a \"lo-hi\" range, have %s", i, it)
		}
		r, err := ParseNodeRange(str)
		if err != nil {
			return fmt.Errorf("[%d]: %v", i, err)
		}
		out = append(out, r)
	}
	*s = out
	return nil
}

// MarshalJSON writes the array.
func (s NodeSet) MarshalJSON() ([]byte, error) {
	items := make([]any, len(s))
	for i, r := range s {
		if r.Lo == r.Hi {
			items[i] = r.Lo
		} else {
			items[i] = fmt.Sprintf("%d-%d", r.Lo, r.Hi)
		}
	}
	return json.Marshal(items)
}

// ParseNodeRange reads "n" or "lo-hi".
func ParseNodeRange(s string) (NodeRange, error) {
	lo, hi, found := strings.Cut(s, "-")
	a, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil {
		return NodeRange{}, fmt.Errorf("%q is not a node number or a \"lo-hi\" range", s)
	}
	b := a
	if found {
		if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
			return NodeRange{}, fmt.Errorf("%q is not a node number or a \"lo-hi\" range", s)
		}
	}
	return NodeRange{a, b}, nil
}

// ParseNodeSet reads a comma-separated list of numbers and ranges
// ("0-9,20"), as the flags take it.
func ParseNodeSet(s string) (NodeSet, error) {
	var out NodeSet
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := ParseNodeRange(part)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (s NodeSet) check(path string, nodes int) error {
	for i, r := range s {
		if r.Lo < 0 || r.Hi < r.Lo || r.Hi >= nodes {
			return fmt.Errorf("%s[%d]: %d-%d is not a range of nodes 0 … %d", path, i, r.Lo, r.Hi, nodes-1)
		}
	}
	return nil
}

// each calls f for every node of s, in order (a node listed twice, twice).
func (s NodeSet) each(f func(int)) {
	for _, r := range s {
		for n := r.Lo; n <= r.Hi; n++ {
			f(n)
		}
	}
}

// ReadScenario reads a scenario from JSON; an unknown field or a value of
// the wrong kind is an error naming its path.
func ReadScenario(b []byte) (Scenario, error) {
	var s Scenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return s, fmt.Errorf("scenario: %s: want %s, have %s", te.Field, te.Type, te.Value)
		default:
			return s, fmt.Errorf("scenario: %w", err)
		}
	}
	if dec.More() {
		return s, errors.New("scenario: more than one JSON value")
	}
	return s, nil
}

// Workload kinds.
const (
	KindKV     = "kv"
	KindChase  = "chase"
	KindLedger = "ledger"
	KindShift  = "shift"
)

// withDefaults fills the zero fields.
func (s Scenario) withDefaults() Scenario {
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	set(&s.Nodes, 16)
	set(&s.Messages, 10_000)
	set(&s.Clients, min(s.Nodes, 4096))
	set(&s.Outstanding, 1)
	set(&s.HotSpots, 10)
	if s.Caller == "" {
		s.Caller = "node"
	}
	if s.Bin == 0 {
		s.Bin = Duration(time.Millisecond)
	}
	w := &s.Workload
	if w.Kind == "" {
		w.Kind = KindKV
	}
	if w.Mix == "" {
		w.Mix = "B"
	}
	if w.Keys == "" {
		w.Keys = "zipfian"
	}
	set(&w.Records, 16*s.Nodes)
	set(&w.ValueSize, 64)
	set(&w.Lists, 64)
	set(&w.Hops, 4)
	set(&w.Accounts, 16)
	if w.Balance == 0 {
		w.Balance = 1_000_000
	}
	if s.NIC.Placement == "" {
		s.NIC.Placement = "auto"
		if w.Kind == KindShift {
			s.NIC.Placement = "steer"
		}
	}
	n := &s.Network
	if n.Latency == (Latency{}) {
		n.Latency = Latency{Dist: "uniform", Base: Duration(4 * time.Microsecond), Jitter: Duration(2 * time.Microsecond)}
	}
	if n.Latency.Dist == "" {
		n.Latency.Dist = "constant"
	}
	if n.Reply == "" {
		n.Reply = "relayed"
	}
	for i := range n.Links {
		if l := n.Links[i].Latency; l != nil && l.Dist == "" {
			c := *l
			c.Dist = "constant"
			n.Links[i].Latency = &c
		}
	}
	r := &s.Retransmit
	if r.Timeout == 0 {
		r.Timeout = Duration(20 * time.Millisecond)
	}
	if r.MinTimeout == 0 {
		r.MinTimeout = Duration(5 * time.Millisecond)
	}
	if r.MaxTimeout == 0 {
		r.MaxTimeout = Duration(100 * time.Millisecond)
	}
	set(&r.MaxTries, 8)
	return s
}

// Validate reports the first thing wrong with s (after its defaults),
// naming the field's JSON path.
func (s Scenario) Validate() error {
	s = s.withDefaults()
	_, err := s.check()
	return err
}

func chance(path string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("%s: %v is not a probability in [0, 1]", path, p)
	}
	return nil
}

// check validates s, which has its defaults, and returns the NIC model's
// configuration.
func (s Scenario) check() (nicrt.Config, error) {
	var cfg nicrt.Config
	switch {
	case s.Nodes < 1 || s.Nodes > MaxNodes:
		return cfg, fmt.Errorf("nodes: %d is not in 1 … %d", s.Nodes, MaxNodes)
	case s.Messages < 1:
		return cfg, fmt.Errorf("messages: %d must be at least 1", s.Messages)
	case s.Clients < 1 || s.Clients > 1<<20:
		return cfg, fmt.Errorf("clients: %d is not in 1 … %d", s.Clients, 1<<20)
	case s.Outstanding < 1 || s.Outstanding > 256:
		return cfg, fmt.Errorf("outstanding: %d is not in 1 … 256 (a caller's MaxOutstanding)", s.Outstanding)
	case s.Clients*s.Outstanding > maxInFlight:
		return cfg, fmt.Errorf("outstanding: %d clients × %d is more than %d operations in flight", s.Clients, s.Outstanding, maxInFlight)
	case s.Duration < 0:
		return cfg, fmt.Errorf("duration: %v must not be negative", time.Duration(s.Duration))
	case s.HotSpots < 0:
		return cfg, fmt.Errorf("hot_spots: %d must not be negative", s.HotSpots)
	case s.Bin < Duration(time.Microsecond):
		return cfg, fmt.Errorf("bin: %v must be at least 1µs", time.Duration(s.Bin))
	}
	if s.Caller != "node" && s.Caller != "client" {
		return cfg, fmt.Errorf("caller: %q is not node or client", s.Caller)
	}
	w := s.Workload
	switch w.Kind {
	case KindKV, KindChase, KindLedger, KindShift:
	default:
		return cfg, fmt.Errorf("workload.kind: %q is not kv, chase, ledger or shift", w.Kind)
	}
	switch w.Mix {
	case "A", "B", "C", "a", "b", "c":
	default:
		return cfg, fmt.Errorf("workload.mix: %q is not A, B or C", w.Mix)
	}
	switch w.Keys {
	case "uniform", "zipfian":
	default:
		return cfg, fmt.Errorf("workload.keys: %q is not uniform or zipfian", w.Keys)
	}
	switch {
	case w.Records < 1 || w.Records > 1<<26:
		return cfg, fmt.Errorf("workload.records: %d is not in 1 … %d", w.Records, 1<<26)
	case w.ValueSize < 8 || w.ValueSize > 256 || w.ValueSize%8 != 0:
		return cfg, fmt.Errorf("workload.value_size: %d is not a multiple of 8 in 8 … 256", w.ValueSize)
	case w.Hops < 1 || w.Hops > 64:
		return cfg, fmt.Errorf("workload.hops: %d is not in 1 … 64", w.Hops)
	case w.Kind == KindChase && w.Hops > s.Nodes:
		return cfg, fmt.Errorf("workload.hops: %d hops need as many nodes, there are %d", w.Hops, s.Nodes)
	case w.Lists < 1 || w.Lists > 4096:
		return cfg, fmt.Errorf("workload.lists: %d is not in 1 … 4096", w.Lists)
	case w.Accounts < 2 || w.Accounts > 1<<16:
		return cfg, fmt.Errorf("workload.accounts: %d is not in 2 … 65536", w.Accounts)
	case w.Balance > 1<<40:
		return cfg, fmt.Errorf("workload.balance: %d is more than 2^40", w.Balance)
	case w.Kind == KindLedger && s.Nodes < 2:
		return cfg, errors.New("nodes: the ledger workload needs at least 2 nodes")
	}
	pol, err := nicrt.ParsePlacementPolicy(s.NIC.Placement)
	if err != nil {
		return cfg, fmt.Errorf("nic.placement: %q is not auto, nic, host or steer", s.NIC.Placement)
	}
	switch {
	case s.NIC.NICCores < 0 || s.NIC.NICCores > 256:
		return cfg, fmt.Errorf("nic.nic_cores: %d is not in 0 … 256 (0: nicrt's default)", s.NIC.NICCores)
	case s.NIC.HostCores < -1 || s.NIC.HostCores > 256:
		return cfg, fmt.Errorf("nic.host_cores: %d is not in -1 … 256 (0: nicrt's default, -1: none)", s.NIC.HostCores)
	}
	if math.IsNaN(s.NIC.HostLoad) || s.NIC.HostLoad < 0 || s.NIC.HostLoad > 1 {
		return cfg, fmt.Errorf("nic.host_load: %v is not in [0, 1]", s.NIC.HostLoad)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"nic_clock_hz", s.NIC.NICClockHz}, {"host_clock_hz", s.NIC.HostClockHz}} {
		if math.IsNaN(c.v) || c.v < 0 || (c.v > 0 && c.v < 1e6) || c.v > 1e11 {
			return cfg, fmt.Errorf("nic.%s: %v is not 0 (the default) or a clock in 1 MHz … 100 GHz", c.name, c.v)
		}
	}
	cfg = nicrt.Config{NICCores: s.NIC.NICCores, HostCores: s.NIC.HostCores, Placement: pol, HostLoad: s.NIC.HostLoad, Paced: true,
		NICClockHz: s.NIC.NICClockHz, HostClockHz: s.NIC.HostClockHz}
	if s.Network.BandwidthGbps != 0 {
		cfg.LinkBitsPerSec = s.Network.BandwidthGbps * 1e9
	}
	if _, err := nicrt.NewCostModel(cfg); err != nil {
		return cfg, fmt.Errorf("nic: %w", err)
	}
	n := s.Network
	if err := n.Latency.check("network.latency"); err != nil {
		return cfg, err
	}
	if math.IsNaN(n.BandwidthGbps) || n.BandwidthGbps < 0 {
		return cfg, fmt.Errorf("network.bandwidth_gbps: %v must not be negative", n.BandwidthGbps)
	}
	if err := chance("network.loss", n.Loss); err != nil {
		return cfg, err
	}
	if err := chance("network.duplicate", n.Duplicate); err != nil {
		return cfg, err
	}
	if n.Reply != "relayed" && n.Reply != "direct" {
		return cfg, fmt.Errorf("network.reply: %q is not relayed or direct", n.Reply)
	}
	for i, l := range n.Links {
		p := fmt.Sprintf("network.links[%d]", i)
		if err := l.From.check(p+".from", s.Nodes); err != nil {
			return cfg, err
		}
		if err := l.To.check(p+".to", s.Nodes); err != nil {
			return cfg, err
		}
		if l.Latency != nil {
			if err := l.Latency.check(p + ".latency"); err != nil {
				return cfg, err
			}
		}
		if math.IsNaN(l.BandwidthGbps) || l.BandwidthGbps < 0 {
			return cfg, fmt.Errorf("%s.bandwidth_gbps: %v must not be negative", p, l.BandwidthGbps)
		}
		if l.Loss != nil {
			if err := chance(p+".loss", *l.Loss); err != nil {
				return cfg, err
			}
		}
		if l.Duplicate != nil {
			if err := chance(p+".duplicate", *l.Duplicate); err != nil {
				return cfg, err
			}
		}
	}
	r := s.Retransmit
	switch {
	case r.Timeout < 0 || r.MinTimeout < 0 || r.MaxTimeout < 0:
		return cfg, errors.New("retransmit: timeouts must not be negative")
	case r.MinTimeout > r.MaxTimeout:
		return cfg, fmt.Errorf("retransmit.min_timeout: %v is above max_timeout %v", time.Duration(r.MinTimeout), time.Duration(r.MaxTimeout))
	case r.MaxTries < 1 || r.MaxTries > 64:
		return cfg, fmt.Errorf("retransmit.max_tries: %d is not in 1 … 64", r.MaxTries)
	}
	for i, e := range s.Events {
		p := fmt.Sprintf("events[%d]", i)
		if e.At < 0 {
			return cfg, fmt.Errorf("%s.at: %v must not be negative", p, time.Duration(e.At))
		}
		switch e.Kind {
		case "fail", "restart", "host_load":
			if len(e.Nodes) == 0 {
				return cfg, fmt.Errorf("%s.nodes: a %s event names its nodes", p, e.Kind)
			}
		case "partition":
			if len(e.Groups) == 0 {
				return cfg, fmt.Errorf("%s.groups: a partition names at least one group", p)
			}
		case "heal":
		default:
			return cfg, fmt.Errorf("%s.kind: %q is not fail, restart, partition, heal or host_load", p, e.Kind)
		}
		if err := e.Nodes.check(p+".nodes", s.Nodes); err != nil {
			return cfg, err
		}
		for j, g := range e.Groups {
			if err := g.check(fmt.Sprintf("%s.groups[%d]", p, j), s.Nodes); err != nil {
				return cfg, err
			}
		}
		if len(e.Groups) > 1<<15 {
			return cfg, fmt.Errorf("%s.groups: at most %d groups", p, 1<<15)
		}
		if math.IsNaN(e.HostLoad) || e.HostLoad < 0 || e.HostLoad > 1 {
			return cfg, fmt.Errorf("%s.host_load: %v is not in [0, 1]", p, e.HostLoad)
		}
	}
	return cfg, nil
}

func (l Latency) check(path string) error {
	switch l.Dist {
	case "constant", "uniform", "exponential", "normal", "lognormal":
	default:
		return fmt.Errorf("%s.dist: %q is not constant, uniform, exponential, normal or lognormal", path, l.Dist)
	}
	if l.Base < 0 || l.Jitter < 0 {
		return fmt.Errorf("%s: base and jitter must not be negative", path)
	}
	if l.Base > Duration(10*time.Second) || l.Jitter > Duration(10*time.Second) {
		return fmt.Errorf("%s: base and jitter must be at most 10s", path)
	}
	return nil
}
