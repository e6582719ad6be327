package wire

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden pins the bytes of spec/wire.md's example packet, sealed
// under each MAC algorithm: a format change shows up here (regenerate with
// -update) and in the spec.
func TestGolden(t *testing.T) {
	spec, err := os.ReadFile("../../spec/wire.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		alg  MACAlg
		file string
	}{{MACHMACSHA256, "request.hexdump"}, {MACSipHash128, "request-siphash.hexdump"}} {
		key, err := NewKeyAlg(tc.alg, testSecret())
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCodec(Config{Keys: KeyMap{7: key}})
		if err != nil {
			t.Fatal(err)
		}
		h, payload := examplePacket()
		dump := hex.Dump(mustEncode(t, c, h, payload))
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if dump != string(want) {
			t.Fatalf("example packet (%v):\n%s\nwant (%s):\n%s", tc.alg, dump, path, want)
		}
		b := undump(t, string(want))
		p, err := c.Decode(b)
		if err != nil || p.Header != h || !bytes.Equal(p.Payload, payload) {
			t.Fatalf("the golden packet (%v) decodes as %v %q, %v", tc.alg, &p.Header, p.Payload, err)
		}
		if !strings.Contains(string(spec), dump) {
			t.Errorf("spec/wire.md does not show the golden hexdump (%v):\n%s", tc.alg, dump)
		}
	}
}

// undump reads hex.Dump's format back.
func undump(t *testing.T, dump string) []byte {
	var b []byte
	for _, line := range strings.Split(strings.TrimSpace(dump), "\n") {
		if len(line) < 10 {
			continue
		}
		hexPart, _, _ := strings.Cut(line[10:], "|")
		raw, err := hex.DecodeString(strings.Join(strings.Fields(hexPart), ""))
		if err != nil {
			t.Fatalf("undump %q: %v", line, err)
		}
		b = append(b, raw...)
	}
	return b
}
