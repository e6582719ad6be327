package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestExit(t *testing.T) {
	base := errors.New("base")
	for _, tc := range []struct {
		name     string
		have     error
		code     int
		stderr   string
		wrapsErr error
	}{
		{"nil", nil, 0, "", nil},
		{"plain", errors.New("no such file"), ExitTool, "prog: no such file\n", nil},
		{"printed", &ExitError{Code: 1}, 1, "", nil},
		{"message", &ExitError{Code: 1, Err: base}, 1, "prog: base\n", base},
		{"errorf", Errorf(2, "-D %s: %w", "N", base), 2, "prog: -D N: base\n", base},
		{"wrapped", fmt.Errorf("ctx: %w", &ExitError{Code: 3, Err: base}), 3, "prog: ctx: base\n", base},
	} {
		var b bytes.Buffer
		if got := Exit(&b, "prog", tc.have); got != tc.code || b.String() != tc.stderr {
			t.Errorf("%s: Exit = %d, %q; want %d, %q", tc.name, got, b.String(), tc.code, tc.stderr)
		}
		if tc.wrapsErr != nil && !errors.Is(tc.have, tc.wrapsErr) {
			t.Errorf("%s: does not wrap its error", tc.name)
		}
	}
	if s := (&ExitError{Code: 1}).Error(); s != "exit status 1" {
		t.Errorf("Error() = %q", s)
	}
}

func TestCodesAreTheConstants(t *testing.T) {
	want := []int{ExitOK, ExitFailed, ExitUsage, ExitUnreachable}
	if len(Codes) != len(want) {
		t.Fatalf("%d codes, want %d", len(Codes), len(want))
	}
	for i, c := range Codes {
		if c.Status != want[i] || c.Name == "" || c.Meaning == "" {
			t.Errorf("Codes[%d] = %+v, want status %d with a name and a meaning", i, c, want[i])
		}
	}
	if ExitTool != ExitUsage {
		t.Errorf("ExitTool = %d, want ExitUsage", ExitTool)
	}
}

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		have debug.BuildInfo
		want string
	}{
		{"no vcs", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, "(devel) rev unknown go1.26.0"},
		{"empty version", debug.BuildInfo{GoVersion: "go1.26.0"}, "(devel) rev unknown go1.26.0"},
		{"tagged", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "false"},
		}}, "v0.3.0 rev 0123456789ab 2026-12-01T10:00:00Z go1.26.0"},
		{"modified", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"},
		}}, "(devel) rev abc+modified go1.26.0"},
	} {
		if got := versionOf(&tc.have); got != tc.want {
			t.Errorf("%s: versionOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSpecExitTable checks spec/cli.md's exit-status table against Codes.
func TestSpecExitTable(t *testing.T) {
	b, err := os.ReadFile("../../spec/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("| status | name | meaning |\n|---|---|---|\n")
	for _, c := range Codes {
		fmt.Fprintf(&want, "| %d | %s | %s |\n", c.Status, c.Name, c.Meaning)
	}
	if !strings.Contains(string(b), want.String()) {
		t.Errorf("spec/cli.md lacks the exit-status table as internal/cli has it:\n%s", want.String())
	}
}
