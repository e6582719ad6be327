package wire

import (
	"bytes"
	"reflect"
	"testing"
)

// twoKeys gives odd tenants one key and even tenants another, so that the
// fuzzer reaches the checks after the key lookup under both algorithms.
type twoKeys struct{ odd, even *Key }

func (k twoKeys) Key(tenant uint32) *Key {
	if tenant%2 == 1 {
		return k.odd
	}
	return k.even
}

// FuzzDecode: Decode and Parse never panic, under either MAC algorithm; whatever Parse accepts
// re-encodes to the same bytes but the tag, and whatever Decode accepts
// re-encodes to exactly the same bytes.
func FuzzDecode(f *testing.F) {
	c := testCodec(f, 0)
	h, payload := examplePacket()
	f.Add(mustEncode(f, c, h, payload))
	f.Add(mustEncode(f, c, Header{Type: TypeCredit, Tenant: 8, Credits: 64, RequestID: 5}, nil))
	f.Add(mustEncode(f, c, Header{Type: TypeErrorReply, Tenant: 7, Status: StatusRuntime + 3, Flags: FlagForwarded}, []byte("no")))
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	sip, err := NewKeyAlg(MACSipHash128, testSecret())
	if err != nil {
		f.Fatal(err)
	}
	fuzz, err := NewCodec(Config{Keys: twoKeys{mustKey(f, testSecret()), sip}, MaxPayload: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b, 4096)
		if err != nil {
			if _, derr := fuzz.Decode(b); derr == nil {
				t.Fatalf("Decode took what Parse rejected: %v", err)
			}
			return
		}
		again, err := fuzz.Encode(nil, &p.Header, p.Payload)
		if err != nil {
			t.Fatalf("Encode of a parsed packet: %v", err)
		}
		if len(again) != len(b) || !bytes.Equal(again[:offTag], b[:offTag]) || !bytes.Equal(again[HeaderSize:], b[HeaderSize:]) {
			t.Fatalf("re-encoded\n%x\nwant\n%x", again, b)
		}
		sealed, err := fuzz.Decode(again)
		if err != nil || sealed.Header != p.Header || !bytes.Equal(sealed.Payload, p.Payload) {
			t.Fatalf("Decode of the re-sealed packet: %v", err)
		}
		dp, err := fuzz.Decode(b)
		if (err == nil) != bytes.Equal(again, b) {
			t.Fatalf("Decode: %v, but the tag matches: %v", err, bytes.Equal(again, b))
		}
		if err == nil && dp.Header != p.Header {
			t.Fatalf("Decode and Parse disagree: %v, %v", &dp.Header, &p.Header)
		}
	})
}

// FuzzControl: every control decoder never panics, and what it accepts
// re-encodes canonically: encoding, decoding and encoding again gives the
// same bytes and an equal body.
func FuzzControl(f *testing.F) {
	for _, m := range controlSamples() {
		b, err := AppendControl(nil, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x94, 0xa1, 't', 0x01, 0xc2, 0xa4, 'h', 'o', 's', 't'})
	f.Add([]byte{0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []Control{new(Install), new(InstallReply), new(Uninstall), new(Register), new(RegisterReply), new(StatsRequest), new(StatsReply), new(DescribeRequest), new(DescribeReply), new(Unregister)} {
			if UnmarshalControl(b, m) != nil {
				continue
			}
			canonical, err := AppendControl(nil, m)
			if err != nil {
				t.Fatalf("%T decoded but does not encode: %v", m, err)
			}
			back := newLike(m)
			if err := UnmarshalControl(canonical, back); err != nil {
				t.Fatalf("%T: the canonical form does not decode: %v", m, err)
			}
			if !reflect.DeepEqual(back, m) {
				t.Fatalf("%T: %#v decoded back as %#v", m, m, back)
			}
			if again, _ := AppendControl(nil, back); !bytes.Equal(again, canonical) {
				t.Fatalf("%T: canonical form not stable: %x then %x", m, canonical, again)
			}
		}
		for op := Op(0); op <= maxOp+1; op++ {
			_, _ = ParseControl(op, b)
		}
	})
}
