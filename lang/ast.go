package lang

// Node is any node of the syntax tree. Pos is the first byte of the node,
// End the position just after its last byte.
type Node interface {
	Pos() Pos
	End() Pos
}

// Expr is an expression or a type expression (types are written in
// expression positions: [u8; 16], &mut Bucket, u32).
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

// Decl is a top-level declaration.
type Decl interface {
	Node
	declNode()
}

// ---- Expressions ----

type (
	// BadExpr stands for an expression that failed to parse.
	BadExpr struct{ From, To Pos }

	// Ident is a name.
	Ident struct {
		NamePos Pos
		Name    string
	}

	// IntLit is an integer literal as written (0xff, 1_000).
	IntLit struct {
		ValuePos Pos
		Lit      string
	}

	// BoolLit is true or false.
	BoolLit struct {
		ValuePos Pos
		Value    bool
	}

	// ParenExpr is (X).
	ParenExpr struct {
		Lparen Pos
		X      Expr
		Rparen Pos
	}

	// UnaryExpr is Op X with Op one of - ~ ! & *.
	UnaryExpr struct {
		OpPos Pos
		Op    Token
		X     Expr
	}

	// BinaryExpr is X Op Y.
	BinaryExpr struct {
		X     Expr
		OpPos Pos
		Op    Token
		Y     Expr
	}

	// CastExpr is X as Type.
	CastExpr struct {
		X    Expr
		As   Pos
		Type Expr
	}

	// CallExpr is Fun(Args...). Fun is always an identifier: a fn or a builtin.
	CallExpr struct {
		Fun    *Ident
		Lparen Pos
		Args   []Expr
		Rparen Pos
	}

	// IndexExpr is X[Index].
	IndexExpr struct {
		X      Expr
		Lbrack Pos
		Index  Expr
		Rbrack Pos
	}

	// SelectorExpr is X.Sel, a struct field.
	SelectorExpr struct {
		X   Expr
		Sel *Ident
	}

	// ArrayType is [Elem; Len].
	ArrayType struct {
		Lbrack Pos
		Elem   Expr
		Len    Expr
		Rbrack Pos
	}

	// RefType is &Elem or &mut Elem.
	RefType struct {
		Amp  Pos
		Mut  bool
		Elem Expr
	}

	// SliceExpr is X[Index; Count]: Count elements of the array X from
	// element Index. It appears only as the last step of a reads clause's
	// item.
	SliceExpr struct {
		X      Expr
		Lbrack Pos
		Index  Expr
		Count  Expr
		Rbrack Pos
	}
)

func (x *BadExpr) Pos() Pos      { return x.From }
func (x *Ident) Pos() Pos        { return x.NamePos }
func (x *IntLit) Pos() Pos       { return x.ValuePos }
func (x *BoolLit) Pos() Pos      { return x.ValuePos }
func (x *ParenExpr) Pos() Pos    { return x.Lparen }
func (x *UnaryExpr) Pos() Pos    { return x.OpPos }
func (x *BinaryExpr) Pos() Pos   { return x.X.Pos() }
func (x *CastExpr) Pos() Pos     { return x.X.Pos() }
func (x *CallExpr) Pos() Pos     { return x.Fun.Pos() }
func (x *IndexExpr) Pos() Pos    { return x.X.Pos() }
func (x *SelectorExpr) Pos() Pos { return x.X.Pos() }
func (x *ArrayType) Pos() Pos    { return x.Lbrack }
func (x *RefType) Pos() Pos      { return x.Amp }
func (x *SliceExpr) Pos() Pos    { return x.X.Pos() }

func (x *BadExpr) End() Pos { return x.To }
func (x *Ident) End() Pos   { return x.NamePos.add(len(x.Name)) }
func (x *IntLit) End() Pos  { return x.ValuePos.add(len(x.Lit)) }
func (x *BoolLit) End() Pos {
	if x.Value {
		return x.ValuePos.add(4)
	}
	return x.ValuePos.add(5)
}
func (x *ParenExpr) End() Pos    { return x.Rparen.add(1) }
func (x *UnaryExpr) End() Pos    { return x.X.End() }
func (x *BinaryExpr) End() Pos   { return x.Y.End() }
func (x *CastExpr) End() Pos     { return x.Type.End() }
func (x *CallExpr) End() Pos     { return x.Rparen.add(1) }
func (x *IndexExpr) End() Pos    { return x.Rbrack.add(1) }
func (x *SelectorExpr) End() Pos { return x.Sel.End() }
func (x *ArrayType) End() Pos    { return x.Rbrack.add(1) }
func (x *RefType) End() Pos      { return x.Elem.End() }
func (x *SliceExpr) End() Pos    { return x.Rbrack.add(1) }

func (*BadExpr) exprNode()      {}
func (*Ident) exprNode()        {}
func (*IntLit) exprNode()       {}
func (*BoolLit) exprNode()      {}
func (*ParenExpr) exprNode()    {}
func (*UnaryExpr) exprNode()    {}
func (*BinaryExpr) exprNode()   {}
func (*CastExpr) exprNode()     {}
func (*CallExpr) exprNode()     {}
func (*IndexExpr) exprNode()    {}
func (*SelectorExpr) exprNode() {}
func (*ArrayType) exprNode()    {}
func (*RefType) exprNode()      {}
func (*SliceExpr) exprNode()    {}

// ---- Statements ----

type (
	// BadStmt stands for a statement that failed to parse.
	BadStmt struct{ From, To Pos }

	// BlockStmt is { List }.
	BlockStmt struct {
		Lbrace Pos
		List   []Stmt
		Rbrace Pos
	}

	// LetStmt is let Name[: Type] = Value, or var Name[: Type] [= Value]
	// (Mutable). Type or Value may be nil, not both.
	LetStmt struct {
		Let     Pos
		Mutable bool
		Name    *Ident
		Type    Expr
		Value   Expr
	}

	// AssignStmt is Lhs Tok Rhs with Tok = or a compound operator (+= …).
	AssignStmt struct {
		Lhs    Expr
		TokPos Pos
		Tok    Token
		Rhs    Expr
	}

	// ExprStmt is a call whose result, if any, is dropped.
	ExprStmt struct{ X Expr }

	// IfStmt is if Cond Then [else Else]; Else is a *BlockStmt or an *IfStmt.
	IfStmt struct {
		If   Pos
		Cond Expr
		Then *BlockStmt
		Else Stmt
	}

	// ForStmt is for Var[: Type] in Low..High [max Max] Body.
	ForStmt struct {
		For  Pos
		Var  *Ident
		Type Expr
		Low  Expr
		High Expr
		Max  Expr
		Body *BlockStmt
	}

	// BranchStmt is break or continue.
	BranchStmt struct {
		TokPos Pos
		Tok    Token
	}

	// ReturnStmt is return [Results, ...].
	ReturnStmt struct {
		Return  Pos
		Results []Expr
	}

	// FailStmt is fail(Code).
	FailStmt struct {
		Fail   Pos
		Code   Expr
		Rparen Pos
	}
)

func (s *BadStmt) Pos() Pos    { return s.From }
func (s *BlockStmt) Pos() Pos  { return s.Lbrace }
func (s *LetStmt) Pos() Pos    { return s.Let }
func (s *AssignStmt) Pos() Pos { return s.Lhs.Pos() }
func (s *ExprStmt) Pos() Pos   { return s.X.Pos() }
func (s *IfStmt) Pos() Pos     { return s.If }
func (s *ForStmt) Pos() Pos    { return s.For }
func (s *BranchStmt) Pos() Pos { return s.TokPos }
func (s *ReturnStmt) Pos() Pos { return s.Return }
func (s *FailStmt) Pos() Pos   { return s.Fail }

func (s *BadStmt) End() Pos   { return s.To }
func (s *BlockStmt) End() Pos { return s.Rbrace.add(1) }
func (s *LetStmt) End() Pos {
	if s.Value != nil {
		return s.Value.End()
	}
	if s.Type != nil {
		return s.Type.End()
	}
	return s.Name.End()
}
func (s *AssignStmt) End() Pos { return s.Rhs.End() }
func (s *ExprStmt) End() Pos   { return s.X.End() }
func (s *IfStmt) End() Pos {
	if s.Else != nil {
		return s.Else.End()
	}
	return s.Then.End()
}
func (s *ForStmt) End() Pos    { return s.Body.End() }
func (s *BranchStmt) End() Pos { return s.TokPos.add(len(s.Tok.String())) }
func (s *ReturnStmt) End() Pos {
	if n := len(s.Results); n > 0 {
		return s.Results[n-1].End()
	}
	return s.Return.add(len("return"))
}
func (s *FailStmt) End() Pos { return s.Rparen.add(1) }

func (*BadStmt) stmtNode()    {}
func (*BlockStmt) stmtNode()  {}
func (*LetStmt) stmtNode()    {}
func (*AssignStmt) stmtNode() {}
func (*ExprStmt) stmtNode()   {}
func (*IfStmt) stmtNode()     {}
func (*ForStmt) stmtNode()    {}
func (*BranchStmt) stmtNode() {}
func (*ReturnStmt) stmtNode() {}
func (*FailStmt) stmtNode()   {}

// ---- Declarations ----

type (
	// BadDecl stands for a declaration that failed to parse.
	BadDecl struct{ From, To Pos }

	// Field is Name: Type: a struct field, a parameter or a named result.
	// Name is nil for the single unnamed result of -> T.
	Field struct {
		Name *Ident
		Type Expr
	}

	// ConstDecl is const Name[: Type] = Value.
	ConstDecl struct {
		Const Pos
		Name  *Ident
		Type  Expr
		Value Expr
	}

	// StructDecl is struct Name { Fields }.
	StructDecl struct {
		Struct Pos
		Name   *Ident
		Fields []*Field
		Rbrace Pos
	}

	// RegionDecl is region Name: Type ro|rw.
	RegionDecl struct {
		Region   Pos
		Name     *Ident
		Type     Expr
		Access   *Ident // ro or rw
		Writable bool
	}

	// FuncDecl is fn Name(Params) [-> Result] Body.
	FuncDecl struct {
		Fn     Pos
		Name   *Ident
		Params []*Field
		Result Expr
		Body   *BlockStmt
	}

	// HandlerDecl is handler Name(Params) [-> T | -> (name: T, ...)]
	// [reads …] Body.
	HandlerDecl struct {
		Handler Pos
		Name    *Ident
		Params  []*Field
		Results []*Field
		Reads   *ReadsClause // nil: the handler declares no data access
		Body    *BlockStmt
	}

	// ReadsClause is reads Item, Item, …: the region data a handler
	// declares it reads, computed from the request. Each item is a region
	// place (an *Ident naming the region, *SelectorExpr and *IndexExpr
	// steps into it), optionally ending in a *SliceExpr.
	ReadsClause struct {
		Reads Pos
		Items []Expr
	}
)

func (r *ReadsClause) Pos() Pos { return r.Reads }
func (r *ReadsClause) End() Pos {
	if n := len(r.Items); n > 0 {
		return r.Items[n-1].End()
	}
	return r.Reads.add(len("reads"))
}

func (f *Field) Pos() Pos {
	if f.Name != nil {
		return f.Name.Pos()
	}
	return f.Type.Pos()
}
func (f *Field) End() Pos { return f.Type.End() }

func (d *BadDecl) Pos() Pos     { return d.From }
func (d *ConstDecl) Pos() Pos   { return d.Const }
func (d *StructDecl) Pos() Pos  { return d.Struct }
func (d *RegionDecl) Pos() Pos  { return d.Region }
func (d *FuncDecl) Pos() Pos    { return d.Fn }
func (d *HandlerDecl) Pos() Pos { return d.Handler }

func (d *BadDecl) End() Pos    { return d.To }
func (d *ConstDecl) End() Pos  { return d.Value.End() }
func (d *StructDecl) End() Pos { return d.Rbrace.add(1) }
func (d *RegionDecl) End() Pos {
	if d.Access != nil {
		return d.Access.End()
	}
	return d.Type.End()
}
func (d *FuncDecl) End() Pos    { return d.Body.End() }
func (d *HandlerDecl) End() Pos { return d.Body.End() }

func (*BadDecl) declNode()     {}
func (*ConstDecl) declNode()   {}
func (*StructDecl) declNode()  {}
func (*RegionDecl) declNode()  {}
func (*FuncDecl) declNode()    {}
func (*HandlerDecl) declNode() {}

// File is one parsed source file.
type File struct {
	Name  string
	Decls []Decl
	EOF   Pos
}

func (f *File) Pos() Pos { return Pos{File: f.Name, Line: 1, Col: 1} }
func (f *File) End() Pos { return f.EOF }
