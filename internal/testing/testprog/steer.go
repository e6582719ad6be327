package testprog

// SteerAddSource is a handler either class of core may run whose host
// run is the cheaper when the host is unloaded: 300 rounds of six
// instructions (a proven bound of 1,820, within the NIC budget) cost a
// NIC core about 4.8 µs more than a host core, far past the host
// handoff's 1 µs. add adds one to the counter, atomically, and replies
// with the old value: a ticket, so that a test sees each run. The steering
// tests of nicrt and tests/ share it; naam bench shift embeds the same
// program (cmd/naam/shift.naam).
const SteerAddSource = `
const ROUNDS = 300
region counter: [u64; 1] rw

handler add(x: u64) -> u64 {
    var h = x
    for r in 0..ROUNDS {
        h = h * 31 + r
    }
    return atomic_add(&counter[0], 1) + (h & 0)
}
`
