package conformance

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Test is one parsed .data file.
type Test struct {
	Name      string // file name without .data
	Asm       string // the -- asm section, verbatim
	Mem       []byte // the -- mem section, decoded from hex bytes
	Result    uint64 // the -- result section
	HasResult bool   // whether -- result was present
	Error     string // the -- error section: the expected failure text
	Raw       []byte // the -- raw section: expected instruction slots, little-endian
	AsmLine   int    // line of the file where the asm section starts (1-based)
}

// EnvDir names the environment variable that overrides the suite's location.
const EnvDir = "NAAM_CONFORMANCE_DIR"

// Dir returns the suite's directory: $NAAM_CONFORMANCE_DIR, or
// ../shared/conformance/bpf_conformance beside the repository root found
// upward from the working directory. It fails when neither exists.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			suite := filepath.Join(dir, "..", "shared", "conformance", "bpf_conformance")
			if st, err := os.Stat(suite); err == nil && st.IsDir() {
				return suite, nil
			}
			return "", fmt.Errorf("conformance suite not found at %s (set %s)", suite, EnvDir)
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("repository root (go.mod) not found above " + wd)
		}
	}
}

// LoadAll parses every .data file in dir, sorted by name.
func LoadAll(dir string) ([]Test, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.data"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	tests := make([]Test, 0, len(files))
	for _, f := range files {
		t, err := ParseFile(f)
		if err != nil {
			return nil, err
		}
		tests = append(tests, t)
	}
	return tests, nil
}

// ParseFile parses one .data file.
func ParseFile(path string) (Test, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Test{}, err
	}
	t, err := Parse(string(data))
	t.Name = strings.TrimSuffix(filepath.Base(path), ".data")
	if err != nil {
		return t, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses the text of a .data file. Sections it does not use (-- c,
// -- no register offset) are skipped.
func Parse(text string) (Test, error) {
	var t Test
	section := ""
	var asmText, errText strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if name, ok := strings.CutPrefix(s, "-- "); ok {
			section = strings.TrimSpace(name)
			if section == "asm" {
				t.AsmLine = line + 1
			}
			continue
		}
		switch section {
		case "asm":
			asmText.WriteString(s)
			asmText.WriteByte('\n')
		case "mem":
			b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
			if err != nil {
				return t, fmt.Errorf("line %d: bad -- mem byte: %v", line, err)
			}
			t.Mem = append(t.Mem, b...)
		case "result":
			if f := strings.TrimSpace(s); f != "" {
				v, err := strconv.ParseUint(f, 0, 64)
				if err != nil {
					return t, fmt.Errorf("line %d: bad -- result %q", line, f)
				}
				t.Result, t.HasResult = v, true
			}
		case "error":
			errText.WriteString(s)
			errText.WriteByte('\n')
		case "raw":
			if f := strings.TrimSpace(s); f != "" {
				v, err := strconv.ParseUint(f, 0, 64)
				if err != nil {
					return t, fmt.Errorf("line %d: bad -- raw slot %q", line, f)
				}
				t.Raw = binary.LittleEndian.AppendUint64(t.Raw, v)
			}
		}
	}
	t.Asm = asmText.String()
	t.Error = strings.TrimSpace(errText.String())
	if t.Asm == "" {
		return t, errors.New("no -- asm section")
	}
	if !t.HasResult && t.Error == "" {
		return t, errors.New("neither -- result nor -- error section")
	}
	return t, sc.Err()
}

// Tests returns the suite for a test: it skips tb when the suite is not on
// this machine and fails it when a file does not parse.
func Tests(tb testing.TB) (dir string, tests []Test) {
	tb.Helper()
	dir, err := Dir()
	if err != nil {
		tb.Skipf("bpf_conformance suite absent: %v", err)
	}
	tests, err = LoadAll(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if len(tests) == 0 {
		tb.Fatalf("no .data files in %s", dir)
	}
	return dir, tests
}
