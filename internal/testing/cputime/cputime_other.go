//go:build !unix

package cputime

import "time"

// Process is not measured here: it is 0, and benchmarks report no CPU
// figure.
func Process() time.Duration { return 0 }
