// Package kvnode is the node side of the key-value store: it compiles
// kv.naam with a table's parameters (Compile) and finds the handler ids
// of the program a node installed (IDs). It is apart from examples/kv,
// the clients and the layout, so that a client (kvclient) links neither
// the compiler nor the NIC model.
package kvnode

import (
	"fmt"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/nicrt"
)

var prog = source.New("kv", kv.SourceFile, kv.Source())

// Compile compiles kv.naam with c's parameters. The object is not
// verified here: nicrt.NIC.Install verifies it (so does
// verifier.VerifyObject). Install it with c.InstallOptions().
func Compile(c kv.Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return prog.CompileValues(c.Constants())
}

// IDs finds the handler ids of p, an installed kv program.
func IDs(p *nicrt.Program) (kv.HandlerIDs, error) {
	return kv.LookupIDs(func(name string) (uint32, error) {
		id, ok := p.HandlerID(name)
		if !ok {
			return 0, fmt.Errorf("kv: the program has no handler %q", name)
		}
		return id, nil
	})
}
