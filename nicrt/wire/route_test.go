package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

func TestRouteRoundTrip(t *testing.T) {
	for _, r := range []Route{
		{},
		{HasProgram: true, Program: 0x0102030405060708},
		{Forwarded: true, Via: 7, ReplyTo: netip.MustParseAddrPort("10.1.2.3:4000")},
		{Forwarded: true, Via: 7, ReplyTo: netip.MustParseAddrPort("[2001:db8::1]:65535"), HasProgram: true, Program: 9},
	} {
		body := []byte("payload")
		b := append(AppendRoute(nil, &r), body...)
		p := Packet{Header: Header{Type: TypeRequest, Flags: RouteFlags(&r)}, Payload: b}
		got, rest, err := SplitRoute(&p)
		if err != nil || got != r || !bytes.Equal(rest, body) {
			t.Errorf("%+v: got %+v %q %v", r, got, rest, err)
		}
	}
}

func TestRouteErrors(t *testing.T) {
	fwd := AppendRoute(nil, &Route{Forwarded: true, Via: 1, ReplyTo: netip.MustParseAddrPort("10.0.0.1:9")})
	reserved := bytes.Clone(fwd)
	reserved[6] = 1
	noPort := bytes.Clone(fwd)
	noPort[4], noPort[5] = 0, 0
	for _, c := range []struct {
		name  string
		flags Flags
		b     []byte
		msg   string
	}{
		{"program, short", FlagProgram, make([]byte, 7), "wire: route: 7 payload bytes, the flags program need a 8-byte prefix"},
		{"forwarded, short", FlagForwarded | FlagProgram, fwd, "wire: route: 24 payload bytes, the flags forwarded|program need a 32-byte prefix"},
		{"reserved", FlagForwarded, reserved, "wire: route: reserved bytes 6…7 of the forward prefix are 0x0001, not 0"},
		{"no port", FlagForwarded, noPort, "wire: route: reply address 10.0.0.1:0 is not a peer's"},
		{"unspecified", FlagForwarded, make([]byte, 24), "wire: route: reply address [::]:0 is not a peer's"},
		{"one-way forwarded", FlagForwarded | FlagOneWay, fwd, "wire: route: flags forwarded|one-way: a one-way message cannot be forwarded"},
	} {
		p := Packet{Header: Header{Type: TypeRequest, Flags: c.flags}, Payload: c.b}
		_, _, err := SplitRoute(&p)
		var we *Error
		if !errors.As(err, &we) || !errors.Is(err, ErrRoute) || we.Field != "route" || err.Error() != c.msg {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
}

// FuzzSplitRoute: SplitRoute never panics, and what it accepts re-encodes
// to the same prefix.
func FuzzSplitRoute(f *testing.F) {
	f.Add(uint16(FlagForwarded|FlagProgram), AppendRoute(nil, &Route{Forwarded: true, Via: 3, ReplyTo: netip.MustParseAddrPort("127.0.0.1:5"), HasProgram: true, Program: 1}))
	f.Add(uint16(FlagProgram), []byte("12345678"))
	f.Fuzz(func(t *testing.T, flags uint16, b []byte) {
		p := Packet{Header: Header{Type: TypeRequest, Flags: Flags(flags) & knownFlags}, Payload: b}
		r, rest, err := SplitRoute(&p)
		if err != nil {
			return
		}
		again := append(AppendRoute(nil, &r), rest...)
		if r.Forwarded && r.ReplyTo.Addr().Is4() {
			// An IPv4 address is read back plain from its mapped form:
			// compare what it means, not the bytes.
			p2 := Packet{Header: p.Header, Payload: again}
			r2, rest2, err := SplitRoute(&p2)
			if err != nil || r2 != r || !bytes.Equal(rest2, rest) {
				t.Fatalf("%+v: again %+v %v", r, r2, err)
			}
			return
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("%+v: %x, want %x", r, again, b)
		}
	})
}
