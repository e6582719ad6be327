// Package naameval is a tree-walking evaluator of checked handler programs
// (package lang): the reference semantics of spec/language.md, written
// independently of the compiler so that the two can be run side by side
// (tests/compile_diff_test.go) and any disagreement points at a bug in one
// of them.
//
// Pipeline position: lang.CheckSource gives a *lang.File and *lang.Info;
// Run evaluates one handler of them for one request. Nothing here is
// compiled, verified or run by the VM.
//
// Memory model. Every place is a range of bytes in one of: the request
// (handler arguments, read-only), the reply buffer (named results), a
// region (the caller's slices, written in place), or the byte buffer of a
// local (let, var, loop variable, scalar fn parameter). Aggregates live in
// those buffers with the language's layout, little-endian, so padding,
// struct assignment and aliasing through references behave exactly as in
// compiled code; a reference is a (buffer, offset, type) triple.
//
// Evaluation order is spec/language.md's (Compilation): operands left to
// right; for an assignment the left side's place (with its index checks)
// before the right side's value; the values of return e1, e2, … all
// before any named result is written. A request shorter than the
// arguments' layout size fails before a reply buffer shorter than the
// results' size. Where the spec is silent: x op= e reads x before it
// evaluates e.
//
// What it owns: the meaning of every construct, including the run-time
// failures (bytecode.Fail*). What it must never do: accept an unchecked file
// (it trusts Info's types and constants), call the compiler or the VM, or
// let a Go panic escape Run: failures are Outcomes, internal trouble an
// error.
package naameval
