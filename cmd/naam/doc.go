// Command naam is NAAM's runtime CLI.
//
//	naam node   run a node (regions, programs, membership, metrics) until interrupted
//	naam call   send one active message and print the decoded reply
//	naam stats  print a node's counters
//	naam demo   run the benchmark programs in the interpreter beside the kernel's JIT
//
// Every command has --help with examples.
package main
