package lang

import (
	"go/constant"
	gotoken "go/token"
	"math/big"
	"strings"
)

// Constant arithmetic uses go/constant (exact, arbitrary precision) with
// go/token's operator names.
const (
	tokenADD   = gotoken.ADD
	tokenSUB   = gotoken.SUB
	tokenMUL   = gotoken.MUL
	tokenQUO   = gotoken.QUO_ASSIGN // integer division in go/constant
	tokenREM   = gotoken.REM
	tokenAND   = gotoken.AND
	tokenOR    = gotoken.OR
	tokenXOR   = gotoken.XOR
	tokenSHL   = gotoken.SHL
	tokenSHR   = gotoken.SHR
	tokenEQL   = gotoken.EQL
	tokenNEQ   = gotoken.NEQ
	tokenLSS   = gotoken.LSS
	tokenLEQ   = gotoken.LEQ
	tokenGTR   = gotoken.GTR
	tokenGEQ   = gotoken.GEQ
	tokenNOT   = gotoken.NOT
	gotokenXOR = gotoken.XOR
)

var goOps = map[Token]gotoken.Token{
	ADD: tokenADD, SUB: tokenSUB, MUL: tokenMUL, QUO: tokenQUO, REM: tokenREM,
	AND: tokenAND, OR: tokenOR, XOR: tokenXOR, SHL: tokenSHL, SHR: tokenSHR,
	EQL: tokenEQL, NEQ: tokenNEQ, LSS: tokenLSS, LEQ: tokenLEQ, GTR: tokenGTR, GEQ: tokenGEQ,
	LAND: gotoken.LAND, LOR: gotoken.LOR,
}

// intLitValue returns the value of an integer literal, or nil if it is
// malformed (the scanner has reported it). Unlike Go, a leading 0 does not
// mean octal: 017 is seventeen.
func intLitValue(lit string) constant.Value {
	s := strings.ReplaceAll(lit, "_", "")
	base := 10
	if len(s) > 1 && s[0] == '0' {
		switch s[1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
		if base != 10 {
			s = s[2:]
		}
	}
	if s == "" {
		return nil
	}
	n, ok := new(big.Int).SetString(s, base)
	if !ok {
		return nil
	}
	return constant.Make(n)
}

// valueString formats a constant for messages.
func valueString(v constant.Value) string {
	if v == nil {
		return "?"
	}
	return v.ExactString()
}
