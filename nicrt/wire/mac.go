package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding"
	"fmt"
	"hash"
)

// MinKeySize is the shortest secret NewKey accepts.
const MinKeySize = 16

// Key is a tenant's MAC key: the HMAC-SHA256 inner and outer states after
// their pad blocks, computed once so that sealing a packet hashes only the
// packet. A Key is immutable and safe for concurrent use.
type Key struct {
	inner, outer []byte // marshalled sha256 states
}

// NewKey derives a Key from a tenant's secret, at least MinKeySize bytes
// (32 random bytes recommended; longer than 64 is first hashed, as HMAC
// does).
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinKeySize {
		return nil, fmt.Errorf("wire: key of %d bytes, at least %d needed", len(secret), MinKeySize)
	}
	block := make([]byte, sha256.BlockSize)
	if len(secret) > sha256.BlockSize {
		sum := sha256.Sum256(secret)
		secret = sum[:]
	}
	k := new(Key)
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
// precomputed states, so a tag costs no allocation.
type mac struct {
	inner, outer hash.Hash
	sum          [sha256.Size]byte
}

func newMAC() mac {
	return mac{inner: sha256.New(), outer: sha256.New()}
}

// tag returns HMAC-SHA256(key, header[:40] ‖ payload) truncated to TagSize
// bytes. The returned slice is valid until the next call.
func (m *mac) tag(k *Key, header, payload []byte) []byte {
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
