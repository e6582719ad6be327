package verifier

import (
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// TestClientEligible: a handler is client-eligible when it reads regions
// and changes them only with 8-byte FETCH-ADD and CAS; the reason names
// the first instruction that prevents it.
func TestClientEligible(t *testing.T) {
	regions := []Region{{Name: "table", Size: 64, Writable: true}}
	const load = "lddw %r2, region[0]\n"
	tests := []struct {
		name string
		src  string
		why  string // "": eligible; else the reason
	}{
		{"no regions", "mov %r0, 0\nexit", ""},
		{"loads", load + "ldxdw %r0, [%r2+8]\nldxb %r3, [%r2]\nexit", ""},
		{"add", load + "mov %r3, 1\nlock add [%r2+8], %r3\nmov %r0, 0\nexit", ""},
		{"fetch-add", load + "mov %r3, 1\nlock fetch add [%r2+8], %r3\nmov %r0, %r3\nexit", ""},
		{"cmpxchg", load + "mov %r0, 0\nmov %r3, 1\nlock cmpxchg [%r2+8], %r3\nexit", ""},
		{"hash of region bytes", load + "mov %r1, %r2\nmov %r2, 16\ncall 1\nexit", ""},
		{"store", load + "mov %r3, 1\nldxdw %r0, [%r2]\nstxdw [%r2+8], %r3\nexit", "insn 4: store to region 0 (table)"},
		{"store of an immediate", load + "stw [%r2+8], 7\nmov %r0, 0\nexit", "insn 2: store to region 0 (table)"},
		{"32-bit add", load + "mov %r3, 1\nlock add32 [%r2+8], %r3\nmov %r0, 0\nexit", "insn 3: atomic add (4 bytes) to region 0 (table)"},
		{"xchg", load + "mov %r3, 1\nlock xchg [%r2+8], %r3\nmov %r0, 0\nexit", "insn 3: atomic xchg (8 bytes) to region 0 (table)"},
		{"or", load + "mov %r3, 1\nlock or [%r2+8], %r3\nmov %r0, 0\nexit", "insn 3: atomic or (8 bytes) to region 0 (table)"},
		{"copy into a region", load + "mov %r1, %r2\nmov %r2, %r10\nadd %r2, -8\nstdw [%r10-8], 0\nmov %r3, 8\ncall 2\nexit", "insn 7: copy to region 0 (table)"},
		{"trace", "stdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\ncall 5\nexit", "insn 4: calls trace, which exists only on the host"},
		{"send", "stdw [%r10-8], 0\nmov %r1, 1\nmov %r2, 0\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 8\ncall 6\nexit", "insn 6: calls send, which sends from the node"},
		{"forward", "mov %r1, 1\nmov %r2, 0\ncall 7\nexit", "insn 2: calls forward, which sends from the node"},
		// The lowest slot names the reason, whatever the analysis order.
		{"two reasons", load + "ldxdw %r3, [%r2]\njeq %r3, 0, +2\nstxdw [%r2], %r3\nja +1\nlock add32 [%r2+8], %r3\nmov %r0, 0\nexit", "insn 4: store to region 0 (table)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tc.src)
			if err != nil {
				t.Fatalf("assemble: %+v", err)
			}
			rep, err := Verify(insns, Config{Regions: regions})
			if err != nil {
				t.Fatalf("rejected: %+v", err)
			}
			e := rep.Entries[0]
			if e.ClientEligible != (tc.why == "") || e.ClientReason != tc.why {
				t.Errorf("ClientEligible %v, reason %q; want reason %q", e.ClientEligible, e.ClientReason, tc.why)
			}
		})
	}
}

// TestAccessFunction: an access function touches no region and calls no
// helper that sends or exists only on the host; it may hash the request
// and write the reply.
func TestAccessFunction(t *testing.T) {
	regions := []Region{{Name: "table", Size: 64, Writable: true}}
	const reply = "ldxdw %r6, [%r1+16]\nldxdw %r7, [%r1+24]\nmov %r8, %r6\nadd %r8, 12\njgt %r8, %r7, +5\n"
	tests := []struct {
		name string
		src  string
		want string // "": accepted; else a substring of the access-function rejection
	}{
		{"writes a range", reply + "stw [%r6], 0\nstw [%r6+4], 8\nstw [%r6+8], 16\nmov %r0, 12\nexit\nmov %r0, -1\nexit", ""},
		{"hashes the request", "ldxdw %r2, [%r1+0]\nldxdw %r3, [%r1+8]\nmov %r4, %r2\nadd %r4, 8\njgt %r4, %r3, +4\nmov %r1, %r2\nmov %r2, 8\ncall 1\nexit\nmov %r0, -1\nexit", ""},
		{"load", "lddw %r2, region[0]\nldxdw %r0, [%r2]\nexit", "load of region 0 (table)"},
		{"store", "lddw %r2, region[0]\nstdw [%r2], 0\nmov %r0, 0\nexit", "store of region 0 (table)"},
		{"atomic", "lddw %r2, region[0]\nmov %r3, 1\nlock add [%r2], %r3\nmov %r0, 0\nexit", "atomic add (8 bytes) of region 0 (table)"},
		{"hash of a region", "lddw %r1, region[0]\nmov %r2, 8\ncall 1\nexit", "hash of region 0 (table)"},
		{"trace", "stdw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\ncall 5\nexit", "may not call trace: it exists only on the host"},
		{"forward", "mov %r1, 1\nmov %r2, 0\ncall 7\nexit", "may not call forward: it sends from the node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tc.src)
			if err != nil {
				t.Fatalf("assemble: %+v", err)
			}
			rep, err := Verify(insns, Config{Regions: regions, Entries: []Entry{{Name: "h.access", Slot: 0, Access: true}}})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %+v", err)
				}
				if e := rep.Entries[0]; !e.Access || !e.ClientEligible {
					t.Errorf("report %+v", e)
				}
				return
			}
			var verr *Error
			if !errors.As(err, &verr) || verr.Code != CodeAccessFunction || !strings.Contains(verr.Msg, tc.want) {
				t.Fatalf("got %v, want an %s rejection containing %q", err, CodeAccessFunction, tc.want)
			}
			// The same code is a fine handler.
			if _, err := Verify(insns, Config{Regions: regions}); err != nil {
				t.Errorf("as a handler: %+v", err)
			}
		})
	}
}

// ObjectConfig verifies each handler's access function as an entry after
// the handlers, so Report.Entries[i] stays handler i's.
func TestObjectAccessEntries(t *testing.T) {
	insns, err := bytecode.Assemble("lddw %r2, region[0]\nldxdw %r0, [%r2]\nexit\nmov %r0, 0\nexit\nmov %r0, 0\nexit")
	if err != nil {
		t.Fatal(err)
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Code: code,
		Handlers: []bytecode.Handler{{Name: "a", Entry: 0, MaxRanges: 1, Access: 4}, {Name: "b", ID: 1, Entry: 6}},
		Regions:  []bytecode.Region{{Name: "r", Size: 16}}}
	rep, err := VerifyObject(obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entries) != 3 || rep.Entries[0].Name != "a" || rep.Entries[1].Name != "b" || rep.Entries[2].Name != "a.access" || !rep.Entries[2].Access {
		t.Fatalf("entries %+v", rep.Entries)
	}
	if e, ok := rep.AccessReport(&obj.Handlers[0]); !ok || e.Slot != 4 {
		t.Errorf("AccessReport(a) = %+v, %v", e, ok)
	}
	if _, ok := rep.AccessReport(&obj.Handlers[1]); ok {
		t.Error("AccessReport(b) found one")
	}
	// An access function that reads the region is rejected.
	obj.Handlers[0].Access, obj.Handlers[1].Entry = 0, 4
	obj.Handlers = append(obj.Handlers, bytecode.Handler{Name: "c", ID: 2, Entry: 6})
	if _, err := VerifyObject(obj, Config{}); err == nil || !strings.Contains(err.Error(), "[access-function]") {
		t.Errorf("got %v, want an access-function rejection", err)
	}
}
