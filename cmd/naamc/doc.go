// Command naamc is NAAM's compiler and bytecode tool: it assembles and
// disassembles eBPF in the bpf_conformance text syntax and runs raw programs
// in the interpreter. Compiling and verifying handlers come with the
// language and verifier.
//
// main is os.Exit(doMain(...)) so that tests drive the whole CLI in-process.
package main
