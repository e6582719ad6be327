package server

import (
	"sort"
	"sync/atomic"

	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/nicrt/wire"
)

type serverCounters struct {
	wire.DecodeErrors
	rxPackets, rxBatches, rxErrors                    atomic.Uint64
	wrongDst, unexpectedType, creditPackets, control  atomic.Uint64
	requests, retransmitted, replies, errorReplies    atomic.Uint64
	forwarded, encodeErrors                           atomic.Uint64
	cacheHits, duplicatesRunning, duplicatesForwarded atomic.Uint64
	replaysTooOld, replaysUncached                    atomic.Uint64
	oneWay, oneWayFailed, duplicatesOneWay            atomic.Uint64
	unknownProgram, reforwarded                       atomic.Uint64
	sends, forwards, sendsRefused, forwardsRefused    atomic.Uint64
	unknownNode                                       atomic.Uint64
	peersFull, peersEvicted, replaysEvicted           atomic.Uint64
	relayed, relayUnmatched                           atomic.Uint64
	uploadsExpired, uploadsDropped                    atomic.Uint64
	notCached, duplicatesNotCached, controlRefused    atomic.Uint64
	frontCacheHits                                    atomic.Uint64
}

// ServerStats is a snapshot of a Server's counters (spec/nic.md, Network
// side). Every datagram read is counted once among Requests, OneWay,
// Control, the drops (Dropped), CacheHits and Reforwarded.
type ServerStats struct {
	RxPackets, RxBatches uint64 // datagrams and batches read
	RxErrors             uint64 // failed reads (other than closing)
	TxPackets, TxBatches uint64 // datagrams and WriteBatch calls
	TxErrors             uint64 // WriteBatch calls that failed for a datagram

	// Drops of datagrams that do not open.
	Malformed     [wire.NumMalformed]uint64 // by reason (wire.Malformed)
	BadMAC        uint64                    // the tag does not match: forged or altered
	UnknownTenant uint64                    // no key for the tenant
	// Drops of authentic packets.
	WrongDst       uint64 // sealed for another node
	UnexpectedType uint64 // a reply or error reply sent to a responder
	CreditPackets  uint64 // credit packets (nothing to do yet)

	Requests      uint64 // new requests submitted to the NIC
	Control       uint64 // new control packets run
	Retransmitted uint64 // requests with the retransmit flag, whatever became of them
	Replies       uint64 // replies sent (not counting resends from the cache)
	ErrorReplies  uint64 // error replies sent (not counting resends)
	Forwarded     uint64 // requests the handler forwarded: no reply from here
	EncodeErrors  uint64 // replies over the payload limit, answered "too large"

	// Duplicates and replays: the request id was seen before.
	CacheHits           uint64 // answered again from the reply cache without running
	DuplicatesRunning   uint64 // dropped: the request is still running, its reply will come
	DuplicatesForwarded uint64 // dropped: the request was forwarded
	ReplaysUncached     uint64 // dropped: seen, but its reply is no longer cached
	ReplaysTooOld       uint64 // dropped: WindowSize or more below the newest id
	ReplaysEvicted      uint64 // dropped: at or below the high edge of the peer's evicted window
	Reforwarded         uint64 // a duplicate of a forwarded request, forwarded again as it was
	DuplicatesOneWay    uint64 // dropped: a one-way message seen before

	// One-way messages (send) and program-relative requests received.
	OneWay         uint64 // new one-way messages submitted (not in Requests)
	OneWayFailed   uint64 // one-way messages that did not end OK (no one is told)
	UnknownProgram uint64 // program-relative requests naming no program or handler here (refused as unknown handler)

	// What handlers sent and forwarded through this server.
	Sends           uint64 // one-way messages sent
	Forwards        uint64 // requests forwarded (first time; Reforwarded counts the resends)
	SendsRefused    uint64 // send calls refused (unknown node, too large, …): the helper returned -1
	ForwardsRefused uint64 // forward calls refused
	UnknownNode     uint64 // sends and forwards refused for a node with no address (SetPeer)

	// No reflection (spec/wire.md, Routing).
	Relayed        uint64 // replies to requests this node forwarded, passed on to their callers
	RelayUnmatched uint64 // dropped: a reply to relay that answers no forward this node keeps

	// The control plane's uploads (install).
	Uploads        int    // uploads in progress
	UploadsExpired uint64 // dropped after UploadTimeout without a chunk
	UploadsDropped uint64 // dropped at MaxNodeUploads for another tenant's
	ControlRefused uint64 // control ops refused as overloaded: MaxControlOps of the tenant running (among Control)

	Peers        int    // peer states held (at most ServerConfig.MaxPeers)
	Floors       int    // evicted peers whose window's high edge is kept
	PeersEvicted uint64 // peer states evicted
	PeersFull    uint64 // dropped: a new peer while MaxPeers states were all in use
	// The reply caches' bytes (MaxReplyCacheBytes, MaxTenantReplyCacheBytes).
	CacheBytes          int64  // held now
	NotCached           uint64 // replies and forwards sent but not kept: past a limit
	DuplicatesNotCached uint64 // dropped: a duplicate whose reply was not kept
	// FrontCacheHits: duplicates answered from the Front's cache (the
	// reply was sent by the tier in front), among CacheHits.
	FrontCacheHits uint64
}

// Dropped is the number of datagrams dropped for any reason.
func (s ServerStats) Dropped() uint64 {
	d := s.BadMAC + s.UnknownTenant + s.WrongDst + s.UnexpectedType + s.CreditPackets +
		s.DuplicatesRunning + s.DuplicatesForwarded + s.ReplaysUncached + s.ReplaysTooOld +
		s.ReplaysEvicted + s.DuplicatesOneWay + s.PeersFull + s.RelayUnmatched + s.DuplicatesNotCached
	for _, m := range s.Malformed {
		d += m
	}
	return d
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() ServerStats {
	c := &s.ctr
	st := ServerStats{
		RxPackets: c.rxPackets.Load(), RxBatches: c.rxBatches.Load(), RxErrors: c.rxErrors.Load(),
		WrongDst: c.wrongDst.Load(), UnexpectedType: c.unexpectedType.Load(),
		CreditPackets: c.creditPackets.Load(), Control: c.control.Load(),
		Requests: c.requests.Load(), Retransmitted: c.retransmitted.Load(),
		Replies: c.replies.Load(), ErrorReplies: c.errorReplies.Load(),
		Forwarded: c.forwarded.Load(), EncodeErrors: c.encodeErrors.Load(),
		CacheHits: c.cacheHits.Load(), DuplicatesRunning: c.duplicatesRunning.Load(),
		DuplicatesForwarded: c.duplicatesForwarded.Load(),
		ReplaysUncached:     c.replaysUncached.Load(), ReplaysTooOld: c.replaysTooOld.Load(),
		ReplaysEvicted: c.replaysEvicted.Load(), Reforwarded: c.reforwarded.Load(),
		DuplicatesOneWay: c.duplicatesOneWay.Load(), OneWay: c.oneWay.Load(), OneWayFailed: c.oneWayFailed.Load(),
		UnknownProgram: c.unknownProgram.Load(), Sends: c.sends.Load(), Forwards: c.forwards.Load(),
		SendsRefused: c.sendsRefused.Load(), ForwardsRefused: c.forwardsRefused.Load(), UnknownNode: c.unknownNode.Load(),
		PeersEvicted: c.peersEvicted.Load(), PeersFull: c.peersFull.Load(),
		Relayed: c.relayed.Load(), RelayUnmatched: c.relayUnmatched.Load(),
		UploadsExpired: c.uploadsExpired.Load(), UploadsDropped: c.uploadsDropped.Load(),
		ControlRefused: c.controlRefused.Load(), CacheBytes: s.cacheBytes.Load(), NotCached: c.notCached.Load(), DuplicatesNotCached: c.duplicatesNotCached.Load(),
		FrontCacheHits: c.frontCacheHits.Load(),
	}
	st.Malformed, st.BadMAC, st.UnknownTenant = c.DecodeErrors.Snapshot()
	for _, q := range s.queues {
		packets, batches, errors := q.tx.Stats()
		st.TxPackets += packets
		st.TxBatches += batches
		st.TxErrors += errors
	}
	s.peersMu.RLock()
	st.Peers, st.Floors = len(s.peers), len(s.floors)
	s.peersMu.RUnlock()
	s.ctlMu.Lock()
	st.Uploads = len(s.uploads)
	s.ctlMu.Unlock()
	return st
}

// Counters flattens the snapshot into named counters, sorted by name:
// "server.drop.bad_mac", "server.drop.malformed.magic",
// "server.cache_hits", … (spec/nic.md, Network side).
func (s ServerStats) Counters() []nicrt.Counter {
	out := []nicrt.Counter{
		{Name: "server.rx_packets", Value: s.RxPackets}, {Name: "server.rx_batches", Value: s.RxBatches}, {Name: "server.rx_errors", Value: s.RxErrors},
		{Name: "server.tx_packets", Value: s.TxPackets}, {Name: "server.tx_batches", Value: s.TxBatches}, {Name: "server.tx_errors", Value: s.TxErrors},
		{Name: "server.drop.bad_mac", Value: s.BadMAC}, {Name: "server.drop.unknown_tenant", Value: s.UnknownTenant},
		{Name: "server.drop.wrong_dst", Value: s.WrongDst}, {Name: "server.drop.unexpected_type", Value: s.UnexpectedType},
		{Name: "server.drop.credit", Value: s.CreditPackets}, {Name: "server.control", Value: s.Control},
		{Name: "server.drop.duplicate_running", Value: s.DuplicatesRunning}, {Name: "server.drop.duplicate_forwarded", Value: s.DuplicatesForwarded},
		{Name: "server.drop.replay_uncached", Value: s.ReplaysUncached}, {Name: "server.drop.replay_too_old", Value: s.ReplaysTooOld},
		{Name: "server.requests", Value: s.Requests}, {Name: "server.retransmitted", Value: s.Retransmitted},
		{Name: "server.replies", Value: s.Replies}, {Name: "server.error_replies", Value: s.ErrorReplies},
		{Name: "server.forwarded", Value: s.Forwarded}, {Name: "server.encode_errors", Value: s.EncodeErrors},
		{Name: "server.cache_hits", Value: s.CacheHits}, {Name: "server.peers", Value: uint64(s.Peers)},
		{Name: "server.drop.replay_evicted", Value: s.ReplaysEvicted}, {Name: "server.reforwarded", Value: s.Reforwarded},
		{Name: "server.drop.duplicate_one_way", Value: s.DuplicatesOneWay}, {Name: "server.one_way", Value: s.OneWay},
		{Name: "server.one_way_failed", Value: s.OneWayFailed}, {Name: "server.unknown_program", Value: s.UnknownProgram},
		{Name: "server.sends", Value: s.Sends}, {Name: "server.forwards", Value: s.Forwards}, {Name: "server.sends_refused", Value: s.SendsRefused},
		{Name: "server.forwards_refused", Value: s.ForwardsRefused}, {Name: "server.unknown_node", Value: s.UnknownNode},
		{Name: "server.floors", Value: uint64(s.Floors)}, {Name: "server.peers_evicted", Value: s.PeersEvicted},
		{Name: "server.drop.peers_full", Value: s.PeersFull},
		{Name: "server.relayed", Value: s.Relayed},
		{Name: "server.drop.relay_unmatched", Value: s.RelayUnmatched},
		{Name: "server.uploads", Value: uint64(s.Uploads)}, {Name: "server.uploads_expired", Value: s.UploadsExpired},
		{Name: "server.uploads_dropped", Value: s.UploadsDropped},
		{Name: "server.cache_bytes", Value: uint64(max(s.CacheBytes, 0))}, {Name: "server.not_cached", Value: s.NotCached},
		{Name: "server.drop.not_cached", Value: s.DuplicatesNotCached}, {Name: "server.control_refused", Value: s.ControlRefused},
		{Name: "server.front_cache_hits", Value: s.FrontCacheHits},
	}
	for i, v := range s.Malformed {
		out = append(out, nicrt.Counter{Name: "server.drop.malformed." + wire.Malformed(i).String(), Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
