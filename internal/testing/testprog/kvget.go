package testprog

import (
	_ "embed"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
)

// The KV GET handler of lang/testdata/ok/kv_get.naam, written by hand in
// kvget.s as an expert would: the yardstick the compiler's output is
// measured against. Unlike the Benchmarks it is a handler (spec/abi.md), not
// a raw-mode body: r1 is the context, the key is the request, the table is
// region 0.

// Layout of the KV GET table, request and reply.
const (
	KVGetBuckets    = 1024 // buckets in the table
	KVGetProbes     = 8    // buckets probed before giving up
	KVGetBucketSize = 96   // key @0 (16), used @16, vlen @20, version @24, value @32 (64)
	KVGetTableSize  = KVGetBuckets * KVGetBucketSize
	KVGetKeySize    = 16 // the request
	KVGetValueSize  = 64
	KVGetReplySize  = 4 + KVGetValueSize // vlen u32, then the value
	KVGetNotFound   = 1                  // the error code of a miss
)

// KVGetSourceName is the name kvget.s goes by in KVGetHandObject's line table.
const KVGetSourceName = "kvget.s"

//go:embed testdata/kvget.s
var kvgetSource string

// KVGetHand returns the hand-written KV GET handler, assembled.
func KVGetHand() (asm.Instructions, error) {
	return bytecode.Assemble(kvgetSource)
}

// KVGetHandObject returns the hand-written KV GET handler as an object, laid
// out as the compiler lays out kv_get.naam: handler "get" (id 0, entry 0),
// its argument and results, region 0 "table", and a line table into
// kvget.s.
func KVGetHandObject() (*bytecode.Object, error) {
	insns, lines, err := bytecode.AssembleLines(kvgetSource)
	if err != nil {
		return nil, err
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		return nil, err
	}
	offsets, _ := bytecode.Slots(insns)
	table := make([]bytecode.Line, len(insns))
	for i, line := range lines {
		table[i] = bytecode.Line{Insn: offsets[i], File: KVGetSourceName, Line: line}
	}
	o := &bytecode.Object{
		Magic:   bytecode.ObjectMagic,
		Version: bytecode.ObjectVersion,
		Source:  KVGetSourceName,
		Code:    code,
		Handlers: []bytecode.Handler{{
			Name:    "get",
			ID:      0,
			Entry:   0,
			Args:    []bytecode.Field{{Name: "key", Type: "[u8; 16]", Offset: 0, Size: KVGetKeySize}},
			Results: []bytecode.Field{{Name: "vlen", Type: "u32", Offset: 0, Size: 4}, {Name: "value", Type: "[u8; 64]", Offset: 4, Size: KVGetValueSize}},
		}},
		Regions: []bytecode.Region{{Name: "table", Size: KVGetTableSize, Writable: false}},
		Lines:   table,
		Sources: []bytecode.SourceFile{{Name: KVGetSourceName, Text: kvgetSource}},
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}
