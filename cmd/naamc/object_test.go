package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
)

const testKV = `const BUCKETS = 64

struct Bucket {
    key: [u8; 16]
    used: bool
    value: u64
}

region table: [Bucket; BUCKETS] rw

handler get(key: [u8; 16]) -> u64 {
    let b = &table[hash(key) % BUCKETS]
    if !b.used || b.key != key {
        fail(1)
    }
    return b.value
}

handler put(key: [u8; 16], value: u64) {
    let b = &table[hash(key) % BUCKETS]
    b.key = key
    b.used = true
    b.value = value
}
`

// compileTo compiles src in-process and writes the object to dir/name.
func compileTo(t *testing.T, dir, name, src string) (*bytecode.Object, string) {
	t.Helper()
	obj, err := compiler.Compile(nil, "kv.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	data, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return obj, path
}

func naamc(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = doMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// The object listing is assembly text: labels and instructions, the rest
// # comments. Assembling it gives the object's code back.
func TestDisasmObjectRoundTrip(t *testing.T) {
	obj, path := compileTo(t, t.TempDir(), "kv.nobj", testKV)
	code, stdout, stderr := naamc("disasm", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	insns, err := bytecode.Assemble(stdout)
	if err != nil {
		t.Fatalf("listing does not assemble: %v\n%s", err, stdout)
	}
	raw, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, obj.Code) {
		t.Errorf("assembled listing differs from the object's code\n%s", stdout)
	}
}

func TestDisasmObjectWithoutSources(t *testing.T) {
	dir := t.TempDir()
	path := writeObject(t, dir, "ldxdw %r2, [%r1+0]\nmov %r0, 0\nexit\n",
		[]bytecode.Handler{{Name: "h", ID: 7, Entry: 0, Args: []bytecode.Field{{Name: "s", Type: "S", Offset: 0, Size: 12}}}}, nil)
	code, stdout, stderr := naamc("disasm", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"# handler h (id 7): request 12 bytes, reply 0 bytes\n", // S's alignment is bounded by its offset and size: 4
		"#   arg s: S @0..12\n",
		"# h.naam:1:\n\tldxdw %r2, [%r1]\n# h.naam:2:\n\tmov %r0, 0\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("listing lacks %q:\n%s", want, stdout)
		}
	}
}

func TestDisasmDamagedObject(t *testing.T) {
	dir := t.TempDir()
	_, path := compileTo(t, dir, "kv.nobj", testKV)
	data, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad.nobj")
	os.WriteFile(bad, data[:len(data)-10], 0o644)
	code, stdout, stderr := naamc("disasm", bad)
	if code != exitRejected || stdout != "" || !strings.Contains(stderr, "bad.nobj: object: ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and an object error", code, stdout, stderr)
	}
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	_, kv := compileTo(t, dir, "kv.nobj", testKV)
	table := filepath.Join(dir, "table.bin")
	unverified := filepath.Join(dir, "peek.nobj")
	os.Rename(writeObject(t, dir, "ldxdw %r2, [%r1+0]\nldxb %r0, [%r2]\nexit\n",
		[]bytecode.Handler{{Name: "peek", ID: 0, Entry: 0}}, nil), unverified)
	replyTooLong := filepath.Join(dir, "long.nobj")
	os.Rename(writeObject(t, dir, "mov %r0, 100\nexit\n",
		[]bytecode.Handler{{Name: "h", ID: 0, Entry: 0, Results: []bytecode.Field{{Name: "x", Type: "u64", Size: 8}}}}, nil), replyTooLong)

	tests := []struct {
		args       []string
		code       int
		out, inErr string
	}{
		{[]string{"run", kv, "put", "--arg", "key=k", "--arg", "value=9", "--region-out", "table=" + table}, exitOK, "region table changed\ninsns = ", ""},
		{[]string{"run", kv, "get", "--arg", "key=k", "--region", "table=" + table}, exitOK, "result = 9\n", ""},
		{[]string{"run", kv, "get", "--arg", "key=x", "--region", "table=" + table}, exitRejected, "insns = ", "naamc: kv.naam:14:9: handler get failed with code 1\n"},
		{[]string{"run", kv, "get", "--arg", "key=k", "--reply-size", "4"}, exitRejected, "", "short reply (code 0x7fffff03)"},
		{[]string{"run", unverified, "peek"}, exitRejected, "", "before any check against data_end"},
		{[]string{"run", replyTooLong, "h"}, exitRejected, "insns = 2\n", "naamc: h.naam:2: handler h faulted: insn 1: bad handler return value: reply of 100 bytes, the buffer has 8"},
		{[]string{"run", kv, "nope"}, exitTool, "", `no handler "nope"`},
		{[]string{"run", kv, "get", "--arg", "value=1"}, exitTool, "", "--arg value: no such argument (its arguments are key)"},
		{[]string{"run", kv, "put", "--arg", "value=1", "--arg", "value=2"}, exitTool, "", "--arg value: given twice"},
		{[]string{"run", filepath.Join(dir, "missing.nobj"), "get"}, exitTool, "", "no such file"},
		{[]string{"run", table, "get"}, exitRejected, "", "object: malformed msgpack"},
		{[]string{"build", filepath.Join(dir, "missing.naam")}, exitTool, "", "no such file"},
	}
	for _, tt := range tests {
		code, stdout, stderr := naamc(tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.out) || !strings.Contains(stderr, tt.inErr) {
			t.Errorf("naamc %s:\nexit %d, stdout %q, stderr %q\nwant exit %d, stdout containing %q, stderr containing %q",
				strings.Join(tt.args[:2], " "), code, stdout, stderr, tt.code, tt.out, tt.inErr)
		}
	}
}

// Same source, same bytes, and build's output is what the compiler gives.
func TestBuildDeterministic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "kv.naam")
	os.WriteFile(src, []byte(testKV), 0o644)
	var objs [][]byte
	for i := range 3 {
		out := filepath.Join(dir, "kv"+string(rune('a'+i))+".nobj")
		if code, _, stderr := naamc("build", src, "-o", out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data, _ := os.ReadFile(out)
		objs = append(objs, data)
	}
	if !bytes.Equal(objs[0], objs[1]) || !bytes.Equal(objs[0], objs[2]) {
		t.Error("three builds of one source differ")
	}
	obj, err := bytecode.UnmarshalObject(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Sources) != 1 || obj.Sources[0].Text != testKV {
		t.Errorf("object does not carry the source text")
	}
}
