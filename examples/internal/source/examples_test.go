package source_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/chase"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/lang"
)

// TestExamplesAreTheirFiles: each example's Compile with the zero Config
// is the object naamc build makes of its .naam file (the declared values
// are the defaults), and DefaultConfig says what the file declares.
func TestExamplesAreTheirFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		compile func() (*bytecode.Object, error)
	}{
		{"../../kv/kv.naam", func() (*bytecode.Object, error) { return kvnode.Compile(kv.Config{}) }},
		{"../../chase/chase.naam", func() (*bytecode.Object, error) { return chase.Compile(chase.Config{}) }},
		{"../../rpc/ledger.naam", func() (*bytecode.Object, error) { return rpc.Compile(rpc.Config{}) }},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := compiler.Compile(lang.NewFileSet(), filepath.Base(tc.file), src)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got, err := tc.compile()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the example's default object is not the file's", tc.file)
		}
	}
	if c := kv.DefaultConfig(); c != (kv.Config{Region: "kv", Buckets: 1024, Probes: 16, ValueSize: 256}) {
		t.Errorf("kv.DefaultConfig() = %+v", c)
	}
	if c := chase.DefaultConfig(); c != (chase.Config{Region: "chase", Nodes: 4096, MaxHops: 64}) {
		t.Errorf("chase.DefaultConfig() = %+v", c)
	}
}
