package compiler_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

var update = flag.Bool("update", false, "rewrite the golden disassembly files")

// listing is the golden form of an object: its handlers and regions, then
// the code, one line per instruction, with the source line it came from
// whenever that changes.
func listing(obj *bytecode.Object) (string, error) {
	var b strings.Builder
	for _, r := range obj.Regions {
		rights := "ro"
		if r.Writable {
			rights = "rw"
		}
		fmt.Fprintf(&b, "region %s: %d bytes %s\n", r.Name, r.Size, rights)
	}
	entries := map[int]string{}
	for _, h := range obj.Handlers {
		fmt.Fprintf(&b, "handler %s (id %d) at %d: args %v results %v\n", h.Name, h.ID, h.Entry, h.Args, h.Results)
		entries[h.Entry] = h.Name
		if h.HasAccess() {
			fmt.Fprintf(&b, "  access function at %d: at most %d ranges\n", h.Access, h.MaxRanges)
			entries[h.Access] = h.Name + " access"
		}
	}
	insns, err := obj.Insns()
	if err != nil {
		return "", err
	}
	text, err := bytecode.Disassemble(insns)
	if err != nil {
		return "", err
	}
	offsets, _ := bytecode.Slots(insns)
	lastLine := -1
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		slot := offsets[i]
		if name, ok := entries[slot]; ok {
			fmt.Fprintf(&b, "%s:\n", name)
		}
		if l, ok := obj.Position(slot); ok && l.Line != lastLine {
			lastLine = l.Line
			fmt.Fprintf(&b, "    ; line %d\n", l.Line)
		}
		fmt.Fprintf(&b, "%4d  %s\n", slot, line)
	}
	return b.String(), nil
}

// Source → expected disassembly, for every front-end test program. Run
// with -update to accept a change in the compiler's output.
func TestGoldenDisassembly(t *testing.T) {
	files, _ := filepath.Glob("../lang/testdata/ok/*.naam")
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".naam")
		t.Run(name, func(t *testing.T) {
			got, err := listing(compileFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "disasm", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("disassembly changed (run with -update to accept):\n%s", got)
			}
		})
	}
}

// Compiling is deterministic: the same source gives the same bytes.
func TestDeterministic(t *testing.T) {
	files, _ := filepath.Glob("../lang/testdata/ok/*.naam")
	for _, path := range files {
		a, _ := compileFile(t, path).Marshal()
		b, _ := compileFile(t, path).Marshal()
		if string(a) != string(b) {
			t.Errorf("%s: two compilations differ", path)
		}
	}
}

var errorComment = regexp.MustCompile(`ERROR "((?:[^"\\]|\\.)*)"`)

// Sources under testdata/errors pass the front end but not the compiler;
// each error must match an ERROR "regexp" comment on its line.
func TestCompileErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.naam")
	if len(files) == 0 {
		t.Fatal("no error tests")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]*regexp.Regexp{}
			for i, line := range strings.Split(string(src), "\n") {
				if m := errorComment.FindStringSubmatch(line); m != nil {
					want[i+1] = regexp.MustCompile(m[1])
				}
			}
			_, err = compiler.Compile(lang.NewFileSet(), path, src)
			list, ok := err.(lang.ErrorList)
			if !ok {
				t.Fatalf("want a lang.ErrorList, got %v", err)
			}
			for _, e := range list {
				re := want[e.Pos.Line]
				if re == nil || !re.MatchString(e.Msg) {
					t.Errorf("unexpected error %v", e)
					continue
				}
				delete(want, e.Pos.Line)
			}
			for line, re := range want {
				t.Errorf("line %d: missing error %q", line, re)
			}
		})
	}
}
