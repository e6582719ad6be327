package lang

import "fmt"

// maxErrors is where the parser gives up: past ten errors the rest is
// mostly noise caused by the first.
const maxErrors = 10

// ParseFile parses one source file. It always returns a File (possibly
// with Bad nodes where parsing failed); err is an ErrorList, sorted, when
// there were scan or parse errors. fset, if not nil, records the source
// so that Print can quote lines.
func ParseFile(fset *FileSet, name string, src []byte) (*File, error) {
	if fset != nil {
		fset.AddFile(name, src)
	}
	p := &parser{}
	p.scanner.Init(name, src, func(pos Pos, msg string) { p.error(pos, "%s", msg) })
	f := p.parse(name)
	p.errs.RemoveMultiples()
	return f, p.errs.Err()
}

type parser struct {
	scanner Scanner
	errs    ErrorList

	tok Token
	pos Pos
	lit string
}

// bailout stops parsing after maxErrors errors.
type bailout struct{}

func (p *parser) parse(name string) (f *File) {
	f = &File{Name: name}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			f.EOF = p.pos
		}
	}()
	p.next()
	for p.tok != EOF {
		if p.tok == SEMICOLON {
			p.next()
			continue
		}
		f.Decls = append(f.Decls, p.decl())
	}
	f.EOF = p.pos
	return f
}

func (p *parser) next() {
	p.tok, p.pos, p.lit = p.scanner.Scan()
}

func (p *parser) error(pos Pos, format string, args ...any) {
	// One error per line: the others are usually consequences.
	if n := len(p.errs); n > 0 && p.errs[n-1].Pos.Line == pos.Line {
		return
	}
	p.errs.Add(pos, fmt.Sprintf(format, args...))
	if len(p.errs) >= maxErrors {
		panic(bailout{})
	}
}

func (p *parser) tokDesc() string {
	switch p.tok {
	case IDENT:
		return "name " + p.lit
	case INT:
		return "number " + p.lit
	case SEMICOLON:
		if p.lit == "\n" {
			return "newline"
		}
	case EOF:
		return "end of file"
	}
	return fmt.Sprintf("%q", p.tok.String())
}

func (p *parser) errorExpected(what string) {
	p.error(p.pos, "expected %s, found %s", what, p.tokDesc())
}

func (p *parser) expect(tok Token) Pos {
	pos := p.pos
	if p.tok != tok {
		p.errorExpected(fmt.Sprintf("%q", tok.String()))
	} else {
		p.next()
	}
	return pos
}

func (p *parser) got(tok Token) bool {
	if p.tok == tok {
		p.next()
		return true
	}
	return false
}

// expectStmtEnd consumes the ; or newline that ends a statement or a
// declaration; before } and at EOF none is needed.
func (p *parser) expectStmtEnd() {
	switch p.tok {
	case SEMICOLON:
		p.next()
	case RBRACE, EOF:
	default:
		p.errorExpected("end of statement (newline or ;)")
		p.skipStmt()
	}
}

// skipStmt advances past the current statement: to the next ; or up to the
// next } or statement keyword. A { … } on the way is skipped whole.
func (p *parser) skipStmt() {
	for {
		switch p.tok {
		case EOF, RBRACE:
			return
		case LBRACE:
			for depth := 0; p.tok != EOF; {
				if p.tok == LBRACE {
					depth++
				} else if p.tok == RBRACE {
					depth--
				}
				p.next()
				if depth == 0 {
					break
				}
			}
			continue
		case SEMICOLON:
			p.next()
			return
		case LET, VAR, IF, FOR, RETURN, BREAK, CONTINUE, FAIL:
			return
		case CONST, STRUCT, REGION, FN, HANDLER:
			return
		}
		p.next()
	}
}

// skipDecl advances to the next top-level keyword.
func (p *parser) skipDecl() {
	for {
		switch p.tok {
		case EOF, CONST, STRUCT, REGION, FN, HANDLER:
			return
		}
		p.next()
	}
}

func (p *parser) ident() *Ident {
	id := &Ident{NamePos: p.pos, Name: "_"}
	if p.tok == IDENT {
		id.Name = p.lit
		p.next()
	} else {
		p.errorExpected("name")
	}
	return id
}

// ---- Declarations ----

func (p *parser) decl() Decl {
	pos := p.pos
	var d Decl
	switch p.tok {
	case CONST:
		d = p.constDecl()
	case STRUCT:
		d = p.structDecl()
	case REGION:
		d = p.regionDecl()
	case FN:
		d = p.funcDecl()
	case HANDLER:
		d = p.handlerDecl()
	default:
		p.errorExpected("declaration (const, struct, region, fn or handler)")
		p.next()
		p.skipDecl()
		return &BadDecl{From: pos, To: p.pos}
	}
	if p.tok != EOF && p.tok != SEMICOLON {
		p.errorExpected("end of declaration (newline or ;)")
		p.skipDecl()
	}
	return d
}

func (p *parser) constDecl() *ConstDecl {
	d := &ConstDecl{Const: p.expect(CONST)}
	d.Name = p.ident()
	if p.got(COLON) {
		d.Type = p.typ()
	}
	p.expect(ASSIGN)
	d.Value = p.expr()
	return d
}

func (p *parser) structDecl() *StructDecl {
	d := &StructDecl{Struct: p.expect(STRUCT)}
	d.Name = p.ident()
	p.expect(LBRACE)
	for p.tok != RBRACE && p.tok != EOF {
		if p.got(SEMICOLON) {
			continue
		}
		if p.tok != IDENT {
			p.errorExpected("field name")
			p.next()
			p.skipStmt()
			continue
		}
		f := &Field{Name: p.ident()}
		p.expect(COLON)
		f.Type = p.typ()
		d.Fields = append(d.Fields, f)
		if !p.got(COMMA) && !p.got(SEMICOLON) && p.tok != RBRACE {
			p.errorExpected(`"," or newline after field`)
			p.skipStmt()
		}
	}
	d.Rbrace = p.expect(RBRACE)
	return d
}

func (p *parser) regionDecl() *RegionDecl {
	d := &RegionDecl{Region: p.expect(REGION)}
	d.Name = p.ident()
	p.expect(COLON)
	d.Type = p.typ()
	if p.tok == IDENT && (p.lit == "ro" || p.lit == "rw") {
		d.Access = p.ident()
		d.Writable = d.Access.Name == "rw"
	} else {
		p.errorExpected("access ro or rw after the region type")
	}
	return d
}

// params parses (name: T, ...).
func (p *parser) params() []*Field {
	var list []*Field
	p.expect(LPAREN)
	for p.tok != RPAREN && p.tok != EOF {
		f := &Field{Name: p.ident()}
		p.expect(COLON)
		f.Type = p.typ()
		list = append(list, f)
		if !p.got(COMMA) {
			break
		}
	}
	p.expect(RPAREN)
	return list
}

func (p *parser) funcDecl() *FuncDecl {
	d := &FuncDecl{Fn: p.expect(FN)}
	d.Name = p.ident()
	d.Params = p.params()
	if p.got(ARROW) {
		d.Result = p.typ()
	}
	d.Body = p.block()
	return d
}

func (p *parser) handlerDecl() *HandlerDecl {
	d := &HandlerDecl{Handler: p.expect(HANDLER)}
	d.Name = p.ident()
	d.Params = p.params()
	if p.got(ARROW) {
		if p.tok == LPAREN {
			d.Results = p.params()
		} else {
			d.Results = []*Field{{Type: p.typ()}}
		}
	}
	// The reads clause may start on a line of its own, and the body after
	// it too: a newline there cannot end the declaration.
	if p.newlineBefore(IDENT, "reads") {
		p.next()
	}
	if p.tok == IDENT && p.lit == "reads" {
		d.Reads = p.readsClause()
		if p.newlineBefore(LBRACE, "") {
			p.next()
		}
	}
	d.Body = p.block()
	return d
}

// newlineBefore reports whether the current token is a newline's
// SEMICOLON followed by tok (with literal lit, if lit is not empty),
// looking one token ahead.
func (p *parser) newlineBefore(tok Token, lit string) bool {
	if p.tok != SEMICOLON || p.lit != "\n" {
		return false
	}
	saved := p.scanner
	saved.nesting = append([]byte(nil), p.scanner.nesting...)
	savedErrs := len(p.errs)
	next, _, nextLit := p.scanner.Scan()
	p.scanner = saved
	p.errs = p.errs[:savedErrs] // the token is scanned again, with its errors
	return next == tok && (lit == "" || nextLit == lit)
}

// readsClause parses reads Item, Item, ….
func (p *parser) readsClause() *ReadsClause {
	r := &ReadsClause{Reads: p.pos}
	p.next()
	for {
		r.Items = append(r.Items, p.readItem())
		if !p.got(COMMA) {
			return r
		}
	}
}

// readItem parses one region place of a reads clause: a name, then fields
// and indices, and at the end an optional [Index; Count].
func (p *parser) readItem() Expr {
	var x Expr = p.ident()
	sliced := false
	for {
		if sliced && (p.tok == PERIOD || p.tok == LBRACK) {
			p.error(p.pos, "a range [index; count] must be the last step of a reads item")
		}
		switch p.tok {
		case PERIOD:
			p.next()
			x = &SelectorExpr{X: x, Sel: p.ident()}
		case LBRACK:
			lbrack := p.pos
			p.next()
			index := p.expr()
			if p.tok != SEMICOLON {
				x = &IndexExpr{X: x, Lbrack: lbrack, Index: index, Rbrack: p.expect(RBRACK)}
				continue
			}
			p.next()
			s := &SliceExpr{X: x, Lbrack: lbrack, Index: index, Count: p.expr()}
			s.Rbrack = p.expect(RBRACK)
			x, sliced = s, true
		default:
			return x
		}
	}
}

// ---- Types ----

func (p *parser) typ() Expr {
	pos := p.pos
	switch p.tok {
	case IDENT:
		return p.ident()
	case LBRACK:
		t := &ArrayType{Lbrack: p.expect(LBRACK)}
		t.Elem = p.typ()
		p.expect(SEMICOLON)
		t.Len = p.expr()
		t.Rbrack = p.expect(RBRACK)
		return t
	case AND:
		p.next()
		t := &RefType{Amp: pos}
		t.Mut = p.got(MUT)
		t.Elem = p.typ()
		return t
	}
	p.errorExpected("type")
	return &BadExpr{From: pos, To: p.pos}
}

// ---- Statements ----

func (p *parser) block() *BlockStmt {
	b := &BlockStmt{Lbrace: p.expect(LBRACE)}
	for p.tok != RBRACE && p.tok != EOF {
		if p.got(SEMICOLON) {
			continue
		}
		switch p.tok {
		case CONST, STRUCT, REGION, FN, HANDLER:
			// A missing } ran into the next declaration.
			p.errorExpected(`"}"`)
			b.Rbrace = p.pos
			return b
		}
		b.List = append(b.List, p.stmt())
	}
	b.Rbrace = p.expect(RBRACE)
	return b
}

func (p *parser) stmt() Stmt {
	pos := p.pos
	switch p.tok {
	case LET, VAR:
		s := &LetStmt{Let: pos, Mutable: p.tok == VAR}
		p.next()
		s.Name = p.ident()
		if p.got(COLON) {
			s.Type = p.typ()
		}
		if p.got(ASSIGN) || (!s.Mutable && s.Type == nil) {
			s.Value = p.expr()
		}
		p.expectStmtEnd()
		return s
	case IF:
		return p.ifStmt()
	case FOR:
		return p.forStmt()
	case BREAK, CONTINUE:
		s := &BranchStmt{TokPos: pos, Tok: p.tok}
		p.next()
		p.expectStmtEnd()
		return s
	case RETURN:
		s := &ReturnStmt{Return: pos}
		p.next()
		if p.tok != SEMICOLON && p.tok != RBRACE && p.tok != EOF {
			s.Results = append(s.Results, p.expr())
			for p.got(COMMA) {
				s.Results = append(s.Results, p.expr())
			}
		}
		p.expectStmtEnd()
		return s
	case FAIL:
		s := &FailStmt{Fail: pos}
		p.next()
		p.expect(LPAREN)
		s.Code = p.expr()
		s.Rparen = p.expect(RPAREN)
		p.expectStmtEnd()
		return s
	case LBRACE:
		b := p.block()
		p.expectStmtEnd()
		return b
	case IDENT, INT, TRUE, FALSE, LPAREN, SUB, NOT, TILDE, MUL, AND:
		x := p.expr()
		if word, ok := foreignLoop(x, p.tok); ok {
			p.error(pos, "NAAM has no %s statement: loops are for i in 0..N { … } (constant bounds) or for i in a..b max N { … } (bounds known at run time, at most N iterations); leave one early with break", word)
			p.skipStmt()
			return &BadStmt{From: pos, To: p.pos}
		}
		if p.tok >= ADD_ASSIGN && p.tok <= SHR_ASSIGN || p.tok == ASSIGN {
			s := &AssignStmt{Lhs: x, TokPos: p.pos, Tok: p.tok}
			p.next()
			s.Rhs = p.expr()
			p.expectStmtEnd()
			return s
		}
		p.expectStmtEnd()
		return &ExprStmt{X: x}
	}
	p.errorExpected("statement")
	p.next()
	p.skipStmt()
	return &BadStmt{From: pos, To: p.pos}
}

// foreignLoop reports whether x, followed by tok, starts a loop of
// another language ("while i < n {", "while (i < n) {", "loop {"): a
// statement that is the name while, loop or do, or a call of it followed
// by a block, with more after it on the line.
func foreignLoop(x Expr, tok Token) (string, bool) {
	if c, ok := x.(*CallExpr); ok && tok == LBRACE {
		x = c.Fun
	}
	id, ok := x.(*Ident)
	if !ok || id.Name != "while" && id.Name != "loop" && id.Name != "do" {
		return "", false
	}
	switch tok {
	case SEMICOLON, RBRACE, EOF, ASSIGN:
		return "", false
	}
	if tok >= ADD_ASSIGN && tok <= SHR_ASSIGN {
		return "", false
	}
	return id.Name, true
}

func (p *parser) ifStmt() *IfStmt {
	s := &IfStmt{If: p.expect(IF)}
	s.Cond = p.headerExpr()
	s.Then = p.block()
	if p.got(ELSE) {
		switch p.tok {
		case IF:
			s.Else = p.ifStmt()
			return s
		case LBRACE:
			s.Else = p.block()
		default:
			p.errorExpected(`"if" or "{" after else`)
			s.Else = &BadStmt{From: p.pos, To: p.pos}
		}
	}
	p.expectStmtEnd()
	return s
}

func (p *parser) forStmt() *ForStmt {
	s := &ForStmt{For: p.expect(FOR)}
	s.Var = p.ident()
	if p.got(COLON) {
		s.Type = p.typ()
	}
	p.expect(IN)
	s.Low = p.headerExpr()
	p.expect(RANGE)
	s.High = p.headerExpr()
	if p.tok == IDENT && p.lit == "max" {
		p.next()
		s.Max = p.headerExpr()
	}
	s.Body = p.block()
	p.expectStmtEnd()
	return s
}

// headerExpr parses an expression in an if or for header. There is no
// expression syntax with braces, so nothing special is needed; the name
// marks where a { must start the body.
func (p *parser) headerExpr() Expr { return p.expr() }

// ---- Expressions ----

func (p *parser) expr() Expr { return p.binary(1) }

func (p *parser) binary(prec int) Expr {
	x := p.unary()
	for {
		op := p.tok
		oprec := op.Precedence()
		if oprec < prec {
			return x
		}
		pos := p.pos
		p.next()
		y := p.binary(oprec + 1)
		x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: y}
	}
}

// unary parses prefix operators, then casts: -x as u32 is (-x) as u32.
func (p *parser) unary() Expr {
	x := p.prefix()
	for p.tok == AS {
		pos := p.pos
		p.next()
		x = &CastExpr{X: x, As: pos, Type: p.typ()}
	}
	return x
}

func (p *parser) prefix() Expr {
	switch p.tok {
	case SUB, NOT, TILDE, AND, MUL:
		pos, op := p.pos, p.tok
		p.next()
		return &UnaryExpr{OpPos: pos, Op: op, X: p.prefix()}
	}
	return p.postfix()
}

func (p *parser) postfix() Expr {
	x := p.operand()
	for {
		switch p.tok {
		case PERIOD:
			p.next()
			x = &SelectorExpr{X: x, Sel: p.ident()}
		case LBRACK:
			ix := &IndexExpr{X: x, Lbrack: p.pos}
			p.next()
			ix.Index = p.expr()
			ix.Rbrack = p.expect(RBRACK)
			x = ix
		case LPAREN:
			id, ok := x.(*Ident)
			if !ok {
				p.error(p.pos, "only a named fn or builtin can be called")
				id = &Ident{NamePos: x.Pos(), Name: "_"}
			}
			call := &CallExpr{Fun: id, Lparen: p.pos}
			p.next()
			for p.tok != RPAREN && p.tok != EOF {
				call.Args = append(call.Args, p.expr())
				if !p.got(COMMA) {
					break
				}
			}
			call.Rparen = p.expect(RPAREN)
			x = call
		default:
			return x
		}
	}
}

func (p *parser) operand() Expr {
	pos := p.pos
	switch p.tok {
	case IDENT:
		return p.ident()
	case INT:
		x := &IntLit{ValuePos: pos, Lit: p.lit}
		p.next()
		return x
	case TRUE, FALSE:
		x := &BoolLit{ValuePos: pos, Value: p.tok == TRUE}
		p.next()
		return x
	case LPAREN:
		p.next()
		x := &ParenExpr{Lparen: pos, X: p.expr()}
		x.Rparen = p.expect(RPAREN)
		return x
	}
	p.errorExpected("expression")
	// Leave statement ends and closing brackets for the caller.
	switch p.tok {
	case SEMICOLON, RBRACE, RPAREN, RBRACK, EOF, LBRACE,
		LET, VAR, IF, FOR, RETURN, BREAK, CONTINUE, FAIL, CONST, STRUCT, REGION, FN, HANDLER:
	default:
		p.next()
	}
	return &BadExpr{From: pos, To: p.pos}
}
