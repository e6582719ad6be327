// Command naamc is NAAM's compiler and bytecode tool: it assembles and
// disassembles eBPF in the bpf_conformance text syntax, runs raw programs in
// the interpreter, verifies raw programs and objects, and checks handler
// sources with the language's front end. Compiling handlers (build, run)
// comes with the compiler.
//
// main is os.Exit(doMain(...)) so that tests drive the whole CLI in-process.
package main
