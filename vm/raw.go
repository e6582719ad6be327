package vm

// RawHelpers returns the helpers of raw mode, the calling convention of the
// bpf_conformance suite: its reference plugin (ubpf) registers helper 5 as
// "unwind", which returns its argument (the suite's call_unwind_fail and
// callx tests call it). Handlers never see these; the ABI's helpers are
// ABIHelpers. Each call returns a fresh table, so a caller may
// extend its copy without affecting anyone else.
func RawHelpers() HelperTable {
	return HelperTable{5: func(_ *Machine, r1, _, _, _, _ uint64) (uint64, error) { return r1, nil }}
}
