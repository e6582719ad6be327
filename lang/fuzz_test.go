package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, dir := range []string{"testdata/ok", "testdata/errors"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.naam"))
		for _, name := range files {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
}

// FuzzScanner: the scanner never panics, always reaches EOF, and every
// token's position is inside the source.
func FuzzScanner(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		var s Scanner
		s.Init("fuzz.naam", src, func(Pos, string) {})
		lines := strings.Count(string(src), "\n") + 1
		for i := 0; ; i++ {
			tok, pos, _ := s.Scan()
			if pos.Line < 1 || pos.Line > lines || pos.Col < 1 {
				t.Fatalf("token %s at impossible position %s", tok, pos)
			}
			if tok == EOF {
				break
			}
			if i > 2*len(src)+2 {
				t.Fatalf("no EOF after %d tokens", i)
			}
		}
	})
}

// FuzzParse: parsing and checking never panic; a failure is an
// ErrorList of at most maxErrors syntax errors, or of type errors, each
// with a position, and printing the errors with carets works too.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		fset := NewFileSet()
		file, err := ParseFile(fset, "fuzz.naam", src)
		if file == nil {
			t.Fatal("nil File")
		}
		if err != nil {
			list, ok := err.(ErrorList)
			if !ok || len(list) == 0 || len(list) > maxErrors {
				t.Fatalf("parse error is %T with %d entries", err, len(list))
			}
			Print(&strings.Builder{}, fset, err)
			return
		}
		Fprint(&strings.Builder{}, file)
		info, err := Check(file)
		if info == nil {
			t.Fatal("nil Info")
		}
		if err != nil {
			for _, e := range err.(ErrorList) {
				if !e.Pos.IsValid() {
					t.Fatalf("error without position: %s", e.Msg)
				}
			}
			Print(&strings.Builder{}, fset, err)
		}
	})
}
