package bytecode

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// tokenKind classifies the tokens of one line of assembly.
type tokenKind uint8

const (
	tokEOL    tokenKind = iota // end of line (or a # comment)
	tokIdent                   // mnemonic, label or keyword: [A-Za-z_.][A-Za-z0-9_.]*
	tokReg                     // % followed by identifier characters: %r1
	tokNumber                  // unsigned literal: 42, 0x2a (signs are separate tokens)
	tokPunct                   // one of , [ ] + - :
)

type token struct {
	kind tokenKind
	text string
	col  int // 1-based byte column
}

// describe names the token for "expected X, found Y" messages.
func (t token) describe() string {
	if t.kind == tokEOL {
		return "end of line"
	}
	return strconv.Quote(t.text)
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.'
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// scanLine splits one line into tokens, ending with a tokEOL. A character
// that starts no token is reported with its column.
func scanLine(line string) ([]token, *SyntaxError) {
	var toks []token
	i := 0
	for i < len(line) {
		c := line[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			i++
			continue
		case c == '#':
			i = len(line)
			continue
		case isIdentStart(c):
			for i < len(line) && isIdentChar(line[i]) {
				i++
			}
			toks = append(toks, token{tokIdent, line[start:i], start + 1})
		case c == '%':
			i++
			for i < len(line) && isIdentChar(line[i]) {
				i++
			}
			toks = append(toks, token{tokReg, line[start:i], start + 1})
		case c >= '0' && c <= '9':
			for i < len(line) && isIdentChar(line[i]) {
				i++
			}
			toks = append(toks, token{tokNumber, line[start:i], start + 1})
		case c == ',' || c == '[' || c == ']' || c == '+' || c == '-' || c == ':':
			i++
			toks = append(toks, token{tokPunct, line[start:i], start + 1})
		default:
			r, _ := utf8.DecodeRuneInString(line[start:])
			return nil, &SyntaxError{Col: start + 1, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
	}
	return append(toks, token{kind: tokEOL, col: len(line) + 1}), nil
}

// parseNumber reads an unsigned literal: decimal, or hex with a 0x prefix.
// A leading 0 does not mean octal (the conformance suite writes 0x08 and 010
// means ten, as in its own assembler).
func parseNumber(s string) (uint64, error) {
	base, digits := 10, s
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base, digits = 16, s[2:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] == '_' { // ParseUint would accept it only with base 0
			return 0, fmt.Errorf("invalid number %q", s)
		}
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("number %s is out of range for 64 bits", s)
		}
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return v, nil
}
