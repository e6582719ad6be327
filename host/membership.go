package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/naam-project/naam/bytecode"
)

// Member is a node of the cluster as membership sees it.
type Member struct {
	Name     string
	ID       uint32         // node id on the wire
	Addr     netip.AddrPort // where its active messages go
	Gossip   string         // its membership address
	Programs []string       // source names of its installed programs
	State    string         // alive, suspect, dead or left
}

// meta is what a node gossips about itself: memberlist's node metadata,
// msgpack, at most memberlist.MetaMaxSize bytes.
type meta struct {
	ID       uint32   `msgpack:"id"`
	Addr     string   `msgpack:"addr"`
	Programs []string `msgpack:"programs"`
	More     int      `msgpack:"more"` // programs left out to fit
}

type metaState struct {
	mu sync.Mutex
	b  []byte
}

func (n *Node) encodeMeta() []byte {
	m := meta{ID: n.cfg.ID, Addr: n.advertise.String()}
	seen := map[string]bool{}
	for _, p := range n.nic.Programs(uint64(n.tenant)) {
		name := bytecode.ProgramName(p.Source)
		if !seen[name] {
			seen[name] = true
			m.Programs = append(m.Programs, name)
		}
	}
	sort.Strings(m.Programs)
	for {
		b, err := msgpack.Marshal(&m)
		if err == nil && len(b) <= memberlist.MetaMaxSize {
			return b
		}
		if len(m.Programs) == 0 { // cannot happen: id and address fit
			return nil
		}
		m.Programs = m.Programs[:len(m.Programs)-1]
		m.More++
	}
}

func decodeMeta(b []byte) (meta, error) {
	var m meta
	if err := msgpack.Unmarshal(b, &m); err != nil {
		return meta{}, fmt.Errorf("host: member metadata: %w", err)
	}
	return m, nil
}

// updateMeta gossips the node's programs after an install or uninstall,
// if they changed.
func (n *Node) updateMeta() {
	if n.ml == nil {
		return
	}
	b := n.encodeMeta()
	n.meta.mu.Lock()
	same := bytes.Equal(b, n.meta.b)
	n.meta.b = b
	n.meta.mu.Unlock()
	if same {
		return
	}
	if err := n.ml.UpdateNode(2 * time.Second); err != nil {
		n.log.Warn("gossiping the node's programs", "err", err)
	}
}

// watchPrograms gossips changes that peers made over the wire (install
// and uninstall control ops) which the node learns of only by looking.
func (n *Node) watchPrograms() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-n.stopWatch:
			return
		case <-t.C:
			n.updateMeta()
		}
	}
}

// delegate gives memberlist the node's metadata; events hears of members
// joining and leaving.
type delegate struct{ n *Node }

func (d delegate) NodeMeta(limit int) []byte {
	d.n.meta.mu.Lock()
	defer d.n.meta.mu.Unlock()
	if len(d.n.meta.b) > limit {
		return nil
	}
	return d.n.meta.b
}
func (delegate) NotifyMsg([]byte)                           {}
func (delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (delegate) LocalState(join bool) []byte                { return nil }
func (delegate) MergeRemoteState(buf []byte, join bool)     {}

type events struct{ n *Node }

// The events run under memberlist's lock on its node table, so they copy
// what they need into the node's own table: reading memberlist's nodes
// later, outside that lock, would race with its updates.

func (e events) NotifyJoin(m *memberlist.Node) {
	e.n.log.Info("member joined", "member", m.Name, "gossip", m.Address())
	e.n.setMember(m)
}

func (e events) NotifyUpdate(m *memberlist.Node) {
	e.n.log.Debug("member updated", "member", m.Name)
	e.n.setMember(m)
}

func (n *Node) setMember(m *memberlist.Node) {
	mb := Member{Name: m.Name, Gossip: m.Address(), State: stateName(m.State)}
	if md, err := decodeMeta(m.Meta); err == nil {
		mb.ID, mb.Programs = md.ID, md.Programs
		mb.Addr, _ = netip.ParseAddrPort(md.Addr)
	}
	n.membersMu.Lock()
	n.members[m.Name] = mb
	n.membersMu.Unlock()
	n.route(mb.ID, mb.Addr)
}

// route tells the server where node id is, for what handlers send and
// forward.
func (n *Node) route(id uint32, addr netip.AddrPort) {
	if id == 0 || id == n.cfg.ID || !addr.IsValid() {
		return
	}
	if err := n.srv.SetPeer(id, addr); err != nil {
		n.log.Warn("routing to a node", "id", id, "addr", addr.String(), "err", err)
	}
}

// NotifyLeave takes the member's peer down: its calls in flight end with
// ErrPeerDown now rather than at their timeout, and the next Dial makes a
// new peer (the node may come back).
func (e events) NotifyLeave(m *memberlist.Node) {
	e.n.log.Warn("member left or failed", "member", m.Name, "gossip", m.Address())
	e.n.membersMu.Lock()
	delete(e.n.members, m.Name)
	e.n.membersMu.Unlock()
	md, err := decodeMeta(m.Meta)
	if err != nil {
		return
	}
	ap, err := netip.ParseAddrPort(md.Addr)
	if err != nil {
		return
	}
	n := e.n
	if md.ID != 0 && md.ID != n.cfg.ID {
		n.srv.RemovePeer(md.ID)
	}
	n.mu.Lock()
	p := n.peers[ap]
	if p != nil {
		delete(n.peers, ap)
	}
	n.mu.Unlock()
	if p != nil {
		go p.MarkDown() // not on memberlist's goroutine: closing waits
	}
}

func (n *Node) startMembership(secret []byte) error {
	gossip := n.cfg.Gossip
	if gossip == "" {
		gossip = "127.0.0.1:0"
	}
	host, portS, err := net.SplitHostPort(gossip)
	if err != nil {
		return fmt.Errorf("host: gossip address %q: %w", gossip, err)
	}
	port, err := strconv.Atoi(portS)
	if err != nil {
		return fmt.Errorf("host: gossip address %q: bad port", gossip)
	}
	n.meta = &metaState{}
	n.members = map[string]Member{}
	n.meta.b = n.encodeMeta()
	mc := memberlist.DefaultLocalConfig()
	mc.Name = n.cfg.Name
	mc.BindAddr, mc.BindPort = host, port
	mc.AdvertisePort = port
	mc.SecretKey = gossipKey(secret)
	// A node that died may come back under its name at a new address (a
	// restarted process on another port) once it has been dead a moment.
	mc.DeadNodeReclaimTime = 100 * time.Millisecond
	// A program installed over the wire is one metadata broadcast, and the
	// local config sends each broadcast to only 2 of the members: one can
	// miss it until a full state sync, which comes every 15 s after a
	// random first delay of up to 15 s. Four transmissions (memberlist's
	// LAN figure) and a sync every 5 s (memberlist scales that up with the
	// cluster's size) bound the wait to about 10 s.
	mc.RetransmitMult = 4
	mc.PushPullInterval = 5 * time.Second
	mc.Delegate = delegate{n}
	mc.Events = events{n}
	mc.Logger = slog.NewLogLogger(n.log.Handler(), slog.LevelDebug)
	ml, err := memberlist.Create(mc)
	if err != nil {
		return fmt.Errorf("host: membership on %s: %w", gossip, err)
	}
	n.ml = ml
	n.stopWatch = make(chan struct{})
	n.watchDone = make(chan struct{})
	go func() {
		defer close(n.watchDone)
		n.watchPrograms()
	}()
	if len(n.cfg.Join) > 0 {
		joined, err := ml.Join(n.cfg.Join)
		if joined == 0 {
			close(n.stopWatch)
			<-n.watchDone
			ml.Shutdown()
			n.ml = nil
			return fmt.Errorf("host: join %v: %w", n.cfg.Join, err)
		}
		n.log.Info("joined the cluster", "seeds", n.cfg.Join, "reached", joined)
	}
	return nil
}

func (n *Node) stopMembership() error {
	close(n.stopWatch)
	<-n.watchDone
	if n.mlDown {
		return nil
	}
	if err := n.ml.Leave(time.Second); err != nil {
		n.log.Warn("leaving the cluster", "err", err)
	}
	return n.ml.Shutdown()
}

// GossipAddr is the address membership listens on ("" without
// membership): what other nodes Join.
func (n *Node) GossipAddr() string {
	if n.ml == nil {
		return ""
	}
	ln := n.ml.LocalNode()
	return net.JoinHostPort(ln.Addr.String(), strconv.Itoa(int(ln.Port)))
}

// Members lists the cluster's members that are alive or suspected, this
// node among them, by name. Without membership it is this node alone.
func (n *Node) Members() []Member {
	if n.ml == nil {
		return []Member{{Name: n.cfg.Name, ID: n.cfg.ID, Addr: n.advertise, State: "alive", Programs: n.programNames()}}
	}
	var out []Member
	n.membersMu.Lock()
	for _, m := range n.members {
		out = append(out, m)
	}
	n.membersMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (n *Node) programNames() []string {
	md, _ := decodeMeta(n.encodeMeta())
	return md.Programs
}

func stateName(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return "unknown"
}

// Peer returns the peer called name: a member of the cluster, or, for a
// name that is an address ("127.0.0.1:7000", "node1.example:7000"), the
// node there.
func (n *Node) Peer(ctx context.Context, name string) (*Peer, error) {
	for _, m := range n.Members() {
		if m.Name == name {
			if !m.Addr.IsValid() {
				return nil, fmt.Errorf("host: member %q gossips no address", name)
			}
			return n.dial(ctx, m.Addr)
		}
	}
	if _, _, err := net.SplitHostPort(name); err == nil {
		return n.Dial(ctx, name)
	}
	var names []string
	for _, m := range n.Members() {
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("host: no member called %q (members: %s): %w", name, strings.Join(names, ", "), ErrNoMember)
}

// ErrNoMember: no member of the cluster has that name.
var ErrNoMember = errors.New("host: not in the cluster")
