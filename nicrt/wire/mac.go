package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"hash"
	"math/bits"
)

// MinKeySize is the shortest secret NewKey accepts.
const MinKeySize = 16

// MACAlg is a tenant's MAC algorithm (spec/wire.md, Authentication). Both
// produce a TagSize-byte tag over the same input; a tenant's packets all
// use its key's algorithm. Numbers are stable; new ones are appended.
type MACAlg uint8

const (
	// MACHMACSHA256 is HMAC-SHA256 truncated to 128 bits, the default.
	MACHMACSHA256 MACAlg = iota
	// MACSipHash128 is SipHash-2-4 with its 128-bit output, keyed with
	// 128 bits derived from the tenant's secret: about a tenth of
	// HMAC-SHA256's cost in eBPF, where there is no SHA-256 instruction,
	// so that the XDP tier can open and seal the tenant's packets.
	MACSipHash128
	maxMACAlg = MACSipHash128
)

var macAlgNames = [...]string{
	MACHMACSHA256: "hmac-sha256",
	MACSipHash128: "siphash-2-4-128",
}

func (a MACAlg) String() string {
	if a <= maxMACAlg {
		return macAlgNames[a]
	}
	return fmt.Sprintf("MACAlg(%d)", uint8(a))
}

// ParseMACAlg reads an algorithm's name as String writes it.
func ParseMACAlg(s string) (MACAlg, error) {
	for a, name := range macAlgNames {
		if s == name {
			return MACAlg(a), nil
		}
	}
	return 0, fmt.Errorf("wire: MAC algorithm %q is not one of %q, %q", s, macAlgNames[MACHMACSHA256], macAlgNames[MACSipHash128])
}

// sipKeyLabel is the message of the HMAC that turns a tenant's secret into
// its SipHash key.
const sipKeyLabel = "NAAM SipHash-2-4-128 key"

// Key is a tenant's MAC key: its algorithm and what that algorithm needs,
// computed once so that sealing a packet hashes only the packet (for
// HMAC-SHA256, the inner and outer states after their pad blocks). A Key
// is immutable and safe for concurrent use.
type Key struct {
	alg          MACAlg
	inner, outer []byte    // HMAC-SHA256: marshalled sha256 states
	sip          [2]uint64 // SipHash: k0, k1
}

// NewKey derives an HMAC-SHA256 Key from a tenant's secret, at least
// MinKeySize bytes (32 random bytes recommended; longer than 64 is first
// hashed, as HMAC does). It is NewKeyAlg(MACHMACSHA256, secret).
func NewKey(secret []byte) (*Key, error) {
	return NewKeyAlg(MACHMACSHA256, secret)
}

// NewKeyAlg derives a Key of the given algorithm from a tenant's secret,
// at least MinKeySize bytes (32 random bytes recommended). A SipHash key is
// the first 16 bytes of HMAC-SHA256(secret, "NAAM SipHash-2-4-128 key"),
// read as two little-endian words k0 and k1.
func NewKeyAlg(alg MACAlg, secret []byte) (*Key, error) {
	if len(secret) < MinKeySize {
		return nil, fmt.Errorf("wire: key of %d bytes, at least %d needed", len(secret), MinKeySize)
	}
	switch alg {
	case MACHMACSHA256:
		return newHMACKey(secret)
	case MACSipHash128:
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(sipKeyLabel))
		sum := m.Sum(nil)
		k := &Key{alg: alg}
		k.sip[0] = binary.LittleEndian.Uint64(sum[0:])
		k.sip[1] = binary.LittleEndian.Uint64(sum[8:])
		return k, nil
	}
	return nil, fmt.Errorf("wire: %v is not a MAC algorithm", alg)
}

func newHMACKey(secret []byte) (*Key, error) {
	block := make([]byte, sha256.BlockSize)
	if len(secret) > sha256.BlockSize {
		sum := sha256.Sum256(secret)
		secret = sum[:]
	}
	k := &Key{alg: MACHMACSHA256}
	for _, pad := range []struct {
		xor   byte
		state *[]byte
	}{{0x36, &k.inner}, {0x5c, &k.outer}} {
		clear(block)
		copy(block, secret)
		for i := range block {
			block[i] ^= pad.xor
		}
		h := sha256.New()
		h.Write(block)
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("wire: %w", err) // sha256 always marshals
		}
		*pad.state = state
	}
	return k, nil
}

// Alg returns the key's algorithm.
func (k *Key) Alg() MACAlg { return k.alg }

// SipHashKey returns the SipHash key, for a runtime that seals the
// tenant's packets outside this package (the XDP tier loads it into the
// kernel); ok is false for a key of another algorithm.
func (k *Key) SipHashKey() (k0, k1 uint64, ok bool) {
	if k.alg != MACSipHash128 {
		return 0, 0, false
	}
	return k.sip[0], k.sip[1], true
}

// Keys gives the key of a tenant, or nil when the tenant has none (its
// packets are rejected with ErrUnknownTenant). Implementations must be
// safe for concurrent use when Codecs on several goroutines share them.
type Keys interface {
	Key(tenant uint32) *Key
}

// KeyMap is a fixed set of tenant keys. Reading it concurrently is safe;
// a runtime that adds tenants while packets flow needs its own Keys.
type KeyMap map[uint32]*Key

// Key implements Keys.
func (m KeyMap) Key(tenant uint32) *Key { return m[tenant] }

// mac is the hash state of one Codec: HMAC-SHA256 restarted from a Key's
// precomputed states, so a tag costs no allocation; SipHash needs no state.
type mac struct {
	inner, outer hash.Hash
	sum          [sha256.Size]byte
}

func newMAC() mac {
	return mac{inner: sha256.New(), outer: sha256.New()}
}

// tag returns the key's MAC of header[:40] ‖ payload, TagSize bytes. The
// returned slice is valid until the next call.
func (m *mac) tag(k *Key, header, payload []byte) []byte {
	if k.alg == MACSipHash128 {
		lo, hi := sipHash128(k.sip[0], k.sip[1], header[:macHeaderSize], payload)
		binary.LittleEndian.PutUint64(m.sum[0:], lo)
		binary.LittleEndian.PutUint64(m.sum[8:], hi)
		return m.sum[:TagSize]
	}
	// UnmarshalBinary cannot fail on a state that MarshalBinary wrote.
	_ = m.inner.(encoding.BinaryUnmarshaler).UnmarshalBinary(k.inner)
	m.inner.Write(header[:macHeaderSize])
	m.inner.Write(payload)
	sum := m.inner.Sum(m.sum[:0])
	_ = m.outer.(encoding.BinaryUnmarshaler).UnmarshalBinary(k.outer)
	m.outer.Write(sum)
	return m.outer.Sum(m.sum[:0])[:TagSize]
}

// equalTag compares tags in constant time.
func equalTag(a, b []byte) bool { return hmac.Equal(a, b) }

// sipHash128 is SipHash-2-4 with 128-bit output (Aumasson and Bernstein;
// the reference implementation's siphash.c with outlen 16) of the message
// a ‖ b under the key (k0, k1); len(a) must be a multiple of 8, so that a
// ends on a block boundary. It returns the tag's two little-endian words:
// the first 8 bytes of the tag are lo.
func sipHash128(k0, k1 uint64, a, b []byte) (lo, hi uint64) {
	total := len(a) + len(b)
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d ^ 0xee
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	compress := func(m uint64) {
		v3 ^= m
		round()
		round()
		v0 ^= m
	}
	for ; len(a) >= 8; a = a[8:] {
		compress(binary.LittleEndian.Uint64(a))
	}
	for ; len(b) >= 8; b = b[8:] {
		compress(binary.LittleEndian.Uint64(b))
	}
	last := uint64(total) << 56
	for i, c := range b {
		last |= uint64(c) << (8 * i)
	}
	compress(last)
	v2 ^= 0xee
	round()
	round()
	round()
	round()
	lo = v0 ^ v1 ^ v2 ^ v3
	v1 ^= 0xdd
	round()
	round()
	round()
	round()
	hi = v0 ^ v1 ^ v2 ^ v3
	return lo, hi
}
