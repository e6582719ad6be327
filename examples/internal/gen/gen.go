package gen

import (
	"bytes"
	"fmt"
	"regexp"
	"text/template"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// Source executes t with data.
func Source(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Compile compiles src as file; errors name pkg and list the compiler's
// messages with file:line:col. The object is not verified here: the
// runtime verifies it at install.
func Compile(pkg, file string, src []byte) (*bytecode.Object, error) {
	fset := lang.NewFileSet()
	obj, err := compiler.Compile(fset, file, src)
	if err != nil {
		var msg bytes.Buffer
		lang.Print(&msg, fset, err)
		return nil, fmt.Errorf("%s: compile: %w\n%s", pkg, err, msg.String())
	}
	return obj, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsName reports whether s may name a region in a handler program: an
// identifier that is not a keyword of the language.
func IsName(s string) bool {
	return identRE.MatchString(s) && !lang.IsKeyword(s)
}
