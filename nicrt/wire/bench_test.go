package wire

import (
	"fmt"
	"testing"
)

// algCodec is a Codec whose tenant 7 has a key of the given algorithm.
func algCodec(b *testing.B, alg MACAlg) *Codec {
	key, err := NewKeyAlg(alg, testSecret())
	if err != nil {
		b.Fatal(err)
	}
	c, err := NewCodec(Config{Keys: KeyMap{7: key}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchSizes runs f for each MAC algorithm and payload size.
func benchSizes(b *testing.B, f func(b *testing.B, c *Codec, n int)) {
	for _, alg := range []MACAlg{MACHMACSHA256, MACSipHash128} {
		for _, n := range []int{0, 64, 1024, MaxPayload} {
			b.Run(fmt.Sprintf("%v/%d", alg, n), func(b *testing.B) { f(b, algCodec(b, alg), n) })
		}
	}
}

// BenchmarkSeal and BenchmarkOpen: Encode (header + MAC) and Decode
// (checks + MAC) of one packet, under each MAC algorithm. README and
// spec/wire.md quote the figures of `go test ./nicrt/wire -run - -bench
// 'Seal|Open'`.
func BenchmarkSeal(b *testing.B) {
	benchSizes(b, func(b *testing.B, c *Codec, n int) {
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

func BenchmarkOpen(b *testing.B) {
	benchSizes(b, func(b *testing.B, c *Codec, n int) {
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
