package xdp

import (
	"fmt"

	"github.com/naam-project/naam/nicrt/wire"
)

// Frame layout of the packets the tier answers: Ethernet II, IPv4 without
// options, UDP, the wire header.
const (
	ethLen      = 14
	ipLen       = 20
	udpLen      = 8
	offIP       = ethLen
	offUDP      = offIP + ipLen
	offWire     = offUDP + udpLen // 42: the wire header
	offPayload  = offWire + wire.HeaderSize
	macFields   = 40 // header bytes the MAC covers
	ethTypeIPv4 = 0x0800
	ethTypeIPv6 = 0x86dd
	protoUDP    = 17
	replyTTL    = 64
)

// Runtime statuses and verb ids the tier answers with: the values of
// spec/nic.md (nicrt.Status, nicrt.HandlerRead …), stable on the wire.
// TestRuntimeValues checks them against nicrt's.
const (
	statusFault          = 3
	statusUnknownHandler = 4
	statusBadRequest     = 7
	statusUnknownRegion  = 8
	statusForeignRegion  = 9
	statusWrongKey       = 10
	statusOutOfBounds    = 11
	statusReadOnly       = 12
	statusMisaligned     = 13
	statusTooLarge       = 14

	verbRead     = 1
	verbWrite    = 2
	verbCAS      = 3
	verbFetchAdd = 4
	verbHeader   = 24 // key u64, region u32, length u32, offset u64
)

// Peer state (spec/xdp.md, Shared state): an element of the peer table,
// one per (tenant, src), shared by the XDP program and the host process.
const (
	peerKey   = 0  // u64: (tenant<<32 | src) + 1; 0: free
	peerTop   = 8  // u64: highest request id claimed + 1; 0: none
	peerFloor = 16 // u64: ids below it are refused; 0: none
	peerSlots = 32 // WindowSize slots follow

	slotID    = 0  // u64: id + 1 of the request that holds the slot; 0: never used
	slotSID   = 8  // u64: id + 1 whose state follows (a claim in progress while it differs from slotID)
	slotState = 16 // u32: SlotRunning, SlotCached, SlotElsewhere
	slotLen   = 20 // u32: bytes of the cached datagram
	slotData  = 24 // the sealed reply datagram (header and payload)

	peerProbes = 8 // slots of the peer table a (tenant, src) may occupy
)

// Slot states.
const (
	SlotEmpty     = 0 // never used
	SlotRunning   = 1 // claimed; the request runs
	SlotCached    = 2 // answered; the sealed reply is in the slot
	SlotElsewhere = 3 // answered; the host process holds the reply (it did not fit, or it ran there)
)

// Per-CPU scratch: the counters, what the dispatcher hands the handler
// program, the request datagram as the MAC reads it and the reply being
// built. One lookup gives a program all of it.
const (
	scrCounters = 0 // numCounters u64s
	scrMeta     = scrCounters + 8*maxCounters
	metaPeer    = scrMeta + 0  // u32: index of the peer state
	metaSlot    = scrMeta + 4  // u32: reply-cache slot
	metaPlen    = scrMeta + 8  // u32: request payload bytes
	metaHandler = scrMeta + 12 // u32: handler id
	metaTenant  = scrMeta + 16 // u32
	metaSrc     = scrMeta + 20 // u32
	metaID      = scrMeta + 24 // u64: request id
	metaKey     = scrMeta + 32 // 16 bytes: the tenant's SipHash key
	metaFlags   = scrMeta + 48 // u32: request flags
	metaProg    = scrMeta + 52 // u32: the handler program's index
	scrTag      = scrMeta + 64 // 16 bytes: the tag computed over the request
	scrReq      = scrTag + 64  // the request datagram: header, payload, 8 bytes of slack
)

// Maps every program of the tier refers to by name (bind).
const (
	mapScratch  = "naam_scratch"  // per-CPU array, 1 element: counters, meta, request, reply
	mapPeers    = "naam_peers"    // array, MaxPeers elements, mmapable: the PeerTable
	mapKeys     = "naam_keys"     // hash: tenant u32 → SipHash key (k0, k1)
	mapHandlers = "naam_handlers" // hash: handler id u32 → handlerEntry
	mapRegions  = "naam_regions"  // hash: region id u32 → u32 1, the regions verbs reach here
	mapProgs    = "naam_progs"    // program array: the handler and verb programs
	mapConfig   = "naam_config"   // array, 1 element: what the node may change at run time
)

// naam_config.
const (
	cfgCredits   = 0 // u32: the grant replies carry (low 16 bits)
	cfgClockBase = 8 // u64: subtracted from bpf_ktime_get_ns for now()
	cfgSize      = 16
)

// handlerEntry is a naam_handlers value.
const (
	hentProg    = 0 // u32: index in naam_progs
	hentTenant  = 4 // u32: the tenant whose handler it is
	hentKind    = 8 // u32: kindHandler or kindVerb
	hentSize    = 12
	kindHandler = 0
	kindVerb    = 1
)

// layout is where things are for one configuration.
type layout struct {
	maxPayload int // request payloads the tier takes
	maxReply   int // largest reply buffer
	cacheBytes int // datagram bytes a cache slot holds
	maxPeers   int // peer states, a power of two
	scrRep     int // reply datagram in the scratch
	scrSize    int
	slotSize   int
	peerSize   int
}

func newLayout(c Config) layout {
	l := layout{maxPayload: c.MaxPayload, maxReply: c.MaxReply, cacheBytes: c.CacheBytes, maxPeers: c.MaxPeers}
	l.scrRep = scrReq + wire.HeaderSize + round8(l.maxPayload) + 8
	l.scrSize = l.scrRep + wire.HeaderSize + round8(l.maxReply) + 8
	l.slotSize = slotData + l.cacheBytes
	l.peerSize = peerSlots + wire.WindowSize*l.slotSize + 8 // the checksum reads a word past a datagram
	return l
}

func round8(n int) int { return (n + 7) &^ 7 }

// Config configures a Tier. A zero field takes its default.
type Config struct {
	// Node is this node's id: requests for another dst are dropped.
	// Required.
	Node uint32
	// Port is the UDP port the node listens on; the tier answers
	// datagrams to it and passes every other packet up. Required.
	Port uint16
	// IP, if set, is the IPv4 address the node listens on (4 bytes);
	// datagrams to other addresses pass up.
	IP [4]byte
	// MaxPayload is the largest request payload, as the node's
	// wire.Config.MaxPayload (0: wire.MaxPayload). Larger packets pass up,
	// where the user-space node refuses them.
	MaxPayload int
	// MaxReply is the reply buffer of handlers that declare no results,
	// as nicrt's Config.MaxReply (0: 1408).
	MaxReply int
	// CacheBytes is the size of a reply-cache slot's datagram, header
	// included, a multiple of 8 (0: 384, a 328-byte reply): handlers whose
	// reply buffer does not fit are served by the user-space node.
	CacheBytes int
	// MaxPeers is the number of (tenant, src) states, a power of two (0:
	// 64). Each holds WindowSize slots of CacheBytes+24 bytes.
	MaxPeers int
	// MaxHandlers bounds the handler and verb programs (0: 256).
	MaxHandlers int
	// MaxTenants bounds the tenant keys (0: 1024).
	MaxTenants int
	// MaxRegions bounds the regions verbs may name (0: 1024).
	MaxRegions int
	// Credits is the grant in the replies the tier sends (0: 64); the
	// node may change it (Tier.SetCredits).
	Credits uint16
}

// Defaults.
const (
	DefaultMaxReply    = 1408
	DefaultCacheBytes  = 384
	DefaultMaxPeers    = 64
	DefaultMaxHandlers = 256
	DefaultMaxTenants  = 1024
	DefaultMaxRegions  = 1024
	DefaultCredits     = 64
	// MaxRegionSize is the largest region XDP code can address: the
	// kernel's verifier tracks offsets into a map value below 2^29.
	MaxRegionSize = 1 << 29
)

func (c Config) withDefaults() (Config, error) {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&c.MaxPayload, wire.MaxPayload)
	set(&c.MaxReply, DefaultMaxReply)
	set(&c.CacheBytes, DefaultCacheBytes)
	set(&c.MaxPeers, DefaultMaxPeers)
	set(&c.MaxHandlers, DefaultMaxHandlers)
	set(&c.MaxTenants, DefaultMaxTenants)
	set(&c.MaxRegions, DefaultMaxRegions)
	if c.Credits == 0 {
		c.Credits = DefaultCredits
	}
	switch {
	case c.Node == 0:
		return c, fmt.Errorf("xdp: Config.Node is 0")
	case c.Port == 0:
		return c, fmt.Errorf("xdp: Config.Port is 0")
	case c.MaxPayload < 0 || c.MaxPayload > wire.MaxJumboPayload:
		return c, fmt.Errorf("xdp: Config.MaxPayload %d is outside 1…%d", c.MaxPayload, wire.MaxJumboPayload)
	case c.MaxReply < 8 || c.MaxReply%8 != 0 || c.MaxReply > wire.MaxJumboPayload:
		return c, fmt.Errorf("xdp: Config.MaxReply %d must be a multiple of 8 in 8…%d", c.MaxReply, wire.MaxJumboPayload)
	case c.CacheBytes < wire.HeaderSize+8 || c.CacheBytes%8 != 0 || c.CacheBytes > wire.HeaderSize+c.MaxReply:
		return c, fmt.Errorf("xdp: Config.CacheBytes %d must be a multiple of 8 in %d…%d", c.CacheBytes, wire.HeaderSize+8, wire.HeaderSize+c.MaxReply)
	case c.MaxPeers < 1 || c.MaxPeers&(c.MaxPeers-1) != 0 || c.MaxPeers > 1<<16:
		return c, fmt.Errorf("xdp: Config.MaxPeers %d must be a power of two up to 65536", c.MaxPeers)
	case c.MaxHandlers < 1 || c.MaxHandlers > 1<<16:
		return c, fmt.Errorf("xdp: Config.MaxHandlers %d is outside 1…65536", c.MaxHandlers)
	case c.MaxTenants < 1 || c.MaxTenants > 1<<20:
		return c, fmt.Errorf("xdp: Config.MaxTenants %d is outside 1…%d", c.MaxTenants, 1<<20)
	case c.MaxRegions < 1 || c.MaxRegions > 1<<20:
		return c, fmt.Errorf("xdp: Config.MaxRegions %d is outside 1…%d", c.MaxRegions, 1<<20)
	}
	return c, nil
}
