package xdp

import (
	"encoding/binary"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/verifier"
)

// The test network: a client at 198.18.0.2:40000 calls the node at
// 198.18.0.1:7000 (RFC 2544's benchmarking range).
var (
	clientMAC  = [6]byte{0x02, 0, 0, 0, 0, 0x02}
	serverMAC  = [6]byte{0x02, 0, 0, 0, 0, 0x01}
	clientIP   = [4]byte{198, 18, 0, 2}
	serverIP   = [4]byte{198, 18, 0, 1}
	clientPort = uint16(40000)
	serverPort = uint16(7000)
)

const (
	testNode   = 2
	testClient = 1
	testTenant = 7
)

// inetSum is the RFC 1071 one's complement sum of b as big-endian 16-bit
// words (an odd byte padded with zero), added to sum.
func inetSum(sum uint32, b []byte) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	return sum
}

func inetFold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// frameOf wraps a datagram in Ethernet, IPv4 and UDP headers, from the
// client to the node, with correct checksums.
func frameOf(dgram []byte) []byte {
	f := make([]byte, offWire+len(dgram))
	copy(f[0:], serverMAC[:])
	copy(f[6:], clientMAC[:])
	binary.BigEndian.PutUint16(f[12:], ethTypeIPv4)
	ip := f[offIP:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+udpLen+len(dgram)))
	binary.BigEndian.PutUint16(ip[4:], 0x1234)
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8] = 64
	ip[9] = protoUDP
	copy(ip[12:], clientIP[:])
	copy(ip[16:], serverIP[:])
	binary.BigEndian.PutUint16(ip[10:], inetFold(inetSum(0, ip[:ipLen])))
	udp := f[offUDP:]
	binary.BigEndian.PutUint16(udp[0:], clientPort)
	binary.BigEndian.PutUint16(udp[2:], serverPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpLen+len(dgram)))
	copy(f[offWire:], dgram)
	binary.BigEndian.PutUint16(udp[6:], udpChecksum(f))
	return f
}

// udpChecksum computes the UDP checksum of a frame as RFC 768 defines it,
// the checksum field taken as zero.
func udpChecksum(f []byte) uint16 {
	ip, udp := f[offIP:], f[offUDP:]
	n := int(binary.BigEndian.Uint16(udp[4:]))
	sum := inetSum(0, ip[12:20])
	sum += protoUDP + uint32(n)
	hdr := append([]byte(nil), udp[:udpLen]...)
	hdr[6], hdr[7] = 0, 0
	sum = inetSum(sum, hdr)
	sum = inetSum(sum, udp[udpLen:n])
	c := inetFold(sum)
	if c == 0 {
		c = 0xffff
	}
	return c
}

// datagramOf checks that a frame the tier sent back is a reply to the
// client (addresses swapped, lengths and both checksums right) and
// returns its datagram.
func datagramOf(t testing.TB, f []byte) []byte {
	t.Helper()
	if len(f) < offWire {
		t.Fatalf("reply frame of %d bytes", len(f))
	}
	ip, udp := f[offIP:], f[offUDP:]
	switch {
	case [6]byte(f[0:6]) != clientMAC || [6]byte(f[6:12]) != serverMAC:
		t.Fatalf("reply MACs %x → %x", f[6:12], f[0:6])
	case [4]byte(ip[12:16]) != serverIP || [4]byte(ip[16:20]) != clientIP:
		t.Fatalf("reply IPs %v → %v", ip[12:16], ip[16:20])
	case binary.BigEndian.Uint16(udp[0:]) != serverPort || binary.BigEndian.Uint16(udp[2:]) != clientPort:
		t.Fatalf("reply ports %d → %d", binary.BigEndian.Uint16(udp[0:]), binary.BigEndian.Uint16(udp[2:]))
	case int(binary.BigEndian.Uint16(ip[2:])) != len(f)-offIP:
		t.Fatalf("IP total length %d, frame has %d", binary.BigEndian.Uint16(ip[2:]), len(f)-offIP)
	case int(binary.BigEndian.Uint16(udp[4:])) != len(f)-offUDP:
		t.Fatalf("UDP length %d, frame has %d", binary.BigEndian.Uint16(udp[4:]), len(f)-offUDP)
	case inetFold(inetSum(0, ip[:ipLen])) != 0:
		t.Fatalf("bad IP checksum %#04x", binary.BigEndian.Uint16(ip[10:]))
	case ip[8] != replyTTL:
		t.Fatalf("TTL %d", ip[8])
	}
	if have, want := binary.BigEndian.Uint16(udp[6:]), udpChecksum(f); have != want {
		t.Fatalf("UDP checksum %#04x, want %#04x", have, want)
	}
	return f[offWire:]
}

// testKey is the SipHash key of the test tenant.
func testKey(t testing.TB) *wire.Key {
	t.Helper()
	k, err := wire.NewKeyAlg(wire.MACSipHash128, []byte("the xdp tests' tenant secret, 32"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// compile compiles and verifies a handler program.
func compile(t testing.TB, name, src string) (*bytecode.Object, *verifier.Report) {
	t.Helper()
	obj, err := compiler.Compile(lang.NewFileSet(), name, []byte(src))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	rep, err := verifier.VerifyObject(obj, verifier.Config{})
	if err != nil {
		t.Fatalf("verify %s: %v", name, err)
	}
	return obj, rep
}

// replySize is nicrt's reply buffer of a handler (spec/nic.md, Install):
// the extent of its declared results rounded up to 8, or maxReply.
