package compiler

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// Compile parses, checks and compiles one source file. Front-end and
// compile errors are a lang.ErrorList, sorted, each with file:line:col.
// It is CompileWith with the zero lang.Config: the source as written.
func Compile(fset *lang.FileSet, name string, src []byte) (*bytecode.Object, error) {
	return CompileWith(lang.Config{}, fset, name, src)
}

// CompileWith compiles one source file with the front end configured by
// conf (constant overrides, lang.Config.Constants). Errors are as
// Compile's, and an override naming no constant is conf.Check's
// *lang.OverrideError. The object records the source as written, not the
// overrides.
func CompileWith(conf lang.Config, fset *lang.FileSet, name string, src []byte) (*bytecode.Object, error) {
	if fset != nil {
		fset.AddFile(name, src)
	}
	f, info, err := conf.CheckSource(fset, name, src)
	if err != nil {
		return nil, err
	}
	obj, err := CompileFile(f, info)
	if err != nil {
		return nil, err
	}
	obj.Sources = []bytecode.SourceFile{{Name: name, Text: string(src)}}
	return obj, nil
}

// CompileFile compiles a file the checker accepted. The object carries no
// source text (Compile adds it).
func CompileFile(f *lang.File, info *lang.Info) (*bytecode.Object, error) {
	cu := &compilation{info: info, addrTaken: addressTaken(f, info)}
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Source: f.Name}
	for _, r := range info.Regions {
		obj.Regions = append(obj.Regions, bytecode.Region{Name: r.Name(), Size: uint64(lang.Sizeof(r.Type())), Writable: r.Writable})
	}
	var insns asm.Instructions
	var pos []lang.Pos
	slots := 0
	for _, h := range info.Handlers {
		code, hpos, err := cu.function(h, (*builder).handler, "handler "+h.Name())
		if err != nil {
			if err != errAlreadyReported {
				cu.errs.Add(h.Pos(), err.Error())
			}
			continue
		}
		obj.Handlers = append(obj.Handlers, bytecode.Handler{
			Name: h.Name(), ID: uint32(h.ID), Entry: slots,
			Args: fields(h.Args), Results: fields(h.Reply),
		})
		for _, ins := range code {
			slots += int(ins.Size() / asm.InstructionSize)
		}
		insns = append(insns, code...)
		pos = append(pos, hpos...)
	}
	// The access functions follow all the handlers, so that a handler's
	// code is the same with or without a reads clause.
	for i, h := range info.Handlers {
		if h.Decl.Reads == nil || len(cu.errs) > 0 {
			continue
		}
		code, apos, err := cu.function(h, (*builder).access, "the reads clause of handler "+h.Name())
		if err != nil {
			if err != errAlreadyReported {
				cu.errs.Add(h.Decl.Reads.Pos(), err.Error())
			}
			continue
		}
		obj.Handlers[i].Access = slots
		obj.Handlers[i].MaxRanges = uint32(len(h.Decl.Reads.Items))
		for _, ins := range code {
			slots += int(ins.Size() / asm.InstructionSize)
		}
		insns = append(insns, code...)
		pos = append(pos, apos...)
	}
	if len(cu.errs) > 0 {
		cu.errs.Sort()
		return nil, cu.errs
	}
	if len(insns) == 0 {
		// An object needs code; a file without handlers has nothing to run.
		return nil, lang.ErrorList{{Pos: f.Pos(), Msg: "no handlers: a program needs at least one handler"}}
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	obj.Code = code
	obj.Lines = lineTable(insns, pos)
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	return obj, nil
}

// compilation is the state shared by the handlers of one file.
type compilation struct {
	info      *lang.Info
	addrTaken map[*lang.Var]bool
	errs      lang.ErrorList
}

// function compiles one entry of handler h — the handler (lower is
// (*builder).handler) or its access function ((*builder).access) — to
// instructions, with a position each; what names it in errors.
func (cu *compilation) function(h *lang.Handler, lower func(*builder), what string) (asm.Instructions, []lang.Pos, error) {
	b := &builder{cu: cu, h: h, refd: map[int]bool{}, vars: map[*lang.Var]*local{},
		failAt: map[failSite]int{}, pinned: map[vreg]bool{}, varRegs: map[vreg]bool{}, bounds: map[*lang.Var]uint64{}}
	nerr := len(cu.errs)
	lower(b)
	if len(cu.errs) > nerr {
		return nil, nil, errAlreadyReported
	}
	fc := &fnCode{code: removeJumpsToNext(b.code), nreg: b.nreg, unspillable: b.pinned, stackBase: b.stackMax}
	alloc, err := fc.allocate()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", what, err)
	}
	if total := b.stackMax + alloc.spillBytes; total > stackSize {
		return nil, nil, fmt.Errorf("%s needs %d bytes of stack (%d for locals, %d for spilled values); a frame has %d",
			what, total, b.stackMax, alloc.spillBytes, stackSize)
	}
	e := &emitter{labels: map[int]int{}, phys: alloc.phys}
	for i := range fc.code {
		e.insn(&fc.code[i])
	}
	if err := e.resolve(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", what, err)
	}
	return e.insns, e.pos, nil
}

// errAlreadyReported says a handler's errors are in cu.errs already.
var errAlreadyReported = errors.New("already reported")

func fields(l lang.Layout) []bytecode.Field {
	var out []bytecode.Field
	for _, f := range l.Fields {
		name := f.Name
		if name == "" {
			name = "result"
		}
		out = append(out, bytecode.Field{Name: name, Type: f.Type.String(), Offset: uint32(f.Offset), Size: uint32(lang.Sizeof(f.Type))})
	}
	return out
}

// lineTable maps slots to positions, one entry where the position changes.
func lineTable(insns asm.Instructions, pos []lang.Pos) []bytecode.Line {
	var lines []bytecode.Line
	slot := 0
	for i, ins := range insns {
		p := pos[i]
		l := bytecode.Line{Insn: slot}
		if p.IsValid() {
			l.File, l.Line, l.Col = p.File, p.Line, p.Col
		}
		if n := len(lines); n == 0 || lines[n-1].File != l.File || lines[n-1].Line != l.Line || lines[n-1].Col != l.Col {
			lines = append(lines, l)
		}
		slot += int(ins.Size() / asm.InstructionSize)
	}
	return lines
}

// addressTaken finds the scalar variables whose address is needed — by
// &x, or as the bytes of hash, copy, trace or send — so that they live on
// the stack instead of in a register.
func addressTaken(f *lang.File, info *lang.Info) map[*lang.Var]bool {
	taken := map[*lang.Var]bool{}
	var mark func(e lang.Expr)
	mark = func(e lang.Expr) {
		for {
			if _, ok := info.Types[e].Type.(*lang.Ref); ok {
				return // the bytes are wherever the reference points
			}
			switch x := e.(type) {
			case *lang.ParenExpr:
				e = x.X
				continue
			case *lang.IndexExpr:
				e = x.X
				continue
			case *lang.SelectorExpr:
				e = x.X
				continue
			case *lang.Ident:
				if v, ok := info.Uses[x].(*lang.Var); ok {
					taken[v] = true
				}
			}
			return
		}
	}
	lang.Inspect(f, func(_, n lang.Node) {
		switch n := n.(type) {
		case *lang.UnaryExpr:
			if n.Op == lang.AND {
				mark(n.X)
			}
		case *lang.CallExpr:
			b, ok := info.Uses[n.Fun].(*lang.Builtin)
			if !ok {
				return
			}
			switch b.Name() {
			case "hash", "trace":
				if len(n.Args) == 1 {
					mark(n.Args[0])
				}
			case "copy":
				for _, a := range n.Args {
					mark(a)
				}
			case "send":
				if len(n.Args) == 3 {
					mark(n.Args[2])
				}
			}
		}
	})
	return taken
}
