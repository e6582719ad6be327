package naameval

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/naam-project/naam/internal/testing/naamgen"
	"github.com/naam-project/naam/lang"
)

// TestGenerated runs generated programs: the evaluator must never report
// an internal error, and the outcomes should be a mix of replies and each
// kind of failure (a generator that always fails tests little).
func TestGenerated(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 50
	}
	counts := map[string]int{}
	for seed := range uint64(n) {
		p := naamgen.Program(rand.New(rand.NewPCG(seed, 0x6e61616d)), naamgen.Config{Helpers: seed%2 == 0})
		_, info, err := lang.CheckSource(lang.NewFileSet(), "gen.naam", []byte(p.Source))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		r := rand.New(rand.NewPCG(seed, 2))
		for h := range p.Handlers {
			for range 4 {
				in := naamgen.Inputs(r, p, h)
				out, err := Run(info, Call{
					Handler: p.Handlers[h].Name, Request: in.Request, ReplySize: in.ReplySize, Regions: in.Regions,
					Context: Context{SrcNode: in.SrcNode, Tenant: in.Tenant, RequestID: in.RequestID}, Env: &recorder{},
				})
				if err != nil {
					t.Fatalf("seed %d handler %s: %v\n%s", seed, p.Handlers[h].Name, err, p.Source)
				}
				key := out.Kind.String()
				switch {
				case out.Kind == Failed && out.Code >= 0x7fffff00:
					key = fmt.Sprintf("fail %#x", out.Code)
				case out.Kind == Failed:
					key = "fail(code)"
				}
				counts[key]++
			}
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-16s %d", k, counts[k])
	}
	for _, k := range []string{"reply", "fail(code)", "fail 0x7fffff01", "fail 0x7fffff04", "fail 0x7fffff05"} {
		if counts[k] == 0 {
			t.Errorf("no run ended in %s", k)
		}
	}
}
