package bytecode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/conformance"
)

// Every program of the suite assembles, passes Validate, and survives
// disassembly (plain and with labels) byte for byte.
func TestConformanceRoundTrip(t *testing.T) {
	_, progs := conformance.Tests(t)
	withRaw := 0
	for _, p := range progs {
		t.Run(p.Name, func(t *testing.T) {
			insns, err := Assemble(p.Asm)
			if err != nil {
				t.Fatalf("Assemble:\n%+v", err)
			}
			if err := Validate(insns); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			raw := must(Encode(insns))
			if p.Raw != nil {
				withRaw++
				equalBytes(t, raw, p.Raw)
			}

			decoded, err := Decode(raw)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(decoded, insns) {
				t.Errorf("Decode(Encode(x)) != x:\n%v\n%v", decoded, insns)
			}

			text, err := Disassemble(insns)
			if err != nil {
				t.Fatalf("Disassemble: %v", err)
			}
			equalBytes(t, assembleBytes(t, text), raw)

			var labelled strings.Builder
			if err := DisassembleTo(&labelled, insns, DisassembleOptions{Labels: true}); err != nil {
				t.Fatalf("DisassembleTo with labels: %v", err)
			}
			equalBytes(t, assembleBytes(t, labelled.String()), raw)
		})
	}
	if withRaw == 0 {
		t.Error("no program had a -- raw section (lddw.data has one)")
	}
	t.Logf("%d programs, %d compared with their -- raw section", len(progs), withRaw)
}
