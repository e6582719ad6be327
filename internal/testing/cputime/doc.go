// Package cputime is the CPU time the process has used, for benchmarks
// that report it per message. Only _test.go files import it.
package cputime
