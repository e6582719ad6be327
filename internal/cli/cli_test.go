package cli

import (
	"bytes"
	"errors"
	"fmt"
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
