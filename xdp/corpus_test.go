package xdp

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
)

var update = flag.Bool("update", false, "rewrite testdata/kernel-table.md")

// corpusDir is the compiler's execution corpus (tests/corpus_test.go).
const corpusDir = "../tests/testdata/corpus"

// program is one object of the table: an example or a corpus program.
type program struct {
	source string
	obj    *bytecode.Object
}

func tablePrograms(t *testing.T) []program {
	t.Helper()
	var progs []program
	for _, ex := range []struct {
		name    string
		compile func() (*bytecode.Object, error)
	}{
		{"examples/kv", func() (*bytecode.Object, error) { return kvnode.Compile(kv.DefaultConfig()) }},
		{"examples/chase", func() (*bytecode.Object, error) { return testprog.CompileFile(t, "../examples/chase/chase.naam"), nil }},
		{"examples/rpc", func() (*bytecode.Object, error) { return testprog.CompileFile(t, "../examples/rpc/ledger.naam"), nil }},
	} {
		obj, err := ex.compile()
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, program{ex.name, obj})
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.naam"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := compiler.Compile(lang.NewFileSet(), filepath.Base(f), src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		progs = append(progs, program{"corpus/" + filepath.Base(f), obj})
	}
	return progs
}

// usesClock reports whether a handler may call now or random: its
// results differ between the two paths by design, so the differential
// leaves it out.
func usesClock(t *testing.T, obj *bytecode.Object, h int) bool {
	insns, err := obj.Insns()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := translate(insns, obj.Handlers[h].Entry, "t")
	if err != nil {
		return false
	}
	return tr.helpers[bytecode.HelperNow] || tr.helpers[bytecode.HelperRandom]
}

// TestCorpus installs every example and corpus handler in the XDP tier
// and in the NIC model: each is served in XDP (the kernel verifier
// accepted its translation) or not, with the reason, and the table of
// both is testdata/kernel-table.md, shown in spec/xdp.md. Every served
// handler then gets random requests, edge lengths included, over regions
// of random bytes, and must answer as the NIC model does and leave the
// same region bytes. Regenerate the table with -update.
func TestCorpus(t *testing.T) {
	needKernel(t)
	var table strings.Builder
	served, total := 0, 0
	calls := 40
	if testing.Short() {
		calls = 10
	}
	for _, prog := range tablePrograms(t) {
		p := newPair(t, Config{})
		r := rand.New(rand.NewPCG(11, uint64(len(prog.source))))
		for _, reg := range prog.obj.Regions {
			fill := make([]byte, reg.Size)
			for i := range fill {
				fill[i] = byte(r.Uint32())
			}
			p.region(reg.Name, reg.Size, reg.Writable, fill)
		}
		ids, notServed := p.install(prog.obj)
		for i, h := range prog.obj.Handlers {
			total++
			reason, skip := notServed[h.Name], false
			status := "yes"
			switch {
			case reason != "":
				status = "no: " + strings.ReplaceAll(reason, "|", `\|`)
			case usesClock(t, prog.obj, i):
				served++
				skip = true
				status = "yes (now or random: not in the differential)"
			default:
				served++
			}
			fmt.Fprintf(&table, "| %s | %s | %s |\n", prog.source, h.Name, status)
			if reason != "" || skip {
				continue
			}
			argsEnd := 0
			for _, f := range h.Args {
				argsEnd = max(argsEnd, int(f.Offset+f.Size))
			}
			for c := range calls {
				n := argsEnd
				switch c % 8 {
				case 6:
					n = r.IntN(argsEnd + 1)
				case 7:
					n = argsEnd + r.IntN(16)
				}
				payload := make([]byte, n)
				for i := range payload {
					payload[i] = byte(r.Uint32())
				}
				p.call(ids[h.Name], payload)
			}
		}
	}
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	release := string(bytes.TrimRight(uts.Release[:], "\x00"))
	doc := fmt.Sprintf("%d of %d handlers served in XDP (kernel %s)\n\n| program | handler | served in XDP |\n|---|---|---|\n%s",
		served, total, release, table.String())
	t.Logf("%d of %d handlers served in XDP", served, total)
	path := filepath.Join("testdata", "kernel-table.md")
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(golden) != doc {
		head, _, _ := strings.Cut(string(golden), "\n")
		if !strings.Contains(head, "(kernel "+release+")") {
			t.Logf("the table in %s is of another kernel; this one (%s) gives:\n%s", path, release, doc)
		} else {
			t.Errorf("the table differs from %s (regenerate with -update):\n%s", path, doc)
		}
	}
	spec, err := os.ReadFile("../spec/xdp.md")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.Fatal("spec/xdp.md is missing")
		}
		t.Fatal(err)
	}
	if !strings.Contains(string(spec), string(golden)) {
		t.Errorf("spec/xdp.md does not show %s", path)
	}
}
