package bytecode

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

func TestHelperTable(t *testing.T) {
	if Helpers[0] != (HelperSpec{}) {
		t.Errorf("Helpers[0] is %+v, want the zero HelperSpec", Helpers[0])
	}
	if _, ok := Helper(0); ok {
		t.Error("Helper(0) found a helper")
	}
	if _, ok := Helper(uint32(len(Helpers))); ok {
		t.Error("Helper(len(Helpers)) found a helper")
	}
	names := make(map[string]uint32)
	for id, h := range Helpers[1:] {
		id := uint32(id + 1)
		if h.ID != id {
			t.Errorf("Helpers[%d].ID = %d", id, h.ID)
		}
		if got, ok := Helper(id); !ok || got.Name != h.Name {
			t.Errorf("Helper(%d) = %v, %v", id, got.Name, ok)
		}
		if h.Name == "" || h.Returns == "" || h.Doc == "" {
			t.Errorf("helper %d: empty name, returns or doc: %+v", id, h)
		}
		if other, dup := names[h.Name]; dup {
			t.Errorf("helper name %q used by %d and %d", h.Name, other, id)
		}
		names[h.Name] = id
		n := h.NumArgs()
		for i, k := range h.Args {
			switch {
			case i >= n && k != ArgNone:
				t.Errorf("%s: argument %d is %v after ArgNone", h.Name, i+1, k)
			case i < n && h.ArgNames[i] == "":
				t.Errorf("%s: argument %d has no name", h.Name, i+1)
			case i >= n && h.ArgNames[i] != "":
				t.Errorf("%s: unused argument %d has name %q", h.Name, i+1, h.ArgNames[i])
			case k.IsMem():
				if _, ok := h.SizeArg(i); !ok {
					t.Errorf("%s: memory argument %d (%v) is not followed by an ArgSize", h.Name, i+1, k)
				}
			case k == ArgSize:
				if i == 0 || !h.Args[i-1].IsMem() {
					t.Errorf("%s: ArgSize argument %d does not follow a memory argument", h.Name, i+1)
				}
			}
		}
	}
	copyHelper, _ := Helper(HelperCopy)
	for i, want := range []int{2, 2} {
		if got, ok := copyHelper.SizeArg(i); !ok || got != want {
			t.Errorf("copy.SizeArg(%d) = %d, %v, want %d", i, got, ok, want)
		}
	}
	if _, ok := copyHelper.SizeArg(2); ok {
		t.Error("copy.SizeArg(2) found a size for the size argument")
	}
	if got := copyHelper.Signature(); got != "copy(dst, src, len)" {
		t.Errorf("copy.Signature() = %q", got)
	}
}

func TestCtxFields(t *testing.T) {
	if len(CtxFields)*8 != CtxSize {
		t.Fatalf("%d context fields for a %d-byte context", len(CtxFields), CtxSize)
	}
	names := make(map[string]bool)
	for i, f := range CtxFields {
		if f.Offset != 8*i || f.Size != 8 || f.Name == "" || f.Doc == "" || names[f.Name] {
			t.Errorf("CtxFields[%d] = %+v", i, f)
		}
		names[f.Name] = true
		if got, ok := CtxFieldAt(f.Offset); !ok || got != f {
			t.Errorf("CtxFieldAt(%d) = %+v, %v", f.Offset, got, ok)
		}
	}
	for _, off := range []int{-8, 4, CtxSize, 1 << 20} {
		if f, ok := CtxFieldAt(off); ok {
			t.Errorf("CtxFieldAt(%d) = %+v", off, f)
		}
	}
	for off, kind := range map[int]CtxKind{CtxData: CtxKindRequest, CtxDataEnd: CtxKindRequestEnd, CtxReply: CtxKindReply, CtxReplyEnd: CtxKindReplyEnd, CtxTenant: CtxKindScalar} {
		if f, _ := CtxFieldAt(off); f.Kind != kind {
			t.Errorf("field at %d is %v, want %v", off, f.Kind, kind)
		}
	}
}

func TestReturnConvention(t *testing.T) {
	tests := []struct {
		r0    int64
		want  Outcome
		code  int32
		reply uint64
	}{
		{0, OutcomeReply, 0, 0},
		{17, OutcomeReply, 0, 17},
		{math.MaxInt64, OutcomeReply, 0, math.MaxInt64},
		{-1, OutcomeError, 1, 0},
		{-MaxErrorCode, OutcomeError, MaxErrorCode, 0},
		{-MaxErrorCode - 1, OutcomeInvalid, 0, 0},
		{math.MinInt64 + 1, OutcomeInvalid, 0, 0},
		{ReturnForwarded, OutcomeForwarded, 0, 0},
	}
	for _, tt := range tests {
		if got := ClassifyReturn(tt.r0); got != tt.want {
			t.Errorf("ClassifyReturn(%d) = %v, want %v", tt.r0, got, tt.want)
		}
		code, ok := ErrorCode(tt.r0)
		if ok != (tt.want == OutcomeError) || code != tt.code {
			t.Errorf("ErrorCode(%d) = %d, %v", tt.r0, code, ok)
		}
		n, ok := ReplyLength(tt.r0)
		if ok != (tt.want == OutcomeReply) || n != tt.reply {
			t.Errorf("ReplyLength(%d) = %d, %v", tt.r0, n, ok)
		}
		if tt.want == OutcomeError && ErrorReturn(tt.code) != tt.r0 {
			t.Errorf("ErrorReturn(%d) = %d, want %d", tt.code, ErrorReturn(tt.code), tt.r0)
		}
	}
}

// The tables in spec/abi.md must say what the code says.
func TestABISpecTables(t *testing.T) {
	spec, err := os.ReadFile("../spec/abi.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, f := range CtxFields {
		rows = append(rows, fmt.Sprintf("| %d | `%s` | %v |", f.Offset, f.Name, f.Kind))
	}
	for _, h := range Helpers[1:] {
		kinds := make([]string, h.NumArgs())
		for i := range kinds {
			kinds[i] = h.Args[i].String()
		}
		if len(kinds) == 0 {
			kinds = []string{"–"}
		}
		rows = append(rows, fmt.Sprintf("| %d | `%s` | %s |", h.ID, h.Signature(), strings.Join(kinds, ", ")))
	}
	for _, row := range rows {
		if !strings.Contains(string(spec), row) {
			t.Errorf("spec/abi.md has no row starting %s", row)
		}
	}
	for _, s := range []string{fmt.Sprint(StackSize), fmt.Sprint(MaxFrames), fmt.Sprint(MaxRegions), "math.MinInt64"} {
		if !strings.Contains(string(spec), s) {
			t.Errorf("spec/abi.md does not mention %s", s)
		}
	}
}
