package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
)

// TestExitCodes pins the exit status of the operator commands, which
// testscript cannot tell apart (it sees success or failure): the table
// of internal/cli (spec/cli.md).
func TestExitCodes(t *testing.T) {
	n, err := host.Start(host.Config{Name: "exit"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Register("counters", 128, host.RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	const src = "region counters: [u64; 16] rw\n\nhandler add(slot: u64, by: u64) -> u64 {\n    counters[slot] += by\n    return counters[slot]\n}\n"
	obj, err := compiler.Compile(lang.NewFileSet(), "counter.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Install(obj); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("counter.naam", src)
	bad := write("bad.naam", "handler h() -> u64 { return x }\n")
	other := write("other.naam", "region missing: [u64; 4] ro\n\nhandler get() -> u64 {\n    return missing[0]\n}\n")
	// An address nothing answers at: a UDP port bound and never read.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	silent := pc.LocalAddr().String()
	addr := n.Addr().String()

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"read", addr, "counters", "0", "8"}, cli.ExitOK},
		{[]string{"call", addr, "add", "--arg", "slot=1", "--arg", "by=1", "-o", "json"}, cli.ExitOK},
		{[]string{"stats", addr, "--prefix", "handler.", "-o", "json"}, cli.ExitOK},
		{[]string{"programs", addr}, cli.ExitOK},
		{[]string{"region", "ls", addr}, cli.ExitOK},
		{[]string{"--version"}, cli.ExitOK},

		{[]string{"call", addr, "add", "--arg", "slot=99", "--arg", "by=1"}, cli.ExitFailed}, // index out of range
		{[]string{"install", addr, bad}, cli.ExitFailed},                                     // a compile error
		{[]string{"install", addr, other}, cli.ExitFailed},                                   // the node refuses: no region
		{[]string{"region", "create", addr, "counters", "64"}, cli.ExitFailed},               // the node refuses: taken
		{[]string{"region", "rm", addr, "counters"}, cli.ExitFailed},                         // the node refuses: linked
		{[]string{"region", "rm", addr, "nope"}, cli.ExitUsage},
		{[]string{"faa", addr, "counters", "0", "1", "--tenant", "1", "--secret-file", good}, cli.ExitUnreachable}, // a wrong key: dropped

		{[]string{"nosuchcommand"}, cli.ExitUsage},
		{[]string{"read", addr, "counters", "0"}, cli.ExitUsage},                 // an argument missing
		{[]string{"read", addr, "counters", "0", "8", "--bogus"}, cli.ExitUsage}, // an unknown flag
		{[]string{"read", addr, "counters", "0", "8", "-o", "yaml"}, cli.ExitUsage},
		{[]string{"read", addr, "counters", "x", "8"}, cli.ExitUsage},
		{[]string{"read", addr, "counters", "120", "16"}, cli.ExitUsage}, // outside the region
		{[]string{"read", addr, "nope", "0", "8"}, cli.ExitUsage},
		{[]string{"call", addr, "nope"}, cli.ExitUsage},
		{[]string{"call", addr, "add", "--arg", "slot=1"}, cli.ExitUsage}, // an argument of the layout missing
		{[]string{"uninstall", addr, "nope"}, cli.ExitUsage},
		{[]string{"install", addr, good, "-D", "NOPE=1"}, cli.ExitUsage},
		{[]string{"install", addr, filepath.Join(dir, "missing.naam")}, cli.ExitUsage},
		{[]string{"faa", addr, "counters", "4", "1"}, cli.ExitUsage},    // misaligned
		{[]string{"read", "exit", "counters", "0", "8"}, cli.ExitUsage}, // a name without --join
		{[]string{"region", "create", addr, "big", "0"}, cli.ExitUsage},

		{[]string{"read", silent, "counters", "0", "8", "--timeout", "300ms"}, cli.ExitUnreachable},
		{[]string{"read", addr, "counters", "0", "8", "--tenant", "2", "--timeout", "300ms"}, cli.ExitUnreachable},
	} {
		var stdout, stderr bytes.Buffer
		code := doMain(tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("naam %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, stdout.String(), stderr.String())
		}
		if code != cli.ExitOK && stderr.Len() == 0 {
			t.Errorf("naam %s: exit %d with nothing on stderr", strings.Join(tc.args, " "), code)
		}
	}
}
