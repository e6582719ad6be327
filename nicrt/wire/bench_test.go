package wire

import (
	"fmt"
	"testing"
)

// BenchmarkSeal and BenchmarkOpen: Encode (header + HMAC) and Decode
// (checks + HMAC) of one packet. README and spec/wire.md quote the figures
// of `go test ./nicrt/wire -run - -bench .`.
func BenchmarkSeal(b *testing.B) {
	for _, n := range []int{0, 64, 1024, MaxPayload} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := testCodec(b, 0)
			h, _ := examplePacket()
			payload := make([]byte, n)
			buf := make([]byte, 0, HeaderSize+n)
			b.SetBytes(int64(HeaderSize + n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Encode(buf, &h, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{0, 64, 1024, MaxPayload} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := testCodec(b, 0)
			h, _ := examplePacket()
			datagram := mustEncode(b, c, h, make([]byte, n))
			b.SetBytes(int64(len(datagram)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Decode(datagram); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse: the structural checks alone, without the MAC.
func BenchmarkParse(b *testing.B) {
	c := testCodec(b, 0)
	h, payload := examplePacket()
	datagram := mustEncode(b, c, h, payload)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(datagram, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRejectMAC: what a flood of forged packets costs a core.
func BenchmarkRejectMAC(b *testing.B) {
	c := testCodec(b, 0)
	h, _ := examplePacket()
	datagram := mustEncode(b, c, h, make([]byte, 64))
	datagram[offTag] ^= 1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(datagram); err == nil {
			b.Fatal("forgery accepted")
		}
	}
}

func BenchmarkWindow(b *testing.B) {
	var w Window
	id := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		id++
		// In order, plus a reordered id and a retransmission.
		w.Observe(id + 2)
		w.Observe(id)
		w.Observe(id)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(3*b.N), "ns/id")
}
