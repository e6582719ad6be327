package wire

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Config configures a Codec.
type Config struct {
	// Keys gives each tenant's MAC key. Required.
	Keys Keys
	// MaxPayload is the largest payload Encode writes and Decode accepts.
	// 0 means MaxPayload (an Ethernet MTU); MaxJumboPayload, or
	// PayloadLimit(mtu) of the link, raises it, to at most
	// MaxDatagramPayload.
	MaxPayload int
}

// Codec seals and opens packets for one goroutine: it holds the MAC's hash
// state, so it is not safe for concurrent use. Give each NIC core or
// transport worker its own; they may share Keys.
type Codec struct {
	keys       Keys
	maxPayload int
	mac        mac
}

// NewCodec returns a Codec for cfg.
func NewCodec(cfg Config) (*Codec, error) {
	if cfg.Keys == nil {
		return nil, fmt.Errorf("wire: Config.Keys is nil")
	}
	limit := cfg.MaxPayload
	if limit == 0 {
		limit = MaxPayload
	}
	if limit < 0 || limit > MaxDatagramPayload {
		return nil, fmt.Errorf("wire: Config.MaxPayload %d is outside 0…%d", cfg.MaxPayload, MaxDatagramPayload)
	}
	return &Codec{keys: cfg.Keys, maxPayload: limit, mac: newMAC()}, nil
}

// MaxPayload returns the Codec's payload limit.
func (c *Codec) MaxPayload() int { return c.maxPayload }

// Encode appends the packet (h, payload), sealed with the key of h.Tenant,
// to dst and returns the extended slice. It allocates nothing when dst has
// room for HeaderSize+len(payload) more bytes. The header must pass the
// checks Decode applies (spec/wire.md, Validation), so whatever Encode
// writes, Decode reads back as (h, payload). On error dst is returned
// unchanged.
//
// To seal a payload in place, build it at dst[len(dst)+HeaderSize:] and
// pass that slice; otherwise payload must not overlap the HeaderSize bytes
// after dst's end, where the header goes.
func (c *Codec) Encode(dst []byte, h *Header, payload []byte) ([]byte, error) {
	if len(payload) > c.maxPayload {
		return dst, errorf("length", ErrTooLarge, "%d bytes, the limit is %d", len(payload), c.maxPayload)
	}
	if err := h.check(len(payload)); err != nil {
		return dst, err
	}
	key := c.keys.Key(h.Tenant)
	if key == nil {
		return dst, errorf("tenant", ErrUnknownTenant, "no key for tenant %d", h.Tenant)
	}
	start := len(dst)
	dst = slices.Grow(dst, HeaderSize+len(payload))
	dst = dst[:start+HeaderSize]
	hdr := dst[start:]
	putHeader(hdr, h, len(payload))
	dst = append(dst, payload...)
	copy(hdr[offTag:], c.mac.tag(key, hdr, dst[start+HeaderSize:]))
	return dst, nil
}

// errBadMAC is shared, so that a flood of forgeries costs the MAC and no
// allocation; the packet's fields are not worth quoting when it fails.
var errBadMAC = &Error{Field: "tag", Msg: "bad MAC", Err: ErrMAC}

// Decode parses a datagram as Parse does and then checks its MAC with the
// key of its tenant. The returned Payload aliases b. Any problem is an
// *Error naming the field, and Decode never panics.
func (c *Codec) Decode(b []byte) (Packet, error) {
	p, err := Parse(b, c.maxPayload)
	if err != nil {
		return Packet{}, err
	}
	key := c.keys.Key(p.Tenant)
	if key == nil {
		return Packet{}, errorf("tenant", ErrUnknownTenant, "no key for tenant %d", p.Tenant)
	}
	if !equalTag(b[offTag:HeaderSize], c.mac.tag(key, b, p.Payload)) {
		return Packet{}, errBadMAC
	}
	return p, nil
}

// Parse checks a datagram's structure (size, magic, version, payload
// length against the datagram and against maxPayload, type, flags, status)
// but not its MAC: the fields it returns are not authenticated. It is for
// steering a packet to a queue before a core opens it, and for tools;
// nothing may act on a packet that Decode did not accept. maxPayload 0
// means MaxPayload. The returned Payload aliases b.
func Parse(b []byte, maxPayload int) (Packet, error) {
	if maxPayload <= 0 {
		maxPayload = MaxPayload
	}
	if len(b) < HeaderSize {
		return Packet{}, errorf("header", ErrShort, "%d bytes, a header needs %d", len(b), HeaderSize)
	}
	if m := binary.LittleEndian.Uint16(b[offMagic:]); m != Magic {
		return Packet{}, errorf("magic", ErrMagic, "%#04x is not %#04x", m, Magic)
	}
	if v := b[offVersion]; v != Version {
		return Packet{}, errorf("version", ErrVersion, "%d is not supported (only %d)", v, Version)
	}
	length := binary.LittleEndian.Uint32(b[offLength:])
	have := len(b) - HeaderSize
	switch {
	case uint64(length) > uint64(maxPayload):
		return Packet{}, errorf("length", ErrTooLarge, "%d bytes, the limit is %d", length, maxPayload)
	case int(length) > have:
		return Packet{}, errorf("length", ErrLength, "%d, but the datagram has only %d payload bytes", length, have)
	case int(length) < have:
		return Packet{}, errorf("length", ErrLength, "%d, but the datagram has %d payload bytes (%d trailing)", length, have, have-int(length))
	}
	p := Packet{Header: Header{
		Type:      Type(b[offType]),
		Flags:     Flags(binary.LittleEndian.Uint16(b[offFlags:])),
		Credits:   binary.LittleEndian.Uint16(b[offCredits:]),
		Tenant:    binary.LittleEndian.Uint32(b[offTenant:]),
		Handler:   binary.LittleEndian.Uint32(b[offHandler:]),
		RequestID: binary.LittleEndian.Uint64(b[offRequestID:]),
		Src:       binary.LittleEndian.Uint32(b[offSrc:]),
		Dst:       binary.LittleEndian.Uint32(b[offDst:]),
		Status:    Status(binary.LittleEndian.Uint32(b[offStatus:])),
	}}
	if err := p.check(int(length)); err != nil {
		return Packet{}, err
	}
	p.Payload = b[HeaderSize:len(b):len(b)]
	return p, nil
}

// putHeader writes every field but the tag, which it zeroes.
func putHeader(b []byte, h *Header, length int) {
	binary.LittleEndian.PutUint16(b[offMagic:], Magic)
	b[offVersion] = Version
	b[offType] = byte(h.Type)
	binary.LittleEndian.PutUint16(b[offFlags:], uint16(h.Flags))
	binary.LittleEndian.PutUint16(b[offCredits:], h.Credits)
	binary.LittleEndian.PutUint32(b[offTenant:], h.Tenant)
	binary.LittleEndian.PutUint32(b[offHandler:], h.Handler)
	binary.LittleEndian.PutUint64(b[offRequestID:], h.RequestID)
	binary.LittleEndian.PutUint32(b[offSrc:], h.Src)
	binary.LittleEndian.PutUint32(b[offDst:], h.Dst)
	binary.LittleEndian.PutUint32(b[offLength:], uint32(length))
	binary.LittleEndian.PutUint32(b[offStatus:], uint32(h.Status))
	clear(b[offTag:HeaderSize])
}
