package nicrt

import (
	"errors"
	"sort"
	"sync/atomic"

	"github.com/naam-project/naam/nicrt/wire"
)

// Malformed names the ways a datagram fails wire.Parse: one counter each
// in ServerStats.Malformed and ClientStats.Malformed.
type Malformed uint8

const (
	MalformedShort    Malformed = iota // shorter than a header (wire.ErrShort)
	MalformedMagic                     // wire.ErrMagic
	MalformedVersion                   // wire.ErrVersion
	MalformedTooLarge                  // length over the payload limit (wire.ErrTooLarge)
	MalformedLength                    // length does not match the datagram (wire.ErrLength)
	MalformedType                      // wire.ErrType
	MalformedFlags                     // wire.ErrFlags
	MalformedStatus                    // wire.ErrStatus
	MalformedRoute                     // a request's route prefix (wire.ErrRoute), or route flags on another type
	numMalformed
)

var malformedNames = [numMalformed]string{"short", "magic", "version", "too_large", "length", "type", "flags", "status", "route"}
var malformedErrs = [numMalformed]error{wire.ErrShort, wire.ErrMagic, wire.ErrVersion, wire.ErrTooLarge, wire.ErrLength, wire.ErrType, wire.ErrFlags, wire.ErrStatus, wire.ErrRoute}

func (m Malformed) String() string { return malformedNames[m] }

// decodeCounters count the datagrams a codec refused, by reason.
type decodeCounters struct {
	malformed     [numMalformed]atomic.Uint64
	badMAC        atomic.Uint64
	unknownTenant atomic.Uint64
}

func (c *decodeCounters) countDecodeError(err error) {
	switch {
	case errors.Is(err, wire.ErrMAC):
		c.badMAC.Add(1)
	case errors.Is(err, wire.ErrUnknownTenant):
		c.unknownTenant.Add(1)
	default:
		for i, e := range malformedErrs {
			if errors.Is(err, e) {
				c.malformed[i].Add(1)
				return
			}
		}
		c.malformed[MalformedShort].Add(1) // Decode returns no other error
	}
}

func (c *decodeCounters) snapshot() (m [numMalformed]uint64, badMAC, unknownTenant uint64) {
	for i := range m {
		m[i] = c.malformed[i].Load()
	}
	return m, c.badMAC.Load(), c.unknownTenant.Load()
}

type serverCounters struct {
	decodeCounters
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
	Malformed     [numMalformed]uint64 // by reason (Malformed)
	BadMAC        uint64               // the tag does not match: forged or altered
	UnknownTenant uint64               // no key for the tenant
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
	}
	st.Malformed, st.BadMAC, st.UnknownTenant = c.decodeCounters.snapshot()
	for _, q := range s.queues {
		st.TxPackets += q.tx.packets.Load()
		st.TxBatches += q.tx.batches.Load()
		st.TxErrors += q.tx.errors.Load()
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
func (s ServerStats) Counters() []Counter {
	out := []Counter{
		{"server.rx_packets", s.RxPackets}, {"server.rx_batches", s.RxBatches}, {"server.rx_errors", s.RxErrors},
		{"server.tx_packets", s.TxPackets}, {"server.tx_batches", s.TxBatches}, {"server.tx_errors", s.TxErrors},
		{"server.drop.bad_mac", s.BadMAC}, {"server.drop.unknown_tenant", s.UnknownTenant},
		{"server.drop.wrong_dst", s.WrongDst}, {"server.drop.unexpected_type", s.UnexpectedType},
		{"server.drop.credit", s.CreditPackets}, {"server.control", s.Control},
		{"server.drop.duplicate_running", s.DuplicatesRunning}, {"server.drop.duplicate_forwarded", s.DuplicatesForwarded},
		{"server.drop.replay_uncached", s.ReplaysUncached}, {"server.drop.replay_too_old", s.ReplaysTooOld},
		{"server.requests", s.Requests}, {"server.retransmitted", s.Retransmitted},
		{"server.replies", s.Replies}, {"server.error_replies", s.ErrorReplies},
		{"server.forwarded", s.Forwarded}, {"server.encode_errors", s.EncodeErrors},
		{"server.cache_hits", s.CacheHits}, {"server.peers", uint64(s.Peers)},
		{"server.drop.replay_evicted", s.ReplaysEvicted}, {"server.reforwarded", s.Reforwarded},
		{"server.drop.duplicate_one_way", s.DuplicatesOneWay}, {"server.one_way", s.OneWay},
		{"server.one_way_failed", s.OneWayFailed}, {"server.unknown_program", s.UnknownProgram},
		{"server.sends", s.Sends}, {"server.forwards", s.Forwards}, {"server.sends_refused", s.SendsRefused},
		{"server.forwards_refused", s.ForwardsRefused}, {"server.unknown_node", s.UnknownNode},
		{"server.floors", uint64(s.Floors)}, {"server.peers_evicted", s.PeersEvicted},
		{"server.drop.peers_full", s.PeersFull},
		{"server.relayed", s.Relayed},
		{"server.drop.relay_unmatched", s.RelayUnmatched},
		{"server.uploads", uint64(s.Uploads)}, {"server.uploads_expired", s.UploadsExpired},
		{"server.uploads_dropped", s.UploadsDropped},
		{"server.cache_bytes", uint64(max(s.CacheBytes, 0))}, {"server.not_cached", s.NotCached},
		{"server.drop.not_cached", s.DuplicatesNotCached}, {"server.control_refused", s.ControlRefused},
	}
	for i, v := range s.Malformed {
		out = append(out, Counter{"server.drop.malformed." + Malformed(i).String(), v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
