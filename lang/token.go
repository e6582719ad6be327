package lang

import (
	"fmt"
	"strings"
)

// Token is a lexical token kind.
type Token int

const (
	ILLEGAL Token = iota
	EOF
	IDENT // count
	INT   // 1024, 0xff, 0b1010, 1_000

	// Operators and punctuation.
	ADD   // +
	SUB   // -
	MUL   // *
	QUO   // /
	REM   // %
	AND   // &
	OR    // |
	XOR   // ^
	SHL   // <<
	SHR   // >>
	TILDE // ~

	ADD_ASSIGN // +=
	SUB_ASSIGN // -=
	MUL_ASSIGN // *=
	QUO_ASSIGN // /=
	REM_ASSIGN // %=
	AND_ASSIGN // &=
	OR_ASSIGN  // |=
	XOR_ASSIGN // ^=
	SHL_ASSIGN // <<=
	SHR_ASSIGN // >>=

	LAND // &&
	LOR  // ||
	NOT  // !

	EQL // ==
	NEQ // !=
	LSS // <
	LEQ // <=
	GTR // >
	GEQ // >=

	ASSIGN    // =
	ARROW     // ->
	RANGE     // ..
	LPAREN    // (
	RPAREN    // )
	LBRACK    // [
	RBRACK    // ]
	LBRACE    // {
	RBRACE    // }
	COMMA     // ,
	SEMICOLON // ; or an inserted newline
	COLON     // :
	PERIOD    // .

	keywordBeg
	AS
	BREAK
	CONST
	CONTINUE
	ELSE
	FAIL
	FALSE
	FN
	FOR
	HANDLER
	IF
	IN
	LET
	MUT
	REGION
	RETURN
	STRUCT
	TRUE
	VAR
	keywordEnd
)

var tokens = [...]string{
	ILLEGAL: "ILLEGAL", EOF: "EOF", IDENT: "IDENT", INT: "INT",
	ADD: "+", SUB: "-", MUL: "*", QUO: "/", REM: "%", AND: "&", OR: "|", XOR: "^",
	SHL: "<<", SHR: ">>", TILDE: "~",
	ADD_ASSIGN: "+=", SUB_ASSIGN: "-=", MUL_ASSIGN: "*=", QUO_ASSIGN: "/=", REM_ASSIGN: "%=",
	AND_ASSIGN: "&=", OR_ASSIGN: "|=", XOR_ASSIGN: "^=", SHL_ASSIGN: "<<=", SHR_ASSIGN: ">>=",
	LAND: "&&", LOR: "||", NOT: "!",
	EQL: "==", NEQ: "!=", LSS: "<", LEQ: "<=", GTR: ">", GEQ: ">=",
	ASSIGN: "=", ARROW: "->", RANGE: "..",
	LPAREN: "(", RPAREN: ")", LBRACK: "[", RBRACK: "]", LBRACE: "{", RBRACE: "}",
	COMMA: ",", SEMICOLON: ";", COLON: ":", PERIOD: ".",
	AS: "as", BREAK: "break", CONST: "const", CONTINUE: "continue", ELSE: "else",
	FAIL: "fail", FALSE: "false", FN: "fn", FOR: "for", HANDLER: "handler", IF: "if",
	IN: "in", LET: "let", MUT: "mut", REGION: "region", RETURN: "return",
	STRUCT: "struct", TRUE: "true", VAR: "var",
}

func (t Token) String() string {
	if t >= 0 && int(t) < len(tokens) && tokens[t] != "" {
		return tokens[t]
	}
	return fmt.Sprintf("token(%d)", int(t))
}

var keywords = func() map[string]Token {
	m := make(map[string]Token)
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		m[tokens[t]] = t
	}
	return m
}()

// IsKeyword reports whether name is a reserved word. The words max, ro and
// rw are contextual: they are identifiers everywhere else.
func IsKeyword(name string) bool { _, ok := keywords[name]; return ok }

// Binary operator precedence, Go's: 5 * / % << >> &, 4 + - | ^,
// 3 comparisons, 2 &&, 1 ||. (a & b == c) is ((a & b) == c), unlike C.
func (t Token) Precedence() int {
	switch t {
	case LOR:
		return 1
	case LAND:
		return 2
	case EQL, NEQ, LSS, LEQ, GTR, GEQ:
		return 3
	case ADD, SUB, OR, XOR:
		return 4
	case MUL, QUO, REM, SHL, SHR, AND:
		return 5
	}
	return 0
}

// assignOp maps a compound assignment to its binary operator (+= to +).
func (t Token) assignOp() Token {
	if t >= ADD_ASSIGN && t <= SHR_ASSIGN {
		return ADD + (t - ADD_ASSIGN)
	}
	return ILLEGAL
}

// Pos is a source position: file name, 1-based line and 1-based byte
// column. The zero Pos is "no position". Positions are values, so AST
// nodes carry them directly and an error needs nothing else to print.
type Pos struct {
	File      string
	Line, Col int
}

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as file:line:col (or line:col without a file name).
func (p Pos) String() string {
	if !p.IsValid() {
		return "-"
	}
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Before orders positions in one file.
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// add returns the position n bytes further on the same line.
func (p Pos) add(n int) Pos {
	if !p.IsValid() {
		return p
	}
	p.Col += n
	return p
}

// FileSet holds the sources of parsed files so that messages can quote
// the line an error points at.
type FileSet struct {
	files map[string]string
}

// NewFileSet returns an empty FileSet.
func NewFileSet() *FileSet { return &FileSet{files: make(map[string]string)} }

// AddFile records the source of file name.
func (s *FileSet) AddFile(name string, src []byte) { s.files[name] = string(src) }

// Line returns line n (1-based) of file name without its newline, and
// whether it exists.
func (s *FileSet) Line(name string, n int) (string, bool) {
	if s == nil {
		return "", false
	}
	src, ok := s.files[name]
	if !ok || n < 1 {
		return "", false
	}
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return "", false
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimSuffix(src, "\r"), true
}
