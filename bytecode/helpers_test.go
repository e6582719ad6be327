package bytecode

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// hexBytes decodes "b7 00 00 00 01 00 00 00"-style text.
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assembleBytes assembles src and encodes it, failing the test on errors.
func assembleBytes(t testing.TB, src string) []byte {
	t.Helper()
	insns, err := Assemble(src)
	if err != nil {
		t.Fatalf("Assemble:\n%+v\nsource:\n%s", err, src)
	}
	raw, err := Encode(insns)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return raw
}

// equalBytes reports a difference slot by slot.
func equalBytes(t testing.TB, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	t.Errorf("bytes differ:\ngot  % x\nwant % x", got, want)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
