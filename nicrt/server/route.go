package server

import (
	"errors"
	"fmt"
	"maps"

	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// ErrUnknownNode is what send and forward over the network refuse with
// (the helpers return -1; the server counts them) when the server has no
// address for the node (SetPeer, ServerConfig.Peers), or the id does not
// fit 32 bits.
var ErrUnknownNode = errors.New("server: no address for the node")

// SetPeer makes node reachable at addr for what handlers send and
// forward, replacing any address it had. Safe for concurrent use; the
// host library feeds it from its membership.
func (s *Server) SetPeer(node uint32, addr transport.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("server: set peer %d: invalid address %v", node, addr)
	}
	s.editBook(func(m map[uint32]transport.Addr) { m[node] = addr })
	return nil
}

// RemovePeer forgets node's address: sends and forwards to it are refused
// (ErrUnknownNode) from now on.
func (s *Server) RemovePeer(node uint32) {
	s.editBook(func(m map[uint32]transport.Addr) { delete(m, node) })
}

// Peer returns node's address, if the server has one.
func (s *Server) Peer(node uint32) (transport.Addr, bool) {
	a, ok := (*s.book.Load())[node]
	return a, ok
}

// editBook changes a copy of the address book and publishes it.
func (s *Server) editBook(edit func(map[uint32]transport.Addr)) {
	s.bookMu.Lock()
	defer s.bookMu.Unlock()
	m := maps.Clone(*s.book.Load())
	edit(m)
	s.book.Store(&m)
}

// forwardReplyTo says where the reply to a request forwarded for src
// goes (spec/wire.md, Routing: no reflection). The reply address in the
// prefix is taken only if it is src's own in the address book: the
// caller is a node this one knows there. Otherwise the reply goes back
// where the forward came from, as any reply does, and relay is set: the
// forwarding node passes it on to the caller, whose request it received
// itself. So a request never makes this node send to an address it has
// neither in its address book nor heard the request from, however the
// prefix was written.
func (s *Server) forwardReplyTo(src uint32, route *wire.Route, from transport.Addr) (to transport.Addr, relay bool) {
	if a, known := s.Peer(src); known && sameAddr(a, route.ReplyTo) {
		return a, false
	}
	return from, true
}

// sameAddr compares addresses with IPv4-mapped IPv6 taken as IPv4.
func sameAddr(a, b transport.Addr) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// isRelay reports whether pkt is a reply that a node this one forwarded a
// request to sent here to be passed on to the caller (FlagForwarded on a
// reply; spec/wire.md, Routing).
func isRelay(pkt *wire.Packet) bool {
	return (pkt.Type == wire.TypeReply || pkt.Type == wire.TypeErrorReply) &&
		pkt.Flags&(wire.FlagForwarded|wire.FlagProgram|wire.FlagOneWay) == wire.FlagForwarded
}

// relay passes a relayed reply (dgram, as it came: sealed by the node
// that answered) on to where this node would have answered the request:
// the caller that sent it, or the node that forwarded it here. It goes
// only where a request of the reply's caller, tenant and id is in this
// node's reply cache as forwarded, and to the address that forward's own
// prefix names; anything else is dropped (relay_unmatched), so a reply
// sent here cannot make this node send to a stranger either. The slot
// stays forwarded: a retransmission of the caller's is forwarded again,
// and the answering node answers it from its own cache.
func (q *rxQueue) relay(pkt *wire.Packet, dgram []byte) {
	s := q.s
	// The caller's own request first; then the ones each node forwarded
	// here for it (a chain of forwards), known here or not.
	to, ok := q.forwardedTo(peerKey{src: pkt.Dst, tenant: pkt.Tenant}, pkt.RequestID)
	if !ok {
		for _, node := range s.forwarders(pkt.Dst, pkt.Tenant) {
			key := peerKey{src: pkt.Dst, tenant: pkt.Tenant, via: node, kind: peerForwarded}
			if to, ok = q.forwardedTo(key, pkt.RequestID); ok {
				break
			}
		}
	}
	if !ok {
		s.ctr.relayUnmatched.Add(1)
		return
	}
	q.tx.Push(to, append(q.tx.Buffer(), dgram...))
	s.ctr.relayed.Add(1)
}

// forwardedTo returns the reply address of request id of key's peer if
// this node forwarded it and keeps the forward (its prefix names the
// address).
func (q *rxQueue) forwardedTo(key peerKey, id uint64) (transport.Addr, bool) {
	s := q.s
	s.peersMu.RLock()
	pr := s.peers[key]
	s.peersMu.RUnlock()
	if pr == nil {
		return transport.Addr{}, false
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	slot := pr.cached(id)
	if slot == nil || slot.id != id || slot.state != slotForwarded || len(slot.dgram) == 0 {
		return transport.Addr{}, false
	}
	fwd, err := wire.Parse(slot.dgram, q.codec.MaxPayload()) // sealed here: it parses
	if err != nil {
		return transport.Addr{}, false
	}
	route, _, err := wire.SplitRoute(&fwd)
	if err != nil || !route.Forwarded {
		return transport.Addr{}, false
	}
	return route.ReplyTo, true
}

// resolveProgram maps a program-relative handler (the object's id) to the
// node-wide id; 0 (no handler) when the program or handler is unknown.
func (s *Server) resolveProgram(tenant, digest uint64, objectID uint32) uint32 {
	p, ok := s.nic.ProgramByDigest(tenant, digest)
	if !ok {
		return 0
	}
	id, _ := p.ResolveLocal(objectID)
	return id
}

// resolve maps a node id as a handler passed it to an address.
func (s *Server) resolve(node uint64) (uint32, transport.Addr, error) {
	if node > 1<<32-1 {
		return 0, transport.Addr{}, fmt.Errorf("%w: node %d does not fit 32 bits", ErrUnknownNode, node)
	}
	a, ok := s.Peer(uint32(node))
	if !ok {
		return 0, a, fmt.Errorf("%w: node %d", ErrUnknownNode, node)
	}
	return uint32(node), a, nil
}

// seal encodes h with the route prefixes and body into a buffer of tx.
func (s *Server) seal(tx *transport.TxQueue, h *wire.Header, route *wire.Route, body []byte) ([]byte, error) {
	b := tx.Buffer()
	// Build the payload where Encode puts it, so that it is not copied
	// twice (it moves if it outgrows the buffer; Encode then copies it).
	payload := wire.AppendRoute(b[wire.HeaderSize:wire.HeaderSize], route)
	payload = append(payload, body...)
	codec := s.sealers.Get().(*wire.Codec)
	out, err := codec.Encode(b, h, payload)
	s.sealers.Put(codec)
	return out, err
}

// Send is the request's Outbox (the NIC calls it on the core running the
// handler): a one-way, program-relative request to handler (the id in the
// sender's object) of the same program on node. At most once, and it may
// be lost: nothing retransmits it and nothing answers it.
func (in *inflight) Send(from nicrt.Origin, node uint64, handler uint32, payload []byte) error {
	s := in.s
	err := s.sendErr(from, node, handler, payload)
	if err != nil {
		s.ctr.sendsRefused.Add(1)
		if errors.Is(err, ErrUnknownNode) {
			s.ctr.unknownNode.Add(1)
		}
		return err
	}
	s.ctr.sends.Add(1)
	return nil
}

func (s *Server) sendErr(from nicrt.Origin, node uint64, handler uint32, payload []byte) error {
	dst, to, err := s.resolve(node)
	if err != nil {
		return err
	}
	if from.Program == nil || from.Tenant > 1<<32-1 {
		return fmt.Errorf("server: send: tenant %d or program cannot travel", from.Tenant)
	}
	route := wire.Route{HasProgram: true, Program: from.Program.Digest}
	h := wire.Header{
		Type: wire.TypeRequest, Flags: wire.FlagOneWay | wire.RouteFlags(&route),
		Tenant: uint32(from.Tenant), Handler: handler, RequestID: s.sendID.Add(1),
		Src: s.cfg.Node, Dst: dst,
	}
	tx := s.queues[0].tx
	b, err := s.seal(tx, &h, &route, payload)
	if err != nil {
		return fmt.Errorf("server: send: %w", err)
	}
	tx.Push(to, b)
	return nil
}

// Forward is the request's Outbox: it seals the request being run for
// handler (the id in the object) of the same program on node, keeping its
// tenant, source node and request id, with the original caller's reply
// address; Done sends it and keeps it for the caller's retransmissions.
func (in *inflight) Forward(from nicrt.Origin, req *nicrt.Message, node uint64, handler uint32) error {
	s := in.s
	err := s.forwardErr(in, from, req, node, handler)
	if err != nil {
		s.ctr.forwardsRefused.Add(1)
		if errors.Is(err, ErrUnknownNode) {
			s.ctr.unknownNode.Add(1)
		}
		return err
	}
	s.ctr.forwards.Add(1)
	return nil
}

func (s *Server) forwardErr(in *inflight, from nicrt.Origin, req *nicrt.Message, node uint64, handler uint32) error {
	if in.oneway {
		return errors.New("server: forward: a one-way message has no caller to answer")
	}
	if in.hdr.Type != wire.TypeRequest || from.Program == nil {
		return errors.New("server: forward: not a handler's request")
	}
	dst, to, err := s.resolve(node)
	if err != nil {
		return err
	}
	route := wire.Route{Forwarded: true, Via: s.cfg.Node, ReplyTo: in.addr, HasProgram: true, Program: from.Program.Digest}
	h := wire.Header{
		// The retransmit flag goes on: the next node's reply must tell
		// the caller whether its first try ran (repeatFlag).
		Type: wire.TypeRequest, Flags: wire.RouteFlags(&route) | repeatFlag(&in.hdr),
		Tenant: in.hdr.Tenant, Handler: handler, RequestID: in.hdr.RequestID,
		Src: in.hdr.Src, Dst: dst,
	}
	b, err := s.seal(in.q.tx, &h, &route, req.Payload)
	if err != nil {
		return fmt.Errorf("server: forward: %w", err)
	}
	in.fwd, in.fwdTo = b, to
	return nil
}
