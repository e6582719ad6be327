package gen

import (
	"strings"
	"testing"
	"text/template"
)

func TestSourceAndCompile(t *testing.T) {
	tmpl := template.Must(template.New("t").Parse("handler h() -> u64 {\n    return {{.}}\n}\n"))
	src, err := Source(tmpl, 42)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := Compile("ex", "h.naam", src)
	if err != nil || len(obj.Handlers) != 1 || obj.Source != "h.naam" {
		t.Fatalf("%+v %v", obj, err)
	}
	bad, _ := Source(tmpl, "nope")
	if _, err := Compile("ex", "h.naam", bad); err == nil || !strings.Contains(err.Error(), "ex: compile") || !strings.Contains(err.Error(), "h.naam:2:12") {
		t.Errorf("a compile error: %v", err)
	}
	if _, err := Source(template.Must(template.New("t").Parse("{{.X}}")), 1); err == nil {
		t.Error("a template error was not returned")
	}
}

func TestIsName(t *testing.T) {
	for s, want := range map[string]bool{"table": true, "_t2": true, "": false, "2t": false, "a-b": false, "handler": false} {
		if IsName(s) != want {
			t.Errorf("IsName(%q) = %v", s, !want)
		}
	}
}
