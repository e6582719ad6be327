// Command naam is NAAM's runtime CLI.
//
//	naam node       run a node (regions, programs, membership, metrics, health) until interrupted
//	naam install    compile or read a program and install it on a running node
//	naam uninstall  remove a program
//	naam programs   list a node's programs
//	naam region     create, load, dump, list and remove a node's regions
//	naam read, write, cas, faa
//	                the verbs on a region
//	naam call       send one active message and print the decoded reply
//	naam stats      print a node's counters
//	naam demo       three nodes: active messages against RDMA-style reads, then the VM engines
//	naam bench      the YCSB and pointer-chase workloads by mode
//
// The commands that talk to a node reach it over the control plane and the
// verbs as the tenant; they print text or, with -o json, one JSON
// document, and exit with the status table of internal/cli (spec/cli.md).
// Every command has --help with examples.
package main
