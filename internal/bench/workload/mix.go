package workload

import (
	"fmt"
	"math/rand/v2"
)

// Mix is a YCSB core workload's operation mix: the fraction of reads,
// the rest updates of existing records.
type Mix struct {
	Name     string
	ReadFrac float64
}

// The YCSB core workloads A, B and C (their read and update proportions).
var (
	MixA = Mix{Name: "A", ReadFrac: 0.50} // update heavy
	MixB = Mix{Name: "B", ReadFrac: 0.95} // read mostly
	MixC = Mix{Name: "C", ReadFrac: 1.00} // read only
)

// MixByName finds "A", "B" or "C" (or "a", "b", "c").
func MixByName(name string) (Mix, error) {
	switch name {
	case "A", "a":
		return MixA, nil
	case "B", "b":
		return MixB, nil
	case "C", "c":
		return MixC, nil
	}
	return Mix{}, fmt.Errorf("workload: unknown mix %q (A, B, C)", name)
}

// Op is an operation kind.
type Op uint8

const (
	OpRead Op = iota
	OpUpdate
)

func (o Op) String() string {
	if o == OpRead {
		return "read"
	}
	return "update"
}

// Next draws the next operation kind.
func (m Mix) Next(r *rand.Rand) Op {
	if m.ReadFrac >= 1 || r.Float64() < m.ReadFrac {
		return OpRead
	}
	return OpUpdate
}
