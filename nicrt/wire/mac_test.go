package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refSipHash128 is SipHash-2-4-128 written from the paper's description a
// byte at a time (pad the message with zeros to 8 bytes less one, append
// its length mod 256, compress each word), independent of sipHash128's
// word loop and two-part input.
func refSipHash128(key [16]byte, msg []byte) [16]byte {
	rotl := func(x uint64, b uint) uint64 { return x<<b | x>>(64-b) }
	k0 := binary.LittleEndian.Uint64(key[:8])
	k1 := binary.LittleEndian.Uint64(key[8:])
	v := [4]uint64{k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573}
	v[1] ^= 0xee
	sipRound := func() {
		v[0] += v[1]
		v[1] = rotl(v[1], 13) ^ v[0]
		v[0] = rotl(v[0], 32)
		v[2] += v[3]
		v[3] = rotl(v[3], 16) ^ v[2]
		v[0] += v[3]
		v[3] = rotl(v[3], 21) ^ v[0]
		v[2] += v[1]
		v[1] = rotl(v[1], 17) ^ v[2]
		v[2] = rotl(v[2], 32)
	}
	padded := append([]byte(nil), msg...)
	for len(padded)%8 != 7 {
		padded = append(padded, 0)
	}
	padded = append(padded, byte(len(msg)))
	for i := 0; i < len(padded); i += 8 {
		var m uint64
		for j := 7; j >= 0; j-- {
			m = m<<8 | uint64(padded[i+j])
		}
		v[3] ^= m
		sipRound()
		sipRound()
		v[0] ^= m
	}
	var out [16]byte
	v[2] ^= 0xee
	for range 4 {
		sipRound()
	}
	binary.LittleEndian.PutUint64(out[:8], v[0]^v[1]^v[2]^v[3])
	v[1] ^= 0xdd
	for range 4 {
		sipRound()
	}
	binary.LittleEndian.PutUint64(out[8:], v[0]^v[1]^v[2]^v[3])
	return out
}

func sipTag(k0, k1 uint64, a, b []byte) []byte {
	lo, hi := sipHash128(k0, k1, a, b)
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, lo), hi)
}

// TestSipHashVectors: the 64 vectors of the SipHash reference
// implementation (github.com/veorq/SipHash, vectors.h, vectors_sip128):
// key 00 01 … 0f, message 00 01 … (i-1) for i = 0 … 63. Each message is
// also split at every multiple of 8, as the header and the payload are.
func TestSipHashVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "siphash-2-4-128.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(raw))
	if len(lines) != 64 {
		t.Fatalf("%d vectors, want 64", len(lines))
	}
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for i, line := range lines {
		want, err := hex.DecodeString(line)
		if err != nil || len(want) != 16 {
			t.Fatalf("vector %d: %q", i, line)
		}
		if ref := refSipHash128(key, msg[:i]); !bytes.Equal(ref[:], want) {
			t.Errorf("reference, %d bytes: %x, want %x", i, ref, want)
		}
		for split := 0; split <= i; split += 8 {
			if have := sipTag(k0, k1, msg[:split], msg[split:i]); !bytes.Equal(have, want) {
				t.Errorf("%d bytes split at %d: %x, want %x", i, split, have, want)
			}
		}
	}
}

// FuzzSipHash: sipHash128 agrees with the byte-at-a-time reference for
// any key, message and split on a word boundary.
func FuzzSipHash(f *testing.F) {
	f.Add(make([]byte, 16), []byte("hello, naam"), uint8(0))
	f.Add(bytes.Repeat([]byte{0xff}, 16), make([]byte, 100), uint8(5))
	f.Fuzz(func(t *testing.T, key, msg []byte, split uint8) {
		var k [16]byte
		copy(k[:], key)
		at := min(int(split)*8, len(msg)&^7)
		want := refSipHash128(k, msg)
		have := sipTag(binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[8:]), msg[:at], msg[at:])
		if !bytes.Equal(have, want[:]) {
			t.Fatalf("split at %d: %x, want %x", at, have, want)
		}
	})
}

// TestSipHashKey: the SipHash key is the first 16 bytes of
// HMAC-SHA256(secret, label), and the tag of a packet is SipHash-2-4-128
// of the header without its tag and the payload.
func TestSipHashKey(t *testing.T) {
	for _, secret := range [][]byte{testSecret(), bytes.Repeat([]byte("k"), 16), bytes.Repeat([]byte("long"), 40)} {
		k, err := NewKeyAlg(MACSipHash128, secret)
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("NAAM SipHash-2-4-128 key"))
		var want [16]byte
		copy(want[:], m.Sum(nil))
		k0, k1, ok := k.SipHashKey()
		if !ok || k0 != binary.LittleEndian.Uint64(want[:8]) || k1 != binary.LittleEndian.Uint64(want[8:]) || k.Alg() != MACSipHash128 {
			t.Fatalf("SipHashKey() = %#x %#x %v, want the HMAC of the label", k0, k1, ok)
		}
		c, err := NewCodec(Config{Keys: KeyMap{7: k}})
		if err != nil {
			t.Fatal(err)
		}
		h, payload := examplePacket()
		b := mustEncode(t, c, h, payload)
		tag := refSipHash128(want, append(append([]byte(nil), b[:offTag]...), payload...))
		if !bytes.Equal(b[offTag:HeaderSize], tag[:]) {
			t.Errorf("secret of %d bytes: tag %x, want %x", len(secret), b[offTag:HeaderSize], tag)
		}
	}
	hk := mustKey(t, testSecret())
	if _, _, ok := hk.SipHashKey(); ok || hk.Alg() != MACHMACSHA256 {
		t.Errorf("an HMAC key reports a SipHash key or alg %v", hk.Alg())
	}
	if _, err := NewKeyAlg(MACSipHash128, make([]byte, MinKeySize-1)); err == nil {
		t.Error("NewKeyAlg took a 15-byte secret")
	}
	if _, err := NewKeyAlg(MACAlg(9), testSecret()); err == nil || !strings.Contains(err.Error(), "MACAlg(9)") {
		t.Errorf("NewKeyAlg(9): %v", err)
	}
}

// TestMACAlgs: per tenant, each algorithm opens what it sealed and
// nothing else: a packet sealed for a tenant under one algorithm fails
// under the other one's key from the same secret, forged and altered
// packets fail, and neither allocates.
func TestMACAlgs(t *testing.T) {
	hk := mustKey(t, testSecret())
	sk, err := NewKeyAlg(MACSipHash128, testSecret())
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := NewCodec(Config{Keys: KeyMap{7: hk, 8: sk}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		h := randomHeader(r)
		h.Tenant = 7 + uint32(i%2)
		payload := make([]byte, r.IntN(300))
		for j := range payload {
			payload[j] = byte(r.Uint32())
		}
		if h.Type == TypeCredit {
			payload = nil
		}
		b := mustEncode(t, mixed, h, payload)
		p, err := mixed.Decode(b)
		if err != nil || p.Header != h || !bytes.Equal(p.Payload, payload) {
			t.Fatalf("round trip of %v: %v", &h, err)
		}
		// The same tenant under the other algorithm.
		swapped := KeyMap{7: sk, 8: hk}
		other, _ := NewCodec(Config{Keys: swapped})
		if _, err := other.Decode(b); !errors.Is(err, ErrMAC) {
			t.Fatalf("tenant %d's packet opened under the other algorithm: %v", h.Tenant, err)
		}
		altered := append([]byte(nil), b...)
		altered[r.IntN(len(altered))] ^= 1 << r.IntN(8)
		if _, err := mixed.Decode(altered); err == nil {
			t.Fatalf("an altered packet of tenant %d opened", h.Tenant)
		}
	}
	h, payload := examplePacket()
	h.Tenant = 8
	buf := make([]byte, 0, 2048)
	b := mustEncode(t, mixed, h, payload)
	if n := testing.AllocsPerRun(100, func() { _, _ = mixed.Encode(buf[:0], &h, payload) }); n != 0 {
		t.Errorf("Encode with SipHash: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = mixed.Decode(b) }); n != 0 {
		t.Errorf("Decode with SipHash: %v allocs, want 0", n)
	}
}

func TestMACAlgNames(t *testing.T) {
	for _, tc := range []struct {
		alg  MACAlg
		name string
	}{{MACHMACSHA256, "hmac-sha256"}, {MACSipHash128, "siphash-2-4-128"}} {
		if tc.alg.String() != tc.name {
			t.Errorf("%d.String() = %q, want %q", tc.alg, tc.alg.String(), tc.name)
		}
		if a, err := ParseMACAlg(tc.name); err != nil || a != tc.alg {
			t.Errorf("ParseMACAlg(%q) = %v, %v", tc.name, a, err)
		}
	}
	if MACAlg(7).String() != "MACAlg(7)" {
		t.Errorf("MACAlg(7).String() = %q", MACAlg(7).String())
	}
	if _, err := ParseMACAlg("md5"); err == nil || !strings.Contains(err.Error(), `"md5"`) {
		t.Errorf("ParseMACAlg(md5): %v", err)
	}
}
