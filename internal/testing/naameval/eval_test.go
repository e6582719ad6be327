package naameval

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// corpus checks and returns lang/testdata/ok/name.naam.
func corpus(t *testing.T, name string) *lang.Info {
	t.Helper()
	path := filepath.Join("..", "..", "..", "lang", "testdata", "ok", name+".naam")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, info, err := lang.CheckSource(lang.NewFileSet(), path, src)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// le builds little-endian bytes: each value takes the width given before it
// (1, 2, 4 or 8), e.g. le(4, a, 4, b).
func le(widthsAndValues ...uint64) []byte {
	var b []byte
	for i := 0; i < len(widthsAndValues); i += 2 {
		w, v := widthsAndValues[i], widthsAndValues[i+1]
		b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+int(w)]
	}
	return b
}

func pad(b []byte, n int) []byte { return append(b, make([]byte, n-len(b))...) }

// regions returns zeroed memory for every region of info.
func regions(info *lang.Info) [][]byte {
	var rs [][]byte
	for _, r := range info.Regions {
		rs = append(rs, make([]byte, lang.Sizeof(r.Type())))
	}
	return rs
}

func replied(b []byte) Outcome   { return Outcome{Kind: Replied, Reply: b} }
func failed(code uint32) Outcome { return Outcome{Kind: Failed, Code: code} }

func same(a, b Outcome) bool {
	return a.Kind == b.Kind && bytes.Equal(a.Reply, b.Reply) && a.Code == b.Code &&
		a.ForwardNode == b.ForwardNode && a.ForwardHandler == b.ForwardHandler
}

type evalCase struct {
	name    string
	handler string
	req     []byte
	reply   int // 0: the handler's reply size
	ctx     Context
	setup   func(rs [][]byte)
	want    Outcome
	check   func(t *testing.T, rs [][]byte) // region contents after the run
}

func runCases(t *testing.T, file string, cases []evalCase) {
	t.Helper()
	info := corpus(t, file)
	for _, c := range cases {
		t.Run(file+"/"+c.name, func(t *testing.T) {
			rs := regions(info)
			if c.setup != nil {
				c.setup(rs)
			}
			reply := c.reply
			if reply == 0 {
				for _, h := range info.Handlers {
					if h.Name() == c.handler {
						reply = int(h.Reply.Size)
					}
				}
			}
			have, err := Run(info, Call{Handler: c.handler, Request: c.req, ReplySize: reply, Regions: rs, Context: c.ctx})
			if err != nil {
				t.Fatal(err)
			}
			if !same(have, c.want) {
				t.Errorf("have %v, want %v", have, c.want)
			}
			if c.check != nil {
				c.check(t, rs)
			}
		})
	}
}

func u64at(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
func u32at(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

func TestArith(t *testing.T) {
	wrapWide := uint64(0xffffffff)<<32 | 2
	wrapWide += 1 << 40
	// mix(a, b, c) -> (sum: u32 @0, wide: u64 @8, neg: i64 @16, low: u8 @24), 32 bytes.
	runCases(t, "arith", []evalCase{{
		// sum = 10 + 9 - (9/7)%5 = 18, then &= 0xffff0000 → 0, |= ~3&0xf → 12;
		// wide = 10<<32 | 3 + 1<<40; neg = 8>>2; low = 10 + 200.
		name: "small", handler: "mix", req: le(4, 10, 4, 3, 8, uint64(0xfffffffffffffff8)),
		want: replied(pad(le(4, 12, 4, 0, 8, 10<<32|3+1<<40, 8, 2, 1, 210), 32)),
	}, {
		// a + b*3 wraps: 0xffffffff + 6 - (0x24924924%5 = 1) → 4; &= MASK → 0;
		// |= ~2&0xf = 0xd. wide wraps too. -c>>2 with c = 1: -1>>2 = -1
		// (arithmetic). low: (0xff) as u8 + 200 = 199 (wraps).
		name: "wrap", handler: "mix", req: le(4, 0xffffffff, 4, 2, 8, 1),
		want: replied(pad(le(4, 0xd, 4, 0, 8, wrapWide, 8, ^uint64(0), 1, 199), 32)),
	}, {
		name: "short request", handler: "mix", req: make([]byte, 15), want: failed(bytecode.FailShortRequest),
	}, {
		name: "short reply", handler: "mix", req: make([]byte, 16), reply: 31, want: failed(bytecode.FailShortReply),
	}})
}

func TestBitsAndCasts(t *testing.T) {
	runCases(t, "bits", []evalCase{{
		// popcount(0xf0f0_0000_1234_5678) = 8 + 13; bswap32(0x12345678).
		name: "pop", handler: "bits", req: le(8, 0xf0f0_0000_1234_5678),
		want: replied(le(4, 21, 4, 0x78563412)),
	}})
	// casts(x: i8 @0, y: u64 @8, flag: bool @16) -> (a: i64 @0, b: u16 @8, c: u8 @10, d: u32 @12)
	runCases(t, "casts", []evalCase{{
		name: "sign", handler: "casts", req: le(8, 0xfe, 8, 0x12345, 8, 1),
		want: replied(le(8, uint64(0xfffffffffffffffe), 2, 0x2345, 1, 1, 1, 0, 4, 0xfffffffe)),
	}})
}

func TestConds(t *testing.T) {
	req := func(a, b int32, mask, other uint32) []byte {
		return le(4, uint64(uint32(a)), 4, uint64(uint32(b)), 4, uint64(mask), 4, uint64(other))
	}
	runCases(t, "conds", []evalCase{
		{name: "both negative", handler: "classify", req: req(-1, -1, 1, 1), want: replied([]byte{1})},
		{name: "masks differ", handler: "classify", req: req(5, 3, 1, 2), want: replied([]byte{1})},
		{name: "close", handler: "classify", req: req(5, 3, 7, 7), want: replied([]byte{2})},
		{name: "far", handler: "classify", req: req(500, 3, 7, 7), want: replied([]byte{3})},
		{name: "equal", handler: "classify", req: req(7, 7, 7, 7), want: replied([]byte{2})},
		{name: "less", handler: "classify", req: req(3, 7, 7, 7), want: replied([]byte{3})},
	})
}

func TestLoops(t *testing.T) {
	values := func(rs [][]byte) {
		for i := range 1024 {
			binary.LittleEndian.PutUint64(rs[0][8*i:], uint64(i+1))
		}
	}
	runCases(t, "capped_loop", []evalCase{
		{name: "prefix", handler: "sum_prefix", req: le(4, 3), setup: values, want: replied(le(8, 6))},
		{name: "prefix at cap", handler: "sum_prefix", req: le(4, 128), setup: values, want: replied(le(8, 128*129/2))},
		{name: "prefix over cap", handler: "sum_prefix", req: le(4, 129), setup: values, want: failed(bytecode.FailLoopCap)},
		{name: "empty range", handler: "sum_range", req: le(2, 10, 2, 5), setup: values, want: replied(le(8, 0))},
		{name: "range", handler: "sum_range", req: le(2, 10, 2, 13), setup: values, want: replied(le(8, 11+12+13))},
		{name: "range over cap", handler: "sum_range", req: le(2, 0, 2, 65), setup: values, want: failed(bytecode.FailLoopCap)},
		{name: "range out of bounds", handler: "sum_range", req: le(2, 1020, 2, 1030), setup: values, want: failed(bytecode.FailIndexOutOfRange)},
	})
	matrix := func(rs [][]byte) {
		for i := range 256 {
			binary.LittleEndian.PutUint32(rs[0][4*i:], uint32(i%5))
		}
		binary.LittleEndian.PutUint32(rs[0][4*(16+3):], 0xffffffff) // row 1 stops at col 3
	}
	// Sum of i%5 over 0..255 = 51*10 + (0+1+2+3+4 for 255%5=0 → +0) = 510; row 1 loses
	// cols 3..15: (19..31)%5 summed = 4+0+1+2+3+4+0+1+2+3+4+0+1 = 25.
	runCases(t, "loops", []evalCase{
		{name: "matrix", handler: "sum_matrix", setup: matrix, want: replied(le(8, 510-25))},
	})
}

func TestRegions(t *testing.T) {
	runCases(t, "counter", []evalCase{{
		name: "incr", handler: "incr", req: le(8, 7), ctx: Context{Tenant: 256 + 5},
		setup: func(rs [][]byte) { rs[0][5*8] = 3 },
		want:  replied(le(8, 10)),
		check: func(t *testing.T, rs [][]byte) {
			if v := u64at(rs[0], 5*8); v != 10 {
				t.Errorf("counters[5] = %d, want 10", v)
			}
		},
	}, {
		name: "read", handler: "read", ctx: Context{Tenant: 6},
		setup: func(rs [][]byte) { rs[0][6*8] = 9 },
		want:  replied(le(8, 9)),
	}})

	// slots: [Slot{owner u64, hits u32, flags u32}; 64] (16 bytes each); stats: {requests u64, errors i32, misses u32}.
	runCases(t, "atomics", []evalCase{{
		name: "acquire", handler: "acquire", req: le(8, 64+2, 8, 77),
		setup: func(rs [][]byte) {
			binary.LittleEndian.PutUint32(rs[0][2*16+8:], 5)     // hits
			binary.LittleEndian.PutUint32(rs[0][2*16+12:], 0x16) // flags
		},
		want: replied(le(4, 5)),
		check: func(t *testing.T, rs [][]byte) {
			// flags: 0x16 | 8 = 0x1e, &^4 = 0x1a, ^0x10 = 0x0a.
			if o, h, f := u64at(rs[0], 32), u32at(rs[0], 40), u32at(rs[0], 44); o != 77 || h != 6 || f != 0x0a {
				t.Errorf("slot = {%d %d %#x}, want {77 6 0xa}", o, h, f)
			}
			if r := u64at(rs[1], 0); r != 1 {
				t.Errorf("requests = %d", r)
			}
		},
	}, {
		name: "busy", handler: "acquire", req: le(8, 1, 8, 77),
		setup: func(rs [][]byte) { rs[0][16] = 1 },
		want:  failed(9),
		check: func(t *testing.T, rs [][]byte) {
			if e := int32(u32at(rs[1], 8)); e != -1 {
				t.Errorf("errors = %d, want -1", e)
			}
		},
	}, {
		name: "release other", handler: "release", req: le(8, 3, 8, 77),
		setup: func(rs [][]byte) { rs[0][3*16] = 1 },
		want:  replied(nil),
		check: func(t *testing.T, rs [][]byte) {
			if o, m := u64at(rs[0], 48), u32at(rs[1], 12); o != 0 || m != 1 {
				t.Errorf("owner %d misses %d, want 0 1", o, m)
			}
		},
	}})
}

func TestFns(t *testing.T) {
	// points: [Point{x i32, y i32}; 128].
	pts := func(rs [][]byte) {
		binary.LittleEndian.PutUint32(rs[0][8*1:], uint32(3))
		binary.LittleEndian.PutUint32(rs[0][8*1+4:], uint32(0xfffffffc)) // -4
		binary.LittleEndian.PutUint32(rs[0][8*2:], uint32(0xfffffffe))   // -2
		binary.LittleEndian.PutUint32(rs[0][8*2+4:], uint32(6))
	}
	runCases(t, "fns", []evalCase{
		{name: "distance", handler: "distance", req: le(1, 1, 1, 128+2), setup: pts, want: replied(le(4, 5+10))},
		{name: "nudge", handler: "nudge", req: le(1, 1, 1, 0, 2, 0, 4, uint64(0xfffffff6)), setup: pts, want: replied(nil),
			check: func(t *testing.T, rs [][]byte) {
				if x := int32(u32at(rs[0], 8)); x != -7 {
					t.Errorf("x = %d, want -7", x)
				}
			}},
	})
	runCases(t, "shadow", []evalCase{
		{name: "big", handler: "clamp", req: le(4, 20), want: replied(le(4, 10))},
		{name: "small", handler: "clamp", req: le(4, 5), want: replied(le(4, 8))},
	})
	// total = sum(cells) + N + 1; cells are 16 u64s.
	runCases(t, "order", []evalCase{{
		name: "total", handler: "total",
		setup: func(rs [][]byte) {
			for i := range 16 {
				rs[0][8*i] = byte(i)
			}
		},
		want: replied(le(8, 120+17)),
	}})
}

func TestKV(t *testing.T) {
	// A put into a zero table lands in bucket hash(key) % 1024; a get of the
	// same table finds it.
	key := []byte("0123456789abcdef")
	value := bytes.Repeat([]byte{0xab}, 64)
	putReq := append(append(append([]byte{}, key...), le(4, 9)...), value...)
	putInfo, getInfo := corpus(t, "kv_put"), corpus(t, "kv_get")
	table := regions(putInfo)
	out, err := Run(putInfo, Call{Handler: "put", Request: putReq, ReplySize: 4, Regions: table})
	if err != nil || !same(out, replied(le(4, 0))) {
		t.Fatalf("put: %v %v", out, err)
	}
	b := int(fnv1a(key)%1024) * 96
	if !bytes.Equal(table[0][b:b+16], key) || table[0][b+16] != 1 || u32at(table[0], b+20) != 9 || u64at(table[0], b+24) != 1 {
		t.Fatalf("bucket % x", table[0][b:b+32])
	}
	out, err = Run(getInfo, Call{Handler: "get", Request: key, ReplySize: 68, Regions: table})
	if err != nil || !same(out, replied(append(le(4, 9), value...))) {
		t.Fatalf("get: %v %v", out, err)
	}
	// A second put of the same key overwrites and bumps the version.
	if out, _ = Run(putInfo, Call{Handler: "put", Request: putReq, ReplySize: 4, Regions: table}); !same(out, replied(le(4, 0))) || u64at(table[0], b+24) != 2 {
		t.Fatalf("second put: %v", out)
	}
	other := []byte("fedcba9876543210")
	if out, _ = Run(getInfo, Call{Handler: "get", Request: other, ReplySize: 68, Regions: table}); !same(out, failed(1)) {
		t.Fatalf("get of a missing key: %v", out)
	}
}

func TestListWalk(t *testing.T) {
	// nodes: [Node{key u64, value u64, next u32}; 4096], 24 bytes each: 3 → 7 → 1 → NIL.
	link := func(rs [][]byte) {
		set := func(i int, key, value uint64, next uint32) {
			binary.LittleEndian.PutUint64(rs[0][24*i:], key)
			binary.LittleEndian.PutUint64(rs[0][24*i+8:], value)
			binary.LittleEndian.PutUint32(rs[0][24*i+16:], next)
		}
		set(3, 30, 300, 7)
		set(7, 70, 700, 1)
		set(1, 10, 100, 0xffffffff)
		set(9, 90, 900, 5000) // out of range
	}
	runCases(t, "list_walk", []evalCase{
		{name: "found", handler: "lookup", req: le(4, 3, 4, 0, 8, 10), setup: link, want: replied(le(8, 100))},
		{name: "missing", handler: "lookup", req: le(4, 3, 4, 0, 8, 11), setup: link, want: failed(2)},
		{name: "bad link", handler: "lookup", req: le(4, 9, 4, 0, 8, 11), setup: link, want: failed(bytecode.FailIndexOutOfRange)},
		{name: "cycle", handler: "lookup", req: le(4, 0, 4, 0, 8, 11), setup: link, want: failed(3)}, // node 0 links to itself
	})
}

func TestLayoutAndRefs(t *testing.T) {
	// Packet: hdr Header{kind u8 @0, flags u16 @2, len u32 @4, id u64 @8} @0,
	// tag [u8; 3] @16, parts [Header; 2] @24; size 56. Request: slot u32 @0, p @8.
	p := make([]byte, 56)
	binary.LittleEndian.PutUint32(p[4:], 1000) // hdr.len
	p[18] = 7                                  // tag[2]
	binary.LittleEndian.PutUint32(p[24+4:], 5) // parts[0].len
	p[1] = 0xee                                // padding is copied too
	runCases(t, "layout", []evalCase{{
		name: "store", handler: "store", req: append(le(8, 33), p...),
		want: replied(le(4, 12)),
		check: func(t *testing.T, rs [][]byte) {
			got := rs[0][56 : 56+56]
			want := append([]byte{}, p...)
			binary.LittleEndian.PutUint32(want[24+16+4:], 1000)
			if !bytes.Equal(got, want) {
				t.Errorf("ring[1] = % x\nwant      % x", got, want)
			}
		},
	}})
	// touch(key [u8; 8]) -> (count u64 @0, first u8 @8): entries[key[0] % 16].count += 1;
	// first = 1 + entries[…].key[0].
	runCases(t, "refs", []evalCase{{
		name: "touch", handler: "touch", req: []byte{18, 0, 0, 0, 0, 0, 0, 0},
		setup: func(rs [][]byte) { rs[0][2*16] = 40; rs[0][2*16+8] = 4 },
		want:  replied(pad(le(8, 5, 1, 41), 16)),
	}})
	// swap(i) -> (old: Pair @0, h: u64 @8, total: u32 @16).
	runCases(t, "spec_snippets", []evalCase{{
		name: "swap", handler: "swap", req: []byte{8 + 3},
		setup: func(rs [][]byte) { copy(rs[0][3*8:], le(4, 1, 4, 2)) },
		want:  replied(pad(append(le(4, 1, 4, 2), le(8, fnv1a(le(4, 2, 4, 1)), 4, 4)...), 24)),
	}})
}

// recorder is an Env that records sends and forwards.
type recorder struct {
	sent     [][]byte
	forwards []uint64
	refuse   bool
	n        uint64
}

func (r *recorder) Now() uint64    { r.n++; return 1000 * r.n }
func (r *recorder) Random() uint64 { r.n++; return r.n }
func (r *recorder) Trace([]byte)   {}
func (r *recorder) Send(node uint64, h uint32, b []byte) error {
	if r.refuse {
		return errors.New("refused")
	}
	r.sent = append(r.sent, b)
	return nil
}
func (r *recorder) Forward(node uint64, h uint32) error {
	if r.refuse {
		return errors.New("refused")
	}
	r.forwards = append(r.forwards, node, uint64(h))
	return nil
}

func TestHelpers(t *testing.T) {
	info := corpus(t, "helpers")
	payload := bytes.Repeat([]byte{5}, 32)
	env := &recorder{}
	out, err := Run(info, Call{Handler: "log_event", Request: append(le(8, 4), payload...), ReplySize: 16, Env: env})
	if err != nil || !same(out, replied(pad(le(8, fnv1a(payload), 1, 1), 16))) || len(env.sent) != 1 || !bytes.Equal(env.sent[0], payload) {
		t.Errorf("log_event: %v %v %v", out, err, env.sent)
	}
	out, _ = Run(info, Call{Handler: "log_event", Request: append(le(8, 4), payload...), ReplySize: 16, Env: &recorder{refuse: true}})
	if !same(out, replied(pad(le(8, fnv1a(payload), 1, 0), 16))) {
		t.Errorf("refused send: %v", out)
	}
	out, _ = Run(info, Call{Handler: "relay", Request: append(le(8, 4), payload...), Env: env})
	if !same(out, Outcome{Kind: Forwarded, ForwardNode: 4, ForwardHandler: 0}) {
		t.Errorf("relay: %v", out)
	}
	out, _ = Run(info, Call{Handler: "relay_by_id", Request: le(8, 6, 4, 1, 4, 0), Env: &recorder{refuse: true}})
	if !same(out, failed(bytecode.FailForward)) {
		t.Errorf("refused forward: %v", out)
	}
	out, _ = Run(info, Call{Handler: "relay_by_id", Request: le(8, 6, 4, 2, 4, 0), Env: env})
	if !same(out, failed(7)) {
		t.Errorf("relay_by_id(2): %v", out)
	}
}

func TestEmpty(t *testing.T) {
	runCases(t, "empty_handler", []evalCase{
		{name: "ping", handler: "ping", want: replied([]byte{})},
		{name: "pong", handler: "pong", want: replied([]byte{1})},
		{name: "nope", handler: "nope", want: failed(42)},
	})
}

// TestCorpusRuns runs every handler of every corpus program on zero and
// on patterned inputs: no internal errors, whatever the outcome.
func TestCorpusRuns(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "lang", "testdata", "ok", "*.naam"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, path := range files {
		src, _ := os.ReadFile(path)
		_, info, err := lang.CheckSource(lang.NewFileSet(), path, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range info.Handlers {
			for fill := range 3 {
				req := bytes.Repeat([]byte{byte(fill * 0x41)}, int(h.Args.Size))
				rs := regions(info)
				for _, r := range rs {
					for i := range r {
						r[i] = byte(i * fill)
					}
				}
				if _, err := Run(info, Call{Handler: h.Name(), Request: req, ReplySize: int(h.Reply.Size), Regions: rs, Env: &recorder{}}); err != nil {
					t.Errorf("%s %s: %v", filepath.Base(path), h.Name(), err)
				}
			}
		}
	}
}

func TestCallErrors(t *testing.T) {
	info := corpus(t, "counter")
	if _, err := Run(info, Call{Handler: "nope"}); !errors.Is(err, ErrNoHandler) {
		t.Errorf("unknown handler: %v", err)
	}
	if _, err := Run(info, Call{Handler: "read", Regions: [][]byte{make([]byte, 8)}}); !errors.Is(err, ErrRegions) {
		t.Errorf("short region: %v", err)
	}
}
