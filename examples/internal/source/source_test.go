package source

import (
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

const src = "const N = 4\nconst BIG = 0x1_0000_0000\nregion r: [u64; N] rw\n\nhandler h(i: u64) -> u64 {\n    return r[i % N]\n}\n"

func TestDefaultsAndCompile(t *testing.T) {
	p := New("ex", "h.naam", []byte(src))
	var n, missing, big uint32
	p.Defaults(Param{"N", &n}, Param{"MISSING", &missing}, Param{"BIG", &big})
	if n != 4 || missing != 0 || big != 0 {
		t.Errorf("defaults N=%d MISSING=%d BIG=%d, want 4, 0, 0", n, missing, big)
	}
	set := uint32(9)
	p.Defaults(Param{"N", &set})
	if set != 9 {
		t.Errorf("Defaults changed a set parameter to %d", set)
	}

	// The declared values compile to what the source compiles to.
	obj, err := p.Compile(Param{"N", &n})
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.Compile(lang.NewFileSet(), "h.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Error("compiling with the declared values differs from compiling the source")
	}
	n = 16
	if obj, err = p.Compile(Param{"N", &n}); err != nil || obj.Regions[0].Size != 16*8 || obj.Source != "h.naam" {
		t.Fatalf("N = 16: %+v, %v", obj, err)
	}

	// Errors name the example and carry positions.
	n = 1 << 30
	if _, err := p.Compile(Param{"N", &n}); err == nil || !strings.Contains(err.Error(), "ex: compile") || !strings.Contains(err.Error(), "h.naam:3:") {
		t.Errorf("a region too large: %v", err)
	}
	if _, err := p.Compile(Param{"MISSING", &set}); err == nil || !strings.Contains(err.Error(), "ex: compile: constant override MISSING") {
		t.Errorf("an undeclared parameter: %v", err)
	}
	if string(p.Text()) != src || p.File() != "h.naam" {
		t.Error("File or Text")
	}
}

func TestBrokenSource(t *testing.T) {
	p := New("ex", "b.naam", []byte("const N = \n"))
	var n uint32
	p.Defaults(Param{"N", &n})
	if n != 0 {
		t.Errorf("N = %d from a source that does not parse", n)
	}
	if _, err := p.Compile(Param{"N", &n}); err == nil || !strings.Contains(err.Error(), "b.naam:") {
		t.Errorf("compile of a broken source: %v", err)
	}
}

// A parameter of 0 keeps the declared value.
func TestZeroKeepsDeclared(t *testing.T) {
	p := New("ex", "h.naam", []byte(src))
	var zero uint32
	obj, err := p.Compile(Param{"N", &zero})
	if err != nil || obj.Regions[0].Size != 4*8 {
		t.Fatalf("%+v, %v", obj, err)
	}
}
