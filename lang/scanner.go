package lang

import "fmt"

// Scanner turns source bytes into tokens. Newlines end statements: after a
// line's last token, if that token can end a statement (an identifier, a
// literal, true/false, return/break/continue, or a closing bracket), the
// scanner emits a SEMICOLON whose literal is "\n" — as Go does. Inside
// parentheses and square brackets newlines are plain white space, so long
// argument lists may wrap.
type Scanner struct {
	file string
	src  []byte
	errh func(pos Pos, msg string)

	off       int // offset of the next unread byte
	line, col int // position of src[off]

	insertSemi bool
	nesting    []byte // open brackets: '(', '[' or '{'
}

// Init prepares s to scan src. Errors are reported to errh (if not nil).
func (s *Scanner) Init(file string, src []byte, errh func(pos Pos, msg string)) {
	*s = Scanner{file: file, src: src, errh: errh, line: 1, col: 1}
}

func (s *Scanner) pos() Pos { return Pos{File: s.file, Line: s.line, Col: s.col} }

func (s *Scanner) peek(k int) byte {
	if s.off+k < len(s.src) {
		return s.src[s.off+k]
	}
	return 0
}

func (s *Scanner) next() {
	if s.off >= len(s.src) {
		return
	}
	if s.src[s.off] == '\n' {
		s.line++
		s.col = 1
	} else {
		s.col++
	}
	s.off++
}

func (s *Scanner) error(p Pos, format string, args ...any) {
	if s.errh != nil {
		s.errh(p, fmt.Sprintf(format, args...))
	}
}

// newlineEndsStmt reports whether a newline at this point ends a statement.
func (s *Scanner) newlineEndsStmt() bool {
	if !s.insertSemi {
		return false
	}
	return len(s.nesting) == 0 || s.nesting[len(s.nesting)-1] == '{'
}

// Scan returns the next token, its position and its literal text (for
// identifiers, numbers and inserted semicolons).
func (s *Scanner) Scan() (tok Token, pos Pos, lit string) {
	for {
		for s.off < len(s.src) {
			c := s.src[s.off]
			if c == '\n' && s.newlineEndsStmt() {
				break
			}
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				s.next()
				continue
			}
			break
		}
		if s.peek(0) == '/' && s.peek(1) == '/' {
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.next()
			}
			continue
		}
		break
	}
	pos = s.pos()
	if s.off >= len(s.src) {
		if s.insertSemi {
			s.insertSemi = false
			return SEMICOLON, pos, "\n"
		}
		return EOF, pos, ""
	}
	c := s.src[s.off]
	insert := false
	switch {
	case c == '\n':
		s.next()
		s.insertSemi = false
		return SEMICOLON, pos, "\n"
	case isLetter(c):
		start := s.off
		for s.off < len(s.src) && (isLetter(s.src[s.off]) || isDigit(s.src[s.off])) {
			s.next()
		}
		lit = string(s.src[start:s.off])
		tok = IDENT
		if kw, ok := keywords[lit]; ok {
			tok = kw
		}
		switch tok {
		case IDENT, TRUE, FALSE, RETURN, BREAK, CONTINUE:
			insert = true
		}
	case isDigit(c):
		tok, lit = INT, s.number(pos)
		insert = true
	default:
		s.next()
		switch c {
		case '+':
			tok = s.choose('=', ADD_ASSIGN, ADD)
		case '-':
			if s.peek(0) == '>' {
				s.next()
				tok = ARROW
			} else {
				tok = s.choose('=', SUB_ASSIGN, SUB)
			}
		case '*':
			tok = s.choose('=', MUL_ASSIGN, MUL)
		case '/':
			tok = s.choose('=', QUO_ASSIGN, QUO)
		case '%':
			tok = s.choose('=', REM_ASSIGN, REM)
		case '^':
			tok = s.choose('=', XOR_ASSIGN, XOR)
		case '~':
			tok = TILDE
		case '&':
			if s.peek(0) == '&' {
				s.next()
				tok = LAND
			} else {
				tok = s.choose('=', AND_ASSIGN, AND)
			}
		case '|':
			if s.peek(0) == '|' {
				s.next()
				tok = LOR
			} else {
				tok = s.choose('=', OR_ASSIGN, OR)
			}
		case '<':
			if s.peek(0) == '<' {
				s.next()
				tok = s.choose('=', SHL_ASSIGN, SHL)
			} else {
				tok = s.choose('=', LEQ, LSS)
			}
		case '>':
			if s.peek(0) == '>' {
				s.next()
				tok = s.choose('=', SHR_ASSIGN, SHR)
			} else {
				tok = s.choose('=', GEQ, GTR)
			}
		case '=':
			tok = s.choose('=', EQL, ASSIGN)
		case '!':
			tok = s.choose('=', NEQ, NOT)
		case '.':
			if s.peek(0) == '.' {
				s.next()
				tok = RANGE
			} else {
				tok = PERIOD
			}
		case ',':
			tok = COMMA
		case ';':
			tok, lit = SEMICOLON, ";"
		case ':':
			tok = COLON
		case '(', '[', '{':
			s.nesting = append(s.nesting, c)
			tok = map[byte]Token{'(': LPAREN, '[': LBRACK, '{': LBRACE}[c]
		case ')', ']', '}':
			if n := len(s.nesting); n > 0 {
				s.nesting = s.nesting[:n-1]
			}
			tok = map[byte]Token{')': RPAREN, ']': RBRACK, '}': RBRACE}[c]
			insert = true
		default:
			tok, lit = ILLEGAL, string(rune(c))
			if c >= 0x80 || c < 0x20 {
				lit = fmt.Sprintf("%#02x", c)
			}
			s.error(pos, "unexpected character %q in source", lit)
			insert = s.insertSemi
		}
	}
	s.insertSemi = insert
	return tok, pos, lit
}

func (s *Scanner) choose(next byte, yes, no Token) Token {
	if s.peek(0) == next {
		s.next()
		return yes
	}
	return no
}

// number scans an integer literal: decimal, 0x hex, 0o octal or 0b binary,
// with optional _ between digits. Its value is computed by the checker.
func (s *Scanner) number(pos Pos) string {
	start := s.off
	base := 10
	if s.peek(0) == '0' {
		switch s.peek(1) | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
		if base != 10 {
			s.next()
			s.next()
		}
	}
	digits := 0
	bad := false
	for s.off < len(s.src) {
		c := s.src[s.off]
		if c == '_' {
			s.next()
			continue
		}
		d := digitVal(c)
		if d >= 16 && !isLetter(c) {
			break
		}
		if d >= base {
			bad = true
		}
		digits++
		s.next()
	}
	lit := string(s.src[start:s.off])
	switch {
	case digits == 0:
		s.error(pos, "number %s has no digits", lit)
	case bad:
		s.error(pos, "invalid digit in base-%d number %s", base, lit)
	}
	return lit
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 16
}
