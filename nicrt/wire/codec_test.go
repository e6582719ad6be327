package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// testSecret is the key of the golden packet and of spec/wire.md's example:
// the 32 bytes 0x00 … 0x1f.
func testSecret() []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = byte(i)
	}
	return s
}

func mustKey(t testing.TB, secret []byte) *Key {
	t.Helper()
	k, err := NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testCodec knows tenants 7 and 8 (different keys).
func testCodec(t testing.TB, maxPayload int) *Codec {
	t.Helper()
	other := bytes.Repeat([]byte{0xa5}, 32)
	c, err := NewCodec(Config{Keys: KeyMap{7: mustKey(t, testSecret()), 8: mustKey(t, other)}, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// examplePacket is the packet of testdata/request.hexdump and spec/wire.md.
func examplePacket() (Header, []byte) {
	return Header{
		Type:      TypeRequest,
		Credits:   32,
		Tenant:    7,
		Handler:   3,
		RequestID: 0x0102030405060708,
		Src:       1,
		Dst:       2,
	}, []byte("hello, naam")
}

func mustEncode(t testing.TB, c *Codec, h Header, payload []byte) []byte {
	t.Helper()
	b, err := c.Encode(nil, &h, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randomHeader(r *rand.Rand) Header {
	h := Header{
		Type:      Type(1 + r.IntN(int(maxType))),
		Flags:     Flags(r.Uint32()) & knownFlags,
		Credits:   uint16(r.Uint32()),
		Tenant:    7 + uint32(r.IntN(2)),
		Handler:   r.Uint32(),
		RequestID: r.Uint64(),
		Src:       r.Uint32(),
		Dst:       r.Uint32(),
	}
	if h.Type == TypeErrorReply {
		h.Status = Status(1 + r.Uint32N(1<<32-1))
	}
	return h
}

func TestRoundTrip(t *testing.T) {
	for _, limit := range []int{MaxPayload, MaxJumboPayload} {
		c := testCodec(t, limit)
		r := rand.New(rand.NewPCG(1, uint64(limit)))
		for i := range 2000 {
			h := randomHeader(r)
			n := 0
			switch {
			case h.Type == TypeCredit:
			case i%10 == 0:
				n = limit
			default:
				n = r.IntN(limit + 1)
			}
			payload := make([]byte, n)
			for j := range payload {
				payload[j] = byte(r.Uint32())
			}
			prefix := []byte("prefix")
			b, err := c.Encode(append([]byte(nil), prefix...), &h, payload)
			if err != nil {
				t.Fatalf("Encode(%v, %d bytes): %v", &h, n, err)
			}
			if !bytes.HasPrefix(b, prefix) || len(b) != len(prefix)+HeaderSize+n {
				t.Fatalf("Encode appended %d bytes to the prefix, want %d", len(b)-len(prefix), HeaderSize+n)
			}
			datagram := b[len(prefix):]
			p, err := c.Decode(datagram)
			if err != nil {
				t.Fatalf("Decode(Encode(%v)): %v", &h, err)
			}
			if p.Header != h || !bytes.Equal(p.Payload, payload) {
				t.Fatalf("round trip: have %v, %d bytes; want %v, %d bytes", &p.Header, len(p.Payload), &h, n)
			}
			if n > 0 && &p.Payload[0] != &datagram[HeaderSize] {
				t.Fatal("Payload does not alias the datagram")
			}
			if again := mustEncode(t, c, p.Header, p.Payload); !bytes.Equal(again, datagram) {
				t.Fatal("re-encoding a decoded packet gave other bytes")
			}
		}
	}
}

// TestEncodeInPlace: a payload already at its place after the header space
// is sealed without moving.
func TestEncodeInPlace(t *testing.T) {
	c := testCodec(t, 0)
	h, payload := examplePacket()
	buf := make([]byte, 100, 256)
	copy(buf[100+HeaderSize:cap(buf)], payload)
	out, err := c.Encode(buf, &h, buf[100+HeaderSize:100+HeaderSize+len(payload)])
	if err != nil {
		t.Fatal(err)
	}
	if want := mustEncode(t, c, h, payload); !bytes.Equal(out[100:], want) {
		t.Fatalf("in place:\n%x\nwant\n%x", out[100:], want)
	}
}

func TestEncodeErrors(t *testing.T) {
	c := testCodec(t, 0)
	for _, tc := range []struct {
		name     string
		h        Header
		n        int
		field    string
		sentinel error
	}{
		{"too large", Header{Type: TypeRequest, Tenant: 7}, MaxPayload + 1, "length", ErrTooLarge},
		{"type 0", Header{Type: 0, Tenant: 7}, 0, "type", ErrType},
		{"type 6", Header{Type: 6, Tenant: 7}, 0, "type", ErrType},
		{"unknown flag", Header{Type: TypeRequest, Tenant: 7, Flags: 1 << 15}, 0, "flags", ErrFlags},
		{"status in a reply", Header{Type: TypeReply, Tenant: 7, Status: 5}, 0, "status", ErrStatus},
		{"error reply without status", Header{Type: TypeErrorReply, Tenant: 7}, 0, "status", ErrStatus},
		{"credit with payload", Header{Type: TypeCredit, Tenant: 7}, 1, "length", ErrLength},
		{"unknown tenant", Header{Type: TypeRequest, Tenant: 9}, 0, "tenant", ErrUnknownTenant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := c.Encode(dst, &tc.h, make([]byte, tc.n))
			checkError(t, err, tc.field, tc.sentinel)
			if string(out) != "keep" {
				t.Errorf("dst changed to %q", out)
			}
		})
	}
}

func checkError(t *testing.T, err error, field string, sentinel error) {
	t.Helper()
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v is not a *wire.Error", err)
	}
	if we.Field != field || !errors.Is(err, sentinel) {
		t.Fatalf("error %q: field %q, want %q wrapping %v", err, we.Field, field, sentinel)
	}
	if !strings.HasPrefix(err.Error(), "wire: "+field+": ") {
		t.Fatalf("error %q does not start with %q", err, "wire: "+field+": ")
	}
}

// TestDecodeMalformed: each way a datagram can be wrong, and the field its
// error names.
func TestDecodeMalformed(t *testing.T) {
	c := testCodec(t, 0)
	h, payload := examplePacket()
	good := mustEncode(t, c, h, payload)
	put16 := func(off int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint16(b[off:], v); return b }
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[off:], v); return b }
	}
	for _, tc := range []struct {
		name     string
		have     func([]byte) []byte
		field    string
		sentinel error
		msg      string
	}{
		{"empty", func([]byte) []byte { return nil }, "header", ErrShort, "0 bytes, a header needs 56"},
		{"one byte", func(b []byte) []byte { return b[:1] }, "header", ErrShort, "1 bytes"},
		{"header less a byte", func(b []byte) []byte { return b[:HeaderSize-1] }, "header", ErrShort, "55 bytes"},
		{"bad magic", put16(offMagic, 0x4e41), "magic", ErrMagic, "0x4e41 is not 0x414e"},
		{"zero magic", put16(offMagic, 0), "magic", ErrMagic, "0x0000 is not"},
		{"version 0", func(b []byte) []byte { b[offVersion] = 0; return b }, "version", ErrVersion, "0 is not supported (only 1)"},
		{"version 2", func(b []byte) []byte { b[offVersion] = 2; return b }, "version", ErrVersion, "2 is not supported"},
		{"type 0", func(b []byte) []byte { b[offType] = 0; return b }, "type", ErrType, "0 is not a packet type"},
		{"type 6", func(b []byte) []byte { b[offType] = 6; return b }, "type", ErrType, "6 is not a packet type"},
		{"type 255", func(b []byte) []byte { b[offType] = 255; return b }, "type", ErrType, "255 is not"},
		{"unknown flag", put16(offFlags, 1<<4), "flags", ErrFlags, "unknown bits 0x0010"},
		{"length longer than the datagram", put32(offLength, uint32(len(payload)+1)), "length", ErrLength, "12, but the datagram has only 11 payload bytes"},
		{"datagram cut short", func(b []byte) []byte { return b[:len(b)-1] }, "length", ErrLength, "11, but the datagram has only 10"},
		{"header only", func(b []byte) []byte { return b[:HeaderSize] }, "length", ErrLength, "has only 0 payload bytes"},
		{"length shorter than the datagram", put32(offLength, 4), "length", ErrLength, "4, but the datagram has 11 payload bytes (7 trailing)"},
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }, "length", ErrLength, "(1 trailing)"},
		{"length 2^32-1", put32(offLength, 1<<32-1), "length", ErrTooLarge, "4294967295 bytes, the limit is 1416"},
		{"oversized payload", func(b []byte) []byte {
			p, _ := Parse(b, 0)
			return mustEncode(t, testCodec(t, MaxJumboPayload), p.Header, make([]byte, MaxPayload+1))
		}, "length", ErrTooLarge, "1417 bytes, the limit is 1416"},
		{"status in a request", put32(offStatus, 9), "status", ErrStatus, "0x9 in a request packet"},
		{"error reply without status", func(b []byte) []byte { b[offType] = byte(TypeErrorReply); return b }, "status", ErrStatus, "0 in an error reply"},
		{"credit with payload", func(b []byte) []byte { b[offType] = byte(TypeCredit); return b }, "length", ErrLength, "11 in a credit packet"},
		{"unknown tenant", put32(offTenant, 9), "tenant", ErrUnknownTenant, "no key for tenant 9"},
		{"tag flipped", func(b []byte) []byte { b[offTag] ^= 1; return b }, "tag", ErrMAC, "bad MAC"},
		{"tag zero", func(b []byte) []byte { clear(b[offTag:HeaderSize]); return b }, "tag", ErrMAC, "bad MAC"},
		{"payload altered", func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }, "tag", ErrMAC, "bad MAC"},
		{"handler altered", put32(offHandler, 4), "tag", ErrMAC, "bad MAC"},
		{"request id altered", func(b []byte) []byte { b[offRequestID] ^= 1; return b }, "tag", ErrMAC, "bad MAC"},
		{"credits altered", put16(offCredits, 1000), "tag", ErrMAC, "bad MAC"},
		{"retransmit flag added", put16(offFlags, uint16(FlagRetransmit)), "tag", ErrMAC, "bad MAC"},
		{"forged tenant", put32(offTenant, 8), "tag", ErrMAC, "bad MAC"},
		{"sent to another node", put32(offDst, 3), "tag", ErrMAC, "bad MAC"},
		{"other source", put32(offSrc, 5), "tag", ErrMAC, "bad MAC"},
		{"sealed with another tenant's key", func(b []byte) []byte {
			p, _ := Parse(b, 0)
			p.Tenant = 8
			b = mustEncode(t, c, p.Header, p.Payload)
			binary.LittleEndian.PutUint32(b[offTenant:], 7)
			return b
		}, "tag", ErrMAC, "bad MAC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.have(append([]byte(nil), good...))
			p, err := c.Decode(b)
			checkError(t, err, tc.field, tc.sentinel)
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
			if !reflect.DeepEqual(p, Packet{}) {
				t.Errorf("Decode returned %v with its error", &p.Header)
			}
		})
	}
}

// TestParseSkipsMAC: Parse accepts what Decode rejects only for the MAC.
func TestParseSkipsMAC(t *testing.T) {
	c := testCodec(t, 0)
	h, payload := examplePacket()
	b := mustEncode(t, c, h, payload)
	b[offTag] ^= 1
	p, err := Parse(b, 0)
	if err != nil || p.Header != h || string(p.Payload) != string(payload) {
		t.Fatalf("Parse: %v, %v", &p.Header, err)
	}
	if _, err := c.Decode(b); !errors.Is(err, ErrMAC) {
		t.Fatalf("Decode: %v, want ErrMAC", err)
	}
}

func TestJumbo(t *testing.T) {
	small, jumbo := testCodec(t, 0), testCodec(t, MaxJumboPayload)
	h := Header{Type: TypeRequest, Tenant: 7}
	b := mustEncode(t, jumbo, h, make([]byte, MaxJumboPayload))
	if len(b) != JumboMTU-IPv4UDPOverhead {
		t.Fatalf("jumbo datagram of %d bytes, want %d", len(b), JumboMTU-IPv4UDPOverhead)
	}
	if _, err := jumbo.Decode(b); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Decode(b); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 1500-MTU codec took a jumbo packet: %v", err)
	}
	if _, err := jumbo.Encode(nil, &h, make([]byte, MaxJumboPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Encode over the jumbo limit: %v", err)
	}
}

func TestNewCodec(t *testing.T) {
	keys := KeyMap{}
	for _, tc := range []struct {
		cfg  Config
		want int
		err  string
	}{
		{Config{Keys: keys}, MaxPayload, ""},
		{Config{Keys: keys, MaxPayload: 100}, 100, ""},
		{Config{Keys: keys, MaxPayload: MaxDatagramPayload}, MaxDatagramPayload, ""},
		{Config{Keys: keys, MaxPayload: MaxDatagramPayload + 1}, 0, "outside 0…65451"},
		{Config{Keys: keys, MaxPayload: -1}, 0, "outside"},
		{Config{}, 0, "Keys is nil"},
	} {
		c, err := NewCodec(tc.cfg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NewCodec(%+v): %v, want an error containing %q", tc.cfg, err, tc.err)
			}
			continue
		}
		if err != nil || c.MaxPayload() != tc.want {
			t.Errorf("NewCodec(%+v): limit %v, %v; want %d", tc.cfg, c, err, tc.want)
		}
	}
}

func TestPayloadLimit(t *testing.T) {
	for _, tc := range []struct {
		mtu  int
		ipv6 bool
		want int
	}{
		{EthernetMTU, false, 1416}, {EthernetMTU, true, 1396}, {JumboMTU, false, 8916}, {JumboMTU, true, 8896},
		{84, false, 0}, {85, false, 1}, {104, true, 0}, {105, true, 1}, {1 << 20, false, MaxDatagramPayload},
	} {
		if have := PayloadLimit(tc.mtu, tc.ipv6); have != tc.want {
			t.Errorf("PayloadLimit(%d, %v) = %d, want %d", tc.mtu, tc.ipv6, have, tc.want)
		}
	}
	if MaxPayload != 1416 || MaxJumboPayload != 8916 || MaxDatagramPayload != 65451 {
		t.Errorf("limits %d %d %d", MaxPayload, MaxJumboPayload, MaxDatagramPayload)
	}
}

// TestHMACReference: the tag is HMAC-SHA256 over the header less its tag
// and the payload, as crypto/hmac computes it, cut to 16 bytes; keys longer
// than a block are hashed first.
func TestHMACReference(t *testing.T) {
	for _, secret := range [][]byte{testSecret(), bytes.Repeat([]byte("k"), 64), bytes.Repeat([]byte("long"), 40)} {
		c, err := NewCodec(Config{Keys: KeyMap{7: mustKey(t, secret)}})
		if err != nil {
			t.Fatal(err)
		}
		h, payload := examplePacket()
		b := mustEncode(t, c, h, payload)
		want := referenceTag(secret, append(append([]byte(nil), b[:offTag]...), payload...))
		if !bytes.Equal(b[offTag:HeaderSize], want) {
			t.Errorf("key of %d bytes: tag %x, want %x", len(secret), b[offTag:HeaderSize], want)
		}
	}
}

func TestStatusRuntime(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		k    uint32
		isRT bool
	}{{StatusOK, 0, false}, {5, 0, false}, {MaxHandlerStatus, 0, false}, {StatusRuntime, 0, true}, {StatusRuntime + 12, 12, true}, {1<<32 - 1, 1<<31 - 1, true}} {
		if k, ok := tc.s.Runtime(); k != tc.k || ok != tc.isRT {
			t.Errorf("%#x.Runtime() = %d, %v; want %d, %v", uint32(tc.s), k, ok, tc.k, tc.isRT)
		}
	}
}

func TestNewKeyShort(t *testing.T) {
	if _, err := NewKey(make([]byte, MinKeySize-1)); err == nil {
		t.Fatal("NewKey took a 15-byte secret")
	}
}

func TestAllocs(t *testing.T) {
	c := testCodec(t, 0)
	h, payload := examplePacket()
	buf := make([]byte, 0, 2048)
	b := mustEncode(t, c, h, payload)
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Encode(buf[:0], &h, payload) }); n != 0 {
		t.Errorf("Encode: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Decode(b) }); n != 0 {
		t.Errorf("Decode: %v allocs, want 0", n)
	}
	forged := append([]byte(nil), b...)
	forged[offTag] ^= 1
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Decode(forged) }); n != 0 {
		t.Errorf("Decode of a forgery: %v allocs, want 0", n)
	}
	var w Window
	id := uint64(0)
	if n := testing.AllocsPerRun(100, func() { id += 3; w.Observe(id) }); n != 0 {
		t.Errorf("Window.Observe: %v allocs, want 0", n)
	}
}

// TestCodecsConcurrent: Codecs on several goroutines share Keys (run with
// -race).
func TestCodecsConcurrent(t *testing.T) {
	keys := KeyMap{7: mustKey(t, testSecret())}
	h, payload := examplePacket()
	done := make(chan error)
	for range 4 {
		go func() {
			c, err := NewCodec(Config{Keys: keys})
			if err == nil {
				for range 200 {
					var b []byte
					if b, err = c.Encode(nil, &h, payload); err != nil {
						break
					}
					if _, err = c.Decode(b); err != nil {
						break
					}
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		have fmtStringer
		want string
	}{
		{TypeErrorReply, "error-reply"},
		{Type(9), "Type(9)"},
		{FlagRetransmit | FlagForwarded, "retransmit|forwarded"},
		{Flags(0), "0"},
		{FlagForwarded | 1<<9, "forwarded|0x200"},
		{Flags(1 << 4), "0x10"}, {FlagProgram | FlagOneWay, "program|one-way"},
		{Status(5), "handler error 5"},
		{MaxHandlerStatus, "handler error 2147483647"},
		{StatusRuntime + 10, "runtime status 10"},
		{StatusOK, "ok"},
		{StatusRuntime, "runtime status 0"},
		{OpStats, "stats"},
		{IDTooOld, "too-old"},
		{&Header{Type: TypeErrorReply, Tenant: 7, Handler: 3, RequestID: 9, Src: 2, Dst: 1, Status: StatusRuntime + 3, Flags: FlagForwarded},
			"error-reply tenant=7 handler=3 id=9 src=2 dst=1 credits=0 flags=forwarded status=runtime status 3"},
	} {
		if have := tc.have.String(); have != tc.want {
			t.Errorf("String() = %q, want %q", have, tc.want)
		}
	}
}

type fmtStringer interface{ String() string }
