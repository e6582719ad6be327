package jit

// A minimal WebAssembly binary encoder: just the sections, types and
// instructions the translator emits.

// Value types.
const (
	wI32 byte = 0x7f
	wI64 byte = 0x7e
)

// Instruction opcodes used by the translator.
const (
	opUnreachable byte = 0x00
	opBlock       byte = 0x02
	opLoop        byte = 0x03
	opIf          byte = 0x04
	opElse        byte = 0x05
	opEnd         byte = 0x0b
	opBr          byte = 0x0c
	opBrIf        byte = 0x0d
	opBrTable     byte = 0x0e
	opReturn      byte = 0x0f
	opCall        byte = 0x10
	opSelect      byte = 0x1b
	opLocalGet    byte = 0x20
	opLocalSet    byte = 0x21
	opLocalTee    byte = 0x22

	opI32Load    byte = 0x28
	opI64Load    byte = 0x29
	opI64Load8S  byte = 0x30
	opI64Load8U  byte = 0x31
	opI64Load16S byte = 0x32
	opI64Load16U byte = 0x33
	opI64Load32S byte = 0x34
	opI64Load32U byte = 0x35
	opI32Store   byte = 0x36
	opI64Store   byte = 0x37
	opI64Store8  byte = 0x3c
	opI64Store16 byte = 0x3d
	opI64Store32 byte = 0x3e

	opI32Const byte = 0x41
	opI64Const byte = 0x42

	opI32Eqz byte = 0x45
	opI32Eq  byte = 0x46
	opI32Ne  byte = 0x47
	opI32LtS byte = 0x48
	opI32LtU byte = 0x49
	opI32GtS byte = 0x4a
	opI32GtU byte = 0x4b
	opI32LeS byte = 0x4c
	opI32LeU byte = 0x4d
	opI32GeS byte = 0x4e
	opI32GeU byte = 0x4f
	opI64Eqz byte = 0x50
	opI64Eq  byte = 0x51
	opI64Ne  byte = 0x52
	opI64LtS byte = 0x53
	opI64LtU byte = 0x54
	opI64GtS byte = 0x55
	opI64GtU byte = 0x56
	opI64LeS byte = 0x57
	opI64LeU byte = 0x58
	opI64GeS byte = 0x59
	opI64GeU byte = 0x5a

	opI32Add  byte = 0x6a
	opI32Sub  byte = 0x6b
	opI32Mul  byte = 0x6c
	opI32DivS byte = 0x6d
	opI32DivU byte = 0x6e
	opI32RemS byte = 0x6f
	opI32RemU byte = 0x70
	opI32And  byte = 0x71
	opI32Or   byte = 0x72
	opI32Xor  byte = 0x73
	opI32Shl  byte = 0x74
	opI32ShrS byte = 0x75
	opI32ShrU byte = 0x76
	opI32Rotl byte = 0x77
	opI32Rotr byte = 0x78
	opI64Add  byte = 0x7c
	opI64Sub  byte = 0x7d
	opI64Mul  byte = 0x7e
	opI64DivS byte = 0x7f
	opI64DivU byte = 0x80
	opI64RemS byte = 0x81
	opI64RemU byte = 0x82
	opI64And  byte = 0x83
	opI64Or   byte = 0x84
	opI64Xor  byte = 0x85
	opI64Shl  byte = 0x86
	opI64ShrS byte = 0x87
	opI64ShrU byte = 0x88
	opI64Rotl byte = 0x89

	opI32WrapI64     byte = 0xa7
	opI64ExtendI32U  byte = 0xad
	opI32Extend8S    byte = 0xc0
	opI32Extend16S   byte = 0xc1
	opI64Extend8S    byte = 0xc2
	opI64Extend16S   byte = 0xc3
	opI64Extend32S   byte = 0xc4
	opAtomicPrefix   byte = 0xfe
	blockTypeEmpty   byte = 0x40
	blockTypeI64     byte = 0x7e
	blockTypeI32     byte = 0x7f
	sectionType      byte = 1
	sectionImport    byte = 2
	sectionFunction  byte = 3
	sectionMemory    byte = 5
	sectionExport    byte = 7
	sectionCode      byte = 10
	externKindFunc   byte = 0
	externKindMemory byte = 2
)

// Atomic read-modify-write opcodes (after the 0xfe prefix).
const (
	atomI32RmwAdd     = 0x1e
	atomI64RmwAdd     = 0x1f
	atomI32RmwAnd     = 0x2c
	atomI64RmwAnd     = 0x2d
	atomI32RmwOr      = 0x33
	atomI64RmwOr      = 0x34
	atomI32RmwXor     = 0x3a
	atomI64RmwXor     = 0x3b
	atomI32RmwXchg    = 0x41
	atomI64RmwXchg    = 0x42
	atomI32RmwCmpxchg = 0x48
	atomI64RmwCmpxchg = 0x49
)

// code is a growing instruction sequence.
type code []byte

func (c *code) op(b ...byte) { *c = append(*c, b...) }

func (c *code) u32(v uint32) { *c = appendULEB(*c, uint64(v)) }

func (c *code) i32(v int32) { c.op(opI32Const); *c = appendSLEB(*c, int64(v)) }

func (c *code) i64(v int64) { c.op(opI64Const); *c = appendSLEB(*c, v) }

func (c *code) get(l uint32) { c.op(opLocalGet); c.u32(l) }

func (c *code) set(l uint32) { c.op(opLocalSet); c.u32(l) }

func (c *code) tee(l uint32) { c.op(opLocalTee); c.u32(l) }

// mem emits a load or store with alignment hint align (log2) and offset.
func (c *code) mem(op byte, align, offset uint32) { c.op(op); c.u32(align); c.u32(offset) }

// atomic emits an atomic instruction on natural alignment log2 align.
func (c *code) atomic(op byte, align uint32) {
	c.op(opAtomicPrefix)
	c.u32(uint32(op))
	c.u32(align)
	c.u32(0)
}

func (c *code) br(op byte, depth int) { c.op(op); c.u32(uint32(depth)) }

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendULEB(b, uint64(len(s)))
	return append(b, s...)
}

func appendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = appendULEB(b, uint64(len(body)))
	return append(b, body...)
}

// funcType is a function signature.
type funcType struct{ params, results []byte }

func (t funcType) encode(b []byte) []byte {
	b = append(b, 0x60)
	b = appendULEB(b, uint64(len(t.params)))
	b = append(b, t.params...)
	b = appendULEB(b, uint64(len(t.results)))
	return append(b, t.results...)
}

// function is a defined function: its type index, locals and body (without
// the final end, which encode adds).
type function struct {
	typ    uint32
	locals []byte // one value type per local, after the parameters
	body   code
}

// encode appends f to b and returns where in b f.body begins.
func (f *function) encode(b []byte) ([]byte, int) {
	var fb []byte
	// Locals as runs of one type.
	var runs [][2]uint64
	for _, t := range f.locals {
		if n := len(runs); n > 0 && runs[n-1][1] == uint64(t) {
			runs[n-1][0]++
			continue
		}
		runs = append(runs, [2]uint64{1, uint64(t)})
	}
	fb = appendULEB(fb, uint64(len(runs)))
	for _, r := range runs {
		fb = appendULEB(fb, r[0])
		fb = append(fb, byte(r[1]))
	}
	prefix := len(fb)
	fb = append(fb, f.body...)
	fb = append(fb, opEnd)
	b = appendULEB(b, uint64(len(fb)))
	at := len(b) + prefix
	return append(b, fb...), at
}

// moduleSpec is the whole module: types, one imported function, defined
// functions, one exported memory of minPages and the exported run function.
type moduleSpec struct {
	types      []funcType
	importMod  string
	importName string
	importType uint32
	funcs      []function
	minPages   uint32
	exportName string
	exportFunc uint32 // index in the function space (imports first)
}

// encode returns the module and the module offset at which the body of
// the last function begins (wasmtime reports traps by module offset).
func (m *moduleSpec) encode() ([]byte, int) {
	b := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	var s []byte
	s = appendULEB(s, uint64(len(m.types)))
	for _, t := range m.types {
		s = t.encode(s)
	}
	b = appendSection(b, sectionType, s)

	s = appendULEB(nil, 1)
	s = appendName(s, m.importMod)
	s = appendName(s, m.importName)
	s = append(s, externKindFunc)
	s = appendULEB(s, uint64(m.importType))
	b = appendSection(b, sectionImport, s)

	s = appendULEB(nil, uint64(len(m.funcs)))
	for _, f := range m.funcs {
		s = appendULEB(s, uint64(f.typ))
	}
	b = appendSection(b, sectionFunction, s)

	s = appendULEB(nil, 1)
	s = append(s, 0x00) // limits: min only
	s = appendULEB(s, uint64(m.minPages))
	b = appendSection(b, sectionMemory, s)

	s = appendULEB(nil, 2)
	s = appendName(s, m.exportName)
	s = append(s, externKindFunc)
	s = appendULEB(s, uint64(m.exportFunc))
	s = appendName(s, "memory")
	s = append(s, externKindMemory)
	s = appendULEB(s, 0)
	b = appendSection(b, sectionExport, s)

	s = appendULEB(nil, uint64(len(m.funcs)))
	var last int
	for i := range m.funcs {
		s, last = m.funcs[i].encode(s)
	}
	head := len(appendULEB(append(b, sectionCode), uint64(len(s))))
	return appendSection(b, sectionCode, s), head + last
}
