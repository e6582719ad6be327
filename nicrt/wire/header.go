package wire

import (
	"fmt"
	"strings"
)

// Packet identification (spec/wire.md, Header).
const (
	Magic   = 0x414e // the bytes "NA" read as a little-endian u16
	Version = 1
)

// Header layout: byte offsets of every field (spec/wire.md, Header).
const (
	offMagic     = 0
	offVersion   = 2
	offType      = 3
	offFlags     = 4
	offCredits   = 6
	offTenant    = 8
	offHandler   = 12
	offRequestID = 16
	offSrc       = 24
	offDst       = 28
	offLength    = 32
	offStatus    = 36
	offTag       = 40

	// HeaderSize is the size of the fixed header, tag included.
	HeaderSize = 56
	// TagSize is the size of the MAC at the end of the header.
	TagSize = 16
	// macHeaderSize is the part of the header the MAC covers: all of it
	// but the tag.
	macHeaderSize = offTag
)

// Payload limits (spec/wire.md, Payload). A datagram is HeaderSize bytes
// plus the payload, and in v1 it must fit one link frame unfragmented.
const (
	// EthernetMTU is the standard Ethernet MTU (IEEE 802.3).
	EthernetMTU = 1500
	// JumboMTU is the common jumbo frame MTU.
	JumboMTU = 9000
	// IPv4UDPOverhead is the IPv4 (20) plus UDP (8) header.
	IPv4UDPOverhead = 28
	// IPv6UDPOverhead is the IPv6 (40) plus UDP (8) header.
	IPv6UDPOverhead = 48
	// MaxPayload is the v1 default payload limit: an Ethernet frame's 1500
	// bytes less IPv4, UDP and the NAAM header, 1416 bytes.
	MaxPayload = EthernetMTU - IPv4UDPOverhead - HeaderSize
	// MaxJumboPayload is the payload limit on a 9000-byte jumbo MTU over
	// IPv4, 8916 bytes.
	MaxJumboPayload = JumboMTU - IPv4UDPOverhead - HeaderSize
	// MaxDatagramPayload is the most a UDP datagram over IPv4 can carry
	// after the header (65507 - 56): no configuration may exceed it.
	MaxDatagramPayload = 65507 - HeaderSize
)

// PayloadLimit returns the largest payload whose datagram fits a link of
// the given MTU unfragmented, over IPv6 or IPv4, or 0 when none does.
func PayloadLimit(mtu int, ipv6 bool) int {
	overhead := IPv4UDPOverhead
	if ipv6 {
		overhead = IPv6UDPOverhead
	}
	return max(min(mtu-overhead-HeaderSize, MaxDatagramPayload), 0)
}

// Type says what a packet is.
type Type uint8

// Packet types. Numbers are stable; new types are appended.
const (
	TypeRequest    Type = 1 // an active message: run Handler on Payload
	TypeReply      Type = 2 // the answer to a request: Payload is the reply
	TypeErrorReply Type = 3 // the request failed: Status says why
	TypeCredit     Type = 4 // flow control only: Credits, an ack of RequestID
	TypeControl    Type = 5 // control plane request: Handler is an Op, Payload msgpack
	maxType             = TypeControl
)

var typeNames = [...]string{
	TypeRequest:    "request",
	TypeReply:      "reply",
	TypeErrorReply: "error-reply",
	TypeCredit:     "credit",
	TypeControl:    "control",
}

func (t Type) String() string {
	if t >= 1 && t <= maxType {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Flags qualify a packet. Unknown bits are rejected.
type Flags uint16

// Flag bits. Numbers are stable; new bits are appended.
const (
	// FlagRetransmit marks a request sent again after a timeout. It does not
	// change how the responder treats it (the Window and the reply cache
	// decide); it lets counters tell retransmissions from network duplicates.
	FlagRetransmit Flags = 1 << 0
	// FlagForwarded marks a request a handler passed on with forward: Src is
	// the original caller, who gets the reply, not the node that sent this
	// datagram.
	FlagForwarded Flags = 1 << 1
	// FlagProgram marks a program-relative request: Handler is a handler
	// id of the object whose digest starts the payload (SplitRoute), to be
	// mapped to the receiving node's own id. send and forward use it, as
	// node-wide handler ids differ between nodes.
	FlagProgram Flags = 1 << 2
	// FlagOneWay marks a request that gets no reply of any kind (the send
	// helper's messages): at most once, and it may be lost.
	FlagOneWay Flags = 1 << 3

	knownFlags = FlagRetransmit | FlagForwarded | FlagProgram | FlagOneWay
)

var flagNames = []string{"retransmit", "forwarded", "program", "one-way"}

func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for i, name := range flagNames {
		if f&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if rest := f &^ knownFlags; rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint16(rest)))
	}
	return strings.Join(parts, "|")
}

// Status is the code of an error reply, in two ranges: 1 … 2^31-1 is a
// handler's own error code (the handler returned r0 = -code, spec/abi.md),
// and StatusRuntime+k is the runtime's status k (spec/nic.md: the handler
// faulted, no such handler, a region check failed, …). 0 means no error
// and appears only in packets other than error replies.
type Status uint32

// Status values and ranges.
const (
	StatusOK         Status = 0
	MaxHandlerStatus Status = 1<<31 - 1 // largest handler error code (bytecode.MaxErrorCode)
	StatusRuntime    Status = 1 << 31   // StatusRuntime+k: the runtime's status k
)

// Runtime returns k for a status StatusRuntime+k, and false for a
// handler's error code or StatusOK.
func (s Status) Runtime() (k uint32, ok bool) {
	if s < StatusRuntime {
		return 0, false
	}
	return uint32(s - StatusRuntime), true
}

func (s Status) String() string {
	if k, ok := s.Runtime(); ok {
		return fmt.Sprintf("runtime status %d", k)
	}
	if s == StatusOK {
		return "ok"
	}
	return fmt.Sprintf("handler error %d", uint32(s))
}

// Header is a packet's header without the fields that Encode computes and
// Decode checks (magic, version, payload length and tag).
type Header struct {
	Type    Type
	Flags   Flags
	Credits uint16 // requests the sender will accept outstanding from the receiver
	Tenant  uint32 // whose key seals the packet; whose handlers and regions it may use
	// Handler is the handler id for a request (ids of built-in verbs
	// included, spec/nic.md), an Op for a control packet, and the request's
	// Handler echoed in a reply.
	Handler   uint32
	RequestID uint64 // unique per (Src, Tenant); a reply carries its request's
	Src       uint32 // node id of the original caller (replies: the responder)
	Dst       uint32 // node id of the intended receiver, so that a packet replayed to another node fails
	Status    Status // error replies only: why the request failed
}

// Packet is a decoded packet. Payload aliases the datagram it was decoded
// from.
type Packet struct {
	Header
	Payload []byte
}

func (h *Header) String() string {
	s := fmt.Sprintf("%v tenant=%d handler=%d id=%d src=%d dst=%d credits=%d",
		h.Type, h.Tenant, h.Handler, h.RequestID, h.Src, h.Dst, h.Credits)
	if h.Flags != 0 {
		s += " flags=" + h.Flags.String()
	}
	if h.Status != 0 {
		s += " status=" + h.Status.String()
	}
	return s
}

// check applies the rules that Encode and Decode share and that do not need
// the datagram (spec/wire.md, Validation), in the order of that table.
func (h *Header) check(length int) error {
	if h.Type < 1 || h.Type > maxType {
		return errorf("type", ErrType, "%d is not a packet type (1…%d)", uint8(h.Type), uint8(maxType))
	}
	if rest := h.Flags &^ knownFlags; rest != 0 {
		return errorf("flags", ErrFlags, "unknown bits %#04x", uint16(rest))
	}
	if h.Type == TypeErrorReply {
		if h.Status == StatusOK {
			return errorf("status", ErrStatus, "0 in an error reply")
		}
	} else if h.Status != StatusOK {
		return errorf("status", ErrStatus, "%#x in a %v packet (only error replies carry one)", uint32(h.Status), h.Type)
	}
	if h.Type == TypeCredit && length != 0 {
		return errorf("length", ErrLength, "%d in a credit packet (must be 0)", length)
	}
	return nil
}
