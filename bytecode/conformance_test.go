package bytecode

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// conformanceDir is the bpf_conformance suite, beside the repository root.
const conformanceDir = "../../shared/conformance/bpf_conformance"

// conformanceProgram is one .data file: its -- asm section and, where the
// file has one, the expected encoding from its -- raw section.
type conformanceProgram struct {
	name string
	asm  string
	raw  []byte
}

// readConformance returns every program of the suite, or nil when the suite
// is not there.
func readConformance() ([]conformanceProgram, error) {
	files, err := filepath.Glob(filepath.Join(conformanceDir, "*.data"))
	if err != nil || len(files) == 0 {
		return nil, err
	}
	var progs []conformanceProgram
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p := conformanceProgram{name: strings.TrimSuffix(filepath.Base(f), ".data")}
		sections := splitSections(string(data))
		p.asm = sections["asm"]
		if raw, ok := sections["raw"]; ok {
			if p.raw, err = parseRawSection(raw); err != nil {
				return nil, err
			}
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// splitSections cuts a .data file at its "-- name" lines.
func splitSections(data string) map[string]string {
	sections := make(map[string]string)
	name := ""
	var body strings.Builder
	flush := func() {
		if name != "" {
			sections[name] = body.String()
		}
		body.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "-- "); ok {
			flush()
			name = strings.TrimSpace(rest)
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	return sections
}

// parseRawSection reads one 64-bit little-endian instruction slot per line.
func parseRawSection(s string) ([]byte, error) {
	var raw []byte
	for _, line := range strings.Fields(s) {
		v, err := strconv.ParseUint(line, 0, 64)
		if err != nil {
			return nil, err
		}
		raw = binary.LittleEndian.AppendUint64(raw, v)
	}
	return raw, nil
}

func conformanceOrSkip(t *testing.T) []conformanceProgram {
	t.Helper()
	progs, err := readConformance()
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) == 0 {
		t.Skipf("bpf_conformance suite not found at %s", conformanceDir)
	}
	return progs
}

// Every program of the suite assembles, passes Validate, and survives
// disassembly (plain and with labels) byte for byte.
func TestConformanceRoundTrip(t *testing.T) {
	progs := conformanceOrSkip(t)
	withRaw := 0
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			insns, err := Assemble(p.asm)
			if err != nil {
				t.Fatalf("Assemble:\n%+v", err)
			}
			if err := Validate(insns); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			raw := must(Encode(insns))
			if p.raw != nil {
				withRaw++
				equalBytes(t, raw, p.raw)
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
