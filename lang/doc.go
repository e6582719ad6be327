// Package lang is the front end of the NAAM handler language
// (spec/language.md): scanner, parser, syntax tree and type checker.
//
// Pipeline: source → Scanner (tokens, with Go-style newline statement
// ends) → ParseFile (recursive descent; recovers at statement and
// declaration boundaries, one error per line, gives up after 10) → *File →
// Check → *Info. CheckSource runs both. Config.Check and
// Config.CheckSource do the same with constant overrides
// (Config.Constants: naamc build -D), each checked as the declaration it
// replaces; ParseConstant reads an override's value from text. The
// compiler (package compiler) lowers a checked *File using the *Info; the
// verifier never sees this package.
//
// What it owns: the language's syntax and its static rules, including the
// ones that exist only so that every accepted program compiles to code the
// verifier accepts — no recursion, at most 8 frames, loops bounded by a
// constant or a constant cap, references only in let bindings and fn
// parameters, atomics only on aligned region words, locals within the
// 512-byte stack.
//
// What it must never do: change the syntax tree while checking (results
// go to the Info side tables: Types, Defs, Uses), panic on any input (the
// fuzz targets FuzzScanner and FuzzParse hold it to that), or import
// anything of NAAM's (it is a leaf; the ABI limits it enforces are
// restated as constants in builtins.go).
//
// Errors are *Error values {Pos, Msg} collected in an ErrorList, sorted by
// position; Print formats them for a terminal with the source line and a
// caret. Positions are Pos{File, Line, Col} values (1-based, Col in
// bytes); a FileSet keeps the sources so messages can quote them.
//
// Tests: testdata/ok holds programs that must check clean; testdata/errors
// holds programs whose expected errors are written on the offending line as
// // ERROR "regexp" comments; testdata/ast holds golden syntax-tree
// printouts (go test -run TestASTGolden -update rewrites them).
package lang
