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

// TestGolden pins the bytes of spec/wire.md's example packet: a format
// change shows up here (regenerate with -update) and in the spec.
func TestGolden(t *testing.T) {
	c := testCodec(t, 0)
	h, payload := examplePacket()
	dump := hex.Dump(mustEncode(t, c, h, payload))
	path := filepath.Join("testdata", "request.hexdump")
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
		t.Fatalf("example packet:\n%s\nwant (%s):\n%s", dump, path, want)
	}
	b := undump(t, string(want))
	p, err := c.Decode(b)
	if err != nil || p.Header != h || !bytes.Equal(p.Payload, payload) {
		t.Fatalf("the golden packet decodes as %v %q, %v", &p.Header, p.Payload, err)
	}
	spec, err := os.ReadFile("../../spec/wire.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(spec), dump) {
		t.Errorf("spec/wire.md does not show the golden hexdump:\n%s", dump)
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
