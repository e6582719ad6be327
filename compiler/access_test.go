package compiler_test

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/vm"
)

// accessSource declares ranges of every shape: a slice cut at the
// array's end, an element of a nested array, a field, a whole region, a
// signed index and count, and an index through a fn that can fail.
const accessSource = `
struct Item {
    a: u64
    b: [u16; 6] // size 24
}

struct Table {
    head: u64
    items: [Item; 10]  // at 8
    grid: [[u32; 3]; 4] // at 248
}

region t: Table ro
region small: [u8; 5] rw

fn odd(i: u32) -> u32 {
    if i & 1 == 1 {
        fail(9)
    }
    return i / 2
}

handler h(i: u32, n: u64, s: i16, c: i32) -> u64
    reads t.items[i; n], t.grid[i][2], t.head, small, t.items[s; c], t.items[odd(i)].b {
    return 0
}
`

// wantRanges is the reference: what the access function of h must
// write for a request.
func wantRanges(i uint32, n uint64, s int16, c int32) []bytecode.AccessRange {
	var out []bytecode.AccessRange
	slice := func(off, elem, count uint64, idx, k uint64) bytecode.AccessRange {
		if idx >= count {
			return bytecode.AccessRange{}
		}
		k = min(k, count-idx)
		return bytecode.AccessRange{Offset: uint32(off + idx*elem), Length: uint32(k * elem)}
	}
	out = append(out, slice(8, 24, 10, uint64(i), n))
	if uint64(i) < 4 {
		out = append(out, bytecode.AccessRange{Offset: uint32(248 + 12*uint64(i) + 8), Length: 4})
	} else {
		out = append(out, bytecode.AccessRange{})
	}
	out = append(out, bytecode.AccessRange{Offset: 0, Length: 8})
	out = append(out, bytecode.AccessRange{Region: 1, Offset: 0, Length: 5})
	cnt := uint64(0)
	if c > 0 {
		cnt = uint64(c)
	}
	out = append(out, slice(8, 24, 10, uint64(int64(s)), cnt))
	if j := uint64(i / 2); j < 10 {
		out = append(out, bytecode.AccessRange{Offset: uint32(8 + 24*j + 8), Length: 12})
	} else {
		out = append(out, bytecode.AccessRange{})
	}
	return out
}

func TestAccessFunction(t *testing.T) {
	obj, err := compiler.Compile(lang.NewFileSet(), "t.naam", []byte(accessSource))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify(obj)
	if err != nil {
		t.Fatalf("verifier: %+v", err)
	}
	h := obj.Handlers[0]
	if !h.HasAccess() || h.MaxRanges != 6 || h.Access <= h.Entry {
		t.Fatalf("handler %+v", h)
	}
	if e, ok := rep.AccessReport(&h); !ok || len(e.RegionsRead)+len(e.RegionsWritten) != 0 {
		t.Errorf("access report %+v, %v", e, ok)
	}
	insns, err := obj.Insns()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		t.Fatal(err)
	}
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
	run := func(req []byte, reply int) (vm.Result, error) {
		return m.Invoke(prog, &vm.Invocation{Entry: h.Access, Handler: h.ID, Request: req, Reply: make([]byte, reply)})
	}
	for _, tc := range []struct {
		i uint32
		n uint64
		s int16
		c int32
	}{
		{0, 1, 0, 1}, {2, 3, 4, 2}, {8, 5, 9, 100}, {9, 1 << 63, -1, 3}, {10, 1, 3, -5},
		{4, 0, 0, 0}, {1<<32 - 2, 7, 32767, 1 << 30}, {6, ^uint64(0), -32768, -1},
	} {
		name := fmt.Sprintf("i=%d n=%d s=%d c=%d", tc.i, tc.n, tc.s, tc.c)
		req := binary.LittleEndian.AppendUint32(nil, tc.i)
		req = append(req, 0, 0, 0, 0)
		req = binary.LittleEndian.AppendUint64(req, tc.n)
		req = binary.LittleEndian.AppendUint16(req, uint16(tc.s))
		req = append(req, 0, 0)
		req = binary.LittleEndian.AppendUint32(req, uint32(tc.c))
		res, err := run(req, 6*bytecode.AccessRangeSize)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc.i&1 == 1 {
			if res.Outcome != bytecode.OutcomeError || res.Code != 9 {
				t.Errorf("%s: %v %d, want the fn's fail(9)", name, res.Outcome, res.Code)
			}
			continue
		}
		got, err := bytecode.DecodeAccessRanges(res.Reply)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := obj.CheckAccessRanges(got); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if want := wantRanges(tc.i, tc.n, tc.s, tc.c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ranges\n%v, want\n%v", name, got, want)
		}
	}
	// Like a handler, it checks the request and the reply first.
	if res, err := run(make([]byte, 19), 72); err != nil || res.Code != bytecode.FailShortRequest {
		t.Errorf("short request: %+v, %v", res, err)
	}
	if res, err := run(make([]byte, 24), 71); err != nil || res.Code != bytecode.FailShortReply {
		t.Errorf("short reply: %+v, %v", res, err)
	}
}

// TestAccessFunctionsAfterHandlers: the handlers' code is the same with
// and without a reads clause; the access functions come after it.
func TestAccessFunctionsAfterHandlers(t *testing.T) {
	const src = "region r: [u64; 8] ro\n\nhandler a(i: u8) -> u64 %s{\n    return r[i %% 8]\n}\n\nhandler b(i: u8) -> u64 %s{\n    return r[i %% 4]\n}\n"
	plain, err := compiler.Compile(nil, "t.naam", fmt.Appendf(nil, src, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	declared, err := compiler.Compile(nil, "t.naam", fmt.Appendf(nil, src, "reads r[i % 8] ", "reads r[i % 4], r[0] "))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plain.Code); len(declared.Code) <= n || string(declared.Code[:n]) != string(plain.Code) {
		t.Fatal("the handlers' code changed")
	}
	for i, h := range declared.Handlers {
		if h.Entry != plain.Handlers[i].Entry || h.Access*bytecode.SlotSize < len(plain.Code) {
			t.Errorf("handler %s: entry %d, access %d", h.Name, h.Entry, h.Access)
		}
	}
	if declared.Handlers[0].MaxRanges != 1 || declared.Handlers[1].MaxRanges != 2 {
		t.Errorf("handlers %+v", declared.Handlers)
	}
}
