package naamgen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/naam-project/naam/lang"
)

// seeds returns how many programs a test generates: n, or NAAM_GEN_N.
func seeds(n int) int {
	if s, err := strconv.Atoi(os.Getenv("NAAM_GEN_N")); err == nil && s > 0 {
		return s
	}
	if testing.Short() {
		return n / 10
	}
	return n
}

func generate(seed uint64, cfg Config) *Generated {
	return Program(rand.New(rand.NewPCG(seed, 0x6e61616d)), cfg)
}

// TestProgramsCheck: every generated program passes the front end, and the
// generator's layouts agree with the checker's.
func TestProgramsCheck(t *testing.T) {
	for seed := range uint64(seeds(3000)) {
		cfg := Config{Helpers: seed%2 == 0}
		p := generate(seed, cfg)
		name := fmt.Sprintf("gen%d.naam", seed)
		_, info, err := lang.CheckSource(lang.NewFileSet(), name, []byte(p.Source))
		if err != nil {
			t.Fatalf("seed %d: generated program does not check:\n%v\n%s", seed, err, numbered(p.Source))
		}
		if len(info.Handlers) != len(p.Handlers) || len(info.Regions) != len(p.Regions) {
			t.Fatalf("seed %d: %d handlers, %d regions; the checker sees %d, %d", seed, len(p.Handlers), len(p.Regions), len(info.Handlers), len(info.Regions))
		}
		for i, h := range info.Handlers {
			g := p.Handlers[i]
			if h.Name() != g.Name || h.Args.Size != int64(g.RequestSize) || h.Reply.Size != int64(g.ReplySize) {
				t.Fatalf("seed %d: handler %s: request %d reply %d, the checker says %s %d %d", seed, g.Name, g.RequestSize, g.ReplySize, h.Name(), h.Args.Size, h.Reply.Size)
			}
			for j, f := range h.Args.Fields {
				if f.Offset != int64(g.args[j].off) {
					t.Fatalf("seed %d: %s.%s at %d, the checker says %d", seed, g.Name, f.Name, g.args[j].off, f.Offset)
				}
			}
		}
		for i, r := range info.Regions {
			if lang.Sizeof(r.Type()) != int64(p.Regions[i].Size) || r.Writable != p.Regions[i].Writable {
				t.Fatalf("seed %d: region %s: size %d, the checker says %d", seed, r.Name(), p.Regions[i].Size, lang.Sizeof(r.Type()))
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for seed := range uint64(20) {
		a, b := generate(seed, Config{Helpers: true}), generate(seed, Config{Helpers: true})
		if a.Source != b.Source {
			t.Fatalf("seed %d: two programs", seed)
		}
	}
}

// TestInputs: requests and regions have the sizes the program says, with
// the advertised variations.
func TestInputs(t *testing.T) {
	short, long := 0, 0
	for seed := range uint64(seeds(300)) {
		p := generate(seed, Config{})
		r := rand.New(rand.NewPCG(seed, 1))
		for h, hd := range p.Handlers {
			in := Inputs(r, p, h)
			switch {
			case len(in.Request) < hd.RequestSize:
				short++
			case len(in.Request) > hd.RequestSize:
				long++
			}
			for i, reg := range p.Regions {
				if len(in.Regions[i]) != reg.Size {
					t.Fatalf("seed %d: region %s has %d bytes, want %d", seed, reg.Name, len(in.Regions[i]), reg.Size)
				}
			}
		}
	}
	if short == 0 || long == 0 {
		t.Errorf("%d short and %d long requests; want some of each", short, long)
	}
}

func numbered(src string) string {
	var out []byte
	line := 1
	out = fmt.Appendf(out, "%4d  ", line)
	for i := 0; i < len(src); i++ {
		out = append(out, src[i])
		if src[i] == '\n' && i+1 < len(src) {
			line++
			out = fmt.Appendf(out, "%4d  ", line)
		}
	}
	return string(out)
}

// FuzzProgram: any seed gives a program the front end accepts.
func FuzzProgram(f *testing.F) {
	f.Add(uint64(0), false)
	f.Add(uint64(1), true)
	f.Fuzz(func(t *testing.T, seed uint64, helpers bool) {
		p := generate(seed, Config{Helpers: helpers})
		if _, _, err := lang.CheckSource(lang.NewFileSet(), "gen.naam", []byte(p.Source)); err != nil {
			t.Fatalf("%v\n%s", err, numbered(p.Source))
		}
	})
}
