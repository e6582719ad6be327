package kv

import (
	"fmt"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/nicrt"
)

// Compile and IDs are kvnode's, which imports kv, so that kv's own tests
// cannot import it; kvnode's tests check its copies.
func Compile(c Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return source.New("kv", SourceFile, Source()).CompileValues(c.Constants())
}

func IDs(p *nicrt.Program) (HandlerIDs, error) {
	return LookupIDs(func(name string) (uint32, error) {
		id, ok := p.HandlerID(name)
		if !ok {
			return 0, fmt.Errorf("kv: the program has no handler %q", name)
		}
		return id, nil
	})
}
