// Package source compiles the examples' handler programs. Each is a plain
// .naam file, embedded in its example's package, that naamc check and
// naamc build read as they are; its parameters are ordinary constant
// declarations (const BUCKETS = 1024), whose declared values are the
// example's defaults and which a Config overrides as naamc build -D does
// (lang.Config.Constants). Region names are the source's own: an installer
// binds them to registered regions (nicrt.InstallOptions.Regions).
package source

import (
	"bytes"
	"fmt"
	"go/constant"
	"sync"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// Program is one example's handler source.
type Program struct {
	pkg  string // the example's package name, which begins its errors
	file string // the file's name, as positions print it
	text []byte

	once     sync.Once
	declared map[string]uint32 // the source's uint32 constants, as declared
}

// New is the program of example pkg in file (its name, "kv.naam"), whose
// source is text.
func New(pkg, file string, text []byte) *Program {
	return &Program{pkg: pkg, file: file, text: text}
}

// File is the source's file name; Text the source as written.
func (p *Program) File() string { return p.file }
func (p *Program) Text() []byte { return bytes.Clone(p.text) }

// Param ties one field of an example's Config to the constant of the
// source that it sets.
type Param struct {
	Const string  // the constant's name: "BUCKETS"
	Value *uint32 // the field; 0 means the declared value
}

// Defaults sets every parameter that is 0 to its constant's declared
// value. A constant the source does not declare (or that does not check)
// leaves its parameter 0: Compile reports why.
func (p *Program) Defaults(params ...Param) {
	for _, pa := range params {
		if *pa.Value == 0 {
			*pa.Value = p.declaredValues()[pa.Const]
		}
	}
}

func (p *Program) declaredValues() map[string]uint32 {
	p.once.Do(func() {
		p.declared = map[string]uint32{}
		_, info, _ := lang.CheckSource(nil, p.file, p.text)
		if info == nil {
			return
		}
		for _, c := range info.Consts {
			if v, ok := constant.Uint64Val(c.Val); ok && v <= 1<<32-1 {
				p.declared[c.Name()] = uint32(v)
			}
		}
	})
	return p.declared
}

// Compile compiles the source with every parameter that is not 0 in place
// of its constant's declaration (0 keeps the declared value). Errors begin with the example's name and list
// the compiler's messages with file:line:col. The object is not verified
// here: the runtime verifies it at install (nicrt.NIC.Install).
func (p *Program) Compile(params ...Param) (*bytecode.Object, error) {
	conf := lang.Config{Constants: make(map[string]constant.Value, len(params))}
	for _, pa := range params {
		if *pa.Value != 0 {
			conf.Constants[pa.Const] = constant.MakeUint64(uint64(*pa.Value))
		}
	}
	fset := lang.NewFileSet()
	obj, err := compiler.CompileWith(conf, fset, p.file, p.text)
	if err != nil {
		var msg bytes.Buffer
		lang.Print(&msg, fset, err)
		return nil, fmt.Errorf("%s: compile: %w\n%s", p.pkg, err, msg.String())
	}
	return obj, nil
}

// CompileValues is Compile with the parameters given as the values of
// their constants, by name (0: the declared value), as a Config that
// lists them without pointers gives them.
func (p *Program) CompileValues(values map[string]uint32) (*bytecode.Object, error) {
	params := make([]Param, 0, len(values))
	for name, v := range values {
		params = append(params, Param{Const: name, Value: &v})
	}
	return p.Compile(params...)
}

// Declared is the value the source declares for each of names, 0 for a
// name it does not declare (or that does not check).
func (p *Program) Declared(names ...string) map[string]uint32 {
	out := make(map[string]uint32, len(names))
	for _, name := range names {
		out[name] = p.declaredValues()[name]
	}
	return out
}
