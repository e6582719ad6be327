package workload

import (
	"encoding/json"
	"io"
)

// Modes of the KV benchmark.
const (
	ModeAM        = "am"        // one active message per operation
	ModeRDMA      = "rdma"      // one-sided READs (and the writes' verbs)
	ModeMemcached = "memcached" // the baseline: memcached's text protocol over TCP
)

// Result is the benchmark's JSON:
//
//	{"workload": …, "modes": [{"mode": "am" | "rdma" | "memcached",
//	  "ops_per_sec": …, "p50_us": …, "p99_us": …, "round_trips_per_op": …}, …]}
type Result struct {
	Workload string       `json:"workload"`
	Modes    []ModeResult `json:"modes"`
}

// ModeResult is one mode's line of a Result.
type ModeResult struct {
	Mode            string  `json:"mode"`
	OpsPerSec       float64 `json:"ops_per_sec"`
	P50us           float64 `json:"p50_us"`
	P99us           float64 `json:"p99_us"`
	RoundTripsPerOp float64 `json:"round_trips_per_op"`
}

// WriteJSON writes r indented, with a final newline.
func (r Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ModeRun is one mode's run, for NewResult and WritePlots.
type ModeRun struct {
	Mode  string
	Stats *Stats
}

// NewResult is the benchmark's JSON for runs, in their order.
func NewResult(workload string, runs []ModeRun) Result {
	r := Result{Workload: workload, Modes: make([]ModeResult, 0, len(runs))}
	for _, run := range runs {
		r.Modes = append(r.Modes, run.Stats.ModeResult(run.Mode))
	}
	return r
}
