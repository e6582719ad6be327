package tests

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/clientrun/clientruntest"
)

// TestCorpusAtClient is the differential test of client-side execution
// over the execution corpus: every program's requests (its edge cases,
// its extra calls and its random requests, from the corpus's seed) run at
// the node and, for the handlers the verifier calls client-eligible, at
// the client too, over a copy of the regions that a clientruntest
// fetcher serves. Replies, error codes, faults, instruction counts and
// the region bytes after every request must be the same
// (clientruntest.Twin). Handlers that are not eligible run at the node on
// both copies.
func TestCorpusAtClient(t *testing.T) {
	eligible, atomics := 0, 0
	for _, p := range corpusPrograms() {
		t.Run(strings.TrimSuffix(p.file, ".naam"), func(t *testing.T) {
			n, a := runCorpusAtClient(t, p)
			eligible, atomics = eligible+n, atomics+a
		})
	}
	t.Logf("%d client-eligible handlers; their runs at the client did %d remote atomics", eligible, atomics)
	// Most of the corpus only reads regions or changes them with adds and
	// compare-and-swaps (158 handlers when this was written); far fewer
	// would mean the test lost its subject.
	if eligible < 120 || atomics == 0 {
		t.Errorf("%d client-eligible handlers in the corpus doing %d atomics, want at least 120 and some", eligible, atomics)
	}
}

// runCorpusAtClient runs p at both places and returns how many of its
// handlers ran at the client, and how many remote atomics they did.
func runCorpusAtClient(t *testing.T, p corpusProgram) (eligible, atomics int) {
	_, seed, _, w := corpusTwin(t, p)
	atClient := map[string]bool{}
	call := func(h corpusHandler, req []byte, reply int) {
		t.Helper()
		res, err := w.Call(context.Background(), clientrun.Call{Handler: h.name, Request: bytes.Clone(req), ReplySize: reply})
		if err != nil {
			t.Fatal(err)
		}
		atClient[h.name] = atClient[h.name] || res.AtClient
		atomics += res.Client.Stats.Atomics
	}
	corpusCalls(p, seed, func() [][]byte { return w.Node }, call, true)
	for _, h := range p.handlers {
		if err := w.Runner.Eligible(h.name); err != nil {
			t.Logf("%s: %v", h.name, err)
		} else if !atClient[h.name] {
			t.Errorf("%s is client-eligible but never ran at the client", h.name)
		}
	}
	return len(atClient) - countFalse(atClient), atomics
}

// corpusTwin builds p and fills its regions from its seed; the twin runs
// its requests at both places in the process.
func corpusTwin(t *testing.T, p corpusProgram) (b *corpusBuild, seed uint64, regions [][]byte, w *clientruntest.Twin) {
	t.Helper()
	b = buildCorpusProgram(t, p)
	seed = corpusSeed ^ fnvString(p.file)
	regions = make([][]byte, len(p.regions))
	for i, size := range p.regions {
		regions[i] = make([]byte, size)
	}
	if p.setup != nil {
		p.setup(rand.New(rand.NewPCG(seed, 1)), regions)
	}
	w, err := clientruntest.NewTwin(b.obj, regions, clientrun.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b, seed, regions, w
}

// corpusCalls makes p's requests, in order: its edge cases, its extra
// calls, its random requests from seed (regions: the reference state a
// generator looks at), and the generic failures (a short request; with
// shortReply, a short reply buffer).
func corpusCalls(p corpusProgram, seed uint64, regions func() [][]byte, call func(h corpusHandler, req []byte, reply int), shortReply bool) {
	for _, h := range p.handlers {
		for _, req := range h.edges {
			call(h, req, h.reply)
		}
	}
	if p.calls != nil {
		for _, c := range p.calls() {
			for _, h := range p.handlers {
				if h.name == c.handler {
					call(h, c.req, h.reply)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	n := p.random
	if n == 0 {
		n = corpusRandomCalls
	}
	for range n {
		hi := rng.IntN(len(p.handlers))
		if p.pick != nil {
			hi = p.pick(rng)
		}
		h := p.handlers[hi]
		var req []byte
		if h.gen != nil {
			req = h.gen(rng, regions())
		} else {
			req = edgyBytes(rng, h.req)
		}
		call(h, req, h.reply)
	}
	// The generic failures: a short request, a short reply buffer.
	for _, h := range p.handlers {
		if h.argsEnd > 0 {
			call(h, bytes.Repeat([]byte{0x5a}, h.argsEnd-1), h.reply)
		}
		if h.reply > 0 && shortReply {
			call(h, make([]byte, h.req), h.reply-1)
		}
	}
}

func countFalse(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if !v {
			n++
		}
	}
	return n
}
