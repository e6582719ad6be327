package bytecode

import (
	"strconv"
	"strings"
)

// ProgramName is a program's short name, which qualifies its handlers'
// names ("kv.get") in counters, metrics and callers' lookups: its source
// file's base name without the .naam extension.
func ProgramName(source string) string {
	if i := strings.LastIndexAny(source, `/\`); i >= 0 {
		source = source[i+1:]
	}
	return strings.TrimSuffix(source, ".naam")
}

// ProgramLabels names a tenant's programs as counters, metrics and
// callers do: each one's ProgramName, with "#" and its id appended where
// two of them share that name ("counter#3"). ids and sources are the
// programs' ids and source names, in the same order.
func ProgramLabels(ids []uint64, sources []string) []string {
	count := map[string]int{}
	for _, s := range sources {
		count[ProgramName(s)]++
	}
	out := make([]string, len(sources))
	for i, s := range sources {
		out[i] = ProgramName(s)
		if count[out[i]] > 1 {
			out[i] += "#" + strconv.FormatUint(ids[i], 10)
		}
	}
	return out
}
