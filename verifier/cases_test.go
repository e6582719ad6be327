package verifier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// verifierCase is one file of testdata/cases: a raw-mode program and what
// the verifier must say of it (see testdata/cases/README.md).
type verifierCase struct {
	name       string
	src        string
	memSize    uint64
	budget     uint64
	wantCode   Code // "" for accept
	wantInsn   int  // -1 when not given
	maxInsns   int64
	rangeLo    uint64
	rangeHi    uint64
	hasRange   bool
	hasMaxInsn bool
	raw        []byte // from "# raw: 0x…" lines: slots the assembler would refuse
}

func parseCase(path string) (verifierCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return verifierCase{}, err
	}
	c := verifierCase{name: strings.TrimSuffix(filepath.Base(path), ".s"), src: string(data), memSize: 64, wantInsn: -1}
	sawWant := false
	for i, line := range strings.Split(string(data), "\n") {
		body, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			if strings.TrimSpace(line) == "" {
				continue
			}
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(body), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		bad := func() error { return fmt.Errorf("%s:%d: bad %s header %q", path, i+1, key, val) }
		switch strings.TrimSpace(key) {
		case "mem-size":
			if c.memSize, err = strconv.ParseUint(val, 0, 64); err != nil {
				return c, bad()
			}
		case "budget":
			if c.budget, err = strconv.ParseUint(val, 0, 64); err != nil {
				return c, bad()
			}
		case "want":
			sawWant = true
			f := strings.Fields(val)
			switch {
			case len(f) == 1 && f[0] == "accept":
			case len(f) == 2 && f[0] == "reject":
				c.wantCode = Code(f[1])
			default:
				return c, bad()
			}
		case "insn":
			if c.wantInsn, err = strconv.Atoi(val); err != nil {
				return c, bad()
			}
		case "max-insns":
			if c.maxInsns, err = strconv.ParseInt(val, 0, 64); err != nil {
				return c, bad()
			}
			c.hasMaxInsn = true
		case "raw":
			v, err := strconv.ParseUint(val, 0, 64)
			if err != nil {
				return c, bad()
			}
			c.raw = binary.LittleEndian.AppendUint64(c.raw, v)
		case "max-insns-range":
			f := strings.Fields(val)
			if len(f) != 2 {
				return c, bad()
			}
			lo, err1 := strconv.ParseUint(f[0], 0, 64)
			hi, err2 := strconv.ParseUint(f[1], 0, 64)
			if err1 != nil || err2 != nil {
				return c, bad()
			}
			c.rangeLo, c.rangeHi, c.hasRange = lo, hi, true
		}
	}
	if !sawWant {
		return c, fmt.Errorf("%s: no want: header", path)
	}
	return c, nil
}

// TestCases runs every case under testdata/cases.
func TestCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.s")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no cases yet")
	}
	accepted, rejected := 0, 0
	for _, f := range files {
		vc, err := parseCase(f)
		if err != nil {
			t.Error(err)
			continue
		}
		t.Run(vc.name, func(t *testing.T) {
			var rep *Report
			var err error
			if vc.raw != nil {
				// Slots the assembler refuses: Verify must reject them as
				// the decoder would, naming the slot.
				insns, derr := bytecode.Decode(vc.raw)
				if derr != nil {
					var ie *bytecode.InsnError
					if !errors.As(derr, &ie) {
						t.Fatalf("decode: %v", derr)
					}
					err = &Error{Insn: ie.Insn, Code: CodeInvalidInsn, Msg: ie.Error()}
				} else {
					rep, err = Verify(insns, Config{Raw: true, MemSize: vc.memSize, Budget: vc.budget})
				}
			} else {
				insns, aerr := bytecode.Assemble(vc.src)
				if aerr != nil {
					t.Fatalf("assemble: %+v", aerr)
				}
				rep, err = Verify(insns, Config{Raw: true, MemSize: vc.memSize, Budget: vc.budget})
			}
			if vc.wantCode == "" {
				if err != nil {
					t.Fatalf("rejected: %+v", err)
				}
				accepted++
				if vc.hasMaxInsn && rep.MaxInsns != uint64(vc.maxInsns) {
					t.Errorf("max-insns = %d, want %d", rep.MaxInsns, vc.maxInsns)
				}
				if vc.hasRange && (rep.MaxInsns < vc.rangeLo || rep.MaxInsns > vc.rangeHi) {
					t.Errorf("max-insns = %d, want within [%d, %d]", rep.MaxInsns, vc.rangeLo, vc.rangeHi)
				}
				return
			}
			var verr *Error
			if !errors.As(err, &verr) {
				t.Fatalf("accepted (max-insns=%v), want reject %s", rep, vc.wantCode)
			}
			if verr.Code != vc.wantCode {
				t.Fatalf("rejected with %s, want %s: %+v", verr.Code, vc.wantCode, verr)
			}
			if vc.wantInsn >= 0 && verr.Insn != vc.wantInsn {
				t.Errorf("rejection names insn %d, want %d: %+v", verr.Insn, vc.wantInsn, verr)
			}
			rejected++
		})
	}
	t.Logf("%d cases: %d accepted and %d rejected as expected", len(files), accepted, rejected)
}
