package nicrt

import (
	"errors"
	"fmt"
	"maps"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// Errors of send and forward over the network (the helpers return -1;
// the server counts them).
var (
	// ErrUnknownNode: the server has no address for the node (SetPeer,
	// ServerConfig.Peers), or the id does not fit 32 bits.
	ErrUnknownNode = errors.New("nicrt: no address for the node")
	// ErrNotFromNetwork: forward of a message that did not come over the
	// wire (NIC.Submit): there is no caller to answer.
	ErrNotFromNetwork = errors.New("nicrt: forward: the request did not come over the network")
)

// SetPeer makes node reachable at addr for what handlers send and
// forward, replacing any address it had. Safe for concurrent use; the
// host library feeds it from its membership.
func (s *Server) SetPeer(node uint32, addr transport.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("nicrt: set peer %d: invalid address %v", node, addr)
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
func (s *Server) seal(tx *txQueue, h *wire.Header, route *wire.Route, body []byte) ([]byte, error) {
	b := tx.buffer()
	// Build the payload where Encode puts it, so that it is not copied
	// twice (it moves if it outgrows the buffer; Encode then copies it).
	payload := wire.AppendRoute(b[wire.HeaderSize:wire.HeaderSize], route)
	payload = append(payload, body...)
	codec := s.sealers.Get().(*wire.Codec)
	out, err := codec.Encode(b, h, payload)
	s.sealers.Put(codec)
	return out, err
}

// send is the Outbox's Send (through NIC's netOutbox): a one-way,
// program-relative request to handler (the id in the sender's object) of
// the same program on node. At most once, and it may be lost: nothing
// retransmits it and nothing answers it.
func (s *Server) send(from Origin, node uint64, handler uint32, payload []byte) error {
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

func (s *Server) sendErr(from Origin, node uint64, handler uint32, payload []byte) error {
	dst, to, err := s.resolve(node)
	if err != nil {
		return err
	}
	if from.Program == nil || from.Tenant > 1<<32-1 {
		return fmt.Errorf("nicrt: send: tenant %d or program cannot travel", from.Tenant)
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
		return fmt.Errorf("nicrt: send: %w", err)
	}
	tx.push(to, b)
	return nil
}

// forward is the Outbox's Forward: it seals the request being run for
// handler (the id in the object) of the same program on node, keeping its
// tenant, source node and request id, with the original caller's reply
// address; complete sends it and keeps it for the caller's
// retransmissions.
func (s *Server) forward(from Origin, req *Message, node uint64, handler uint32) error {
	in := req.net
	if in == nil {
		s.ctr.forwardsRefused.Add(1)
		return ErrNotFromNetwork
	}
	srv := in.s // the server the request came through
	err := srv.forwardErr(in, from, req, node, handler)
	if err != nil {
		srv.ctr.forwardsRefused.Add(1)
		if errors.Is(err, ErrUnknownNode) {
			srv.ctr.unknownNode.Add(1)
		}
		return err
	}
	srv.ctr.forwards.Add(1)
	return nil
}

func (s *Server) forwardErr(in *inflight, from Origin, req *Message, node uint64, handler uint32) error {
	if in.oneway {
		return errors.New("nicrt: forward: a one-way message has no caller to answer")
	}
	if in.hdr.Type != wire.TypeRequest || from.Program == nil {
		return errors.New("nicrt: forward: not a handler's request")
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
		return fmt.Errorf("nicrt: forward: %w", err)
	}
	in.fwd, in.fwdTo = b, to
	return nil
}
