// Command naamc is NAAM's compiler and bytecode tool. For handlers it
// compiles sources into verified objects (build), checks sources with the
// front end alone (check), verifies objects (verify), lists them with their
// source lines and layouts (disasm) and runs one handler in the interpreter
// under the handler ABI (run). For raw eBPF it assembles and disassembles
// the bpf_conformance text syntax (asm, disasm), runs raw programs (vm) and
// verifies them (verify --raw).
//
// naamc is where the layers meet: it calls lang, compiler, verifier and vm
// but owns none of their rules. It never runs an object the verifier has
// not accepted (run verifies first), and build writes nothing the verifier
// rejected unless told --no-verify.
//
// build and check take -D NAME=VALUE (repeatable) to override a constant
// of the source (lang.Config.Constants).
//
// Exit codes: 0 success, 1 rejected input (compile errors, a -D value of
// the wrong kind or range, a verifier rejection, a handler that failed or
// faulted), 2 naamc itself failed or was called wrongly (a -D naming no
// constant of the source, or not NAME=VALUE with a literal value).
//
// main is os.Exit(doMain(...)) so that tests drive the whole CLI in-process.
package main
