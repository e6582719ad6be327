package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// writeObject assembles src into an object with the given handlers and
// regions, one source line per instruction, and writes it to dir.
func writeObject(t *testing.T, dir, src string, handlers []bytecode.Handler, regions []bytecode.Region) string {
	t.Helper()
	insns, lines, err := bytecode.AssembleLines(src)
	if err != nil {
		t.Fatal(err)
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	offsets, _ := bytecode.Slots(insns)
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Source: "h.naam",
		Code: code, Handlers: handlers, Regions: regions}
	for i, s := range offsets {
		obj.Lines = append(obj.Lines, bytecode.Line{Insn: s, File: "h.naam", Line: lines[i]})
	}
	data, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "h.nobj")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVerifyObject(t *testing.T) {
	dir := t.TempDir()
	src := `ldxdw %r2, [%r1+40]
and %r2, 511
lsh %r2, 3
lddw %r3, region[0]+0
add %r3, %r2
ldxdw %r0, [%r3]
exit
ldxdw %r2, [%r1+0]
ldxdw %r0, [%r2]
exit
`
	regions := []bytecode.Region{{Name: "table", Size: 4096, Writable: true}}
	// Without the peek handler its code would be unreachable, so the good
	// object has only get's instructions.
	good := writeObject(t, dir, strings.Join(strings.Split(src, "\n")[:7], "\n"), []bytecode.Handler{{Name: "get", ID: 1, Entry: 0}}, regions)
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"verify", good}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "get: max-insns=7") {
		t.Errorf("stdout = %q", stdout.String())
	}

	bad := writeObject(t, dir, src, []bytecode.Handler{{Name: "get", ID: 1, Entry: 0}, {Name: "peek", ID: 2, Entry: 8}}, regions)
	stdout.Reset()
	stderr.Reset()
	if code := doMain([]string{"verify", bad}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.String())
	}
	if want := "insn 9 (h.naam:9): read of 8 bytes at pkt+0 before any check against data_end proved them inside [out-of-bounds]"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q\nwant it to contain %q", stderr.String(), want)
	}
}
