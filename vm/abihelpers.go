package vm

import "github.com/naam-project/naam/bytecode"

// Env is what the ABI helpers need from the node that runs the handler.
type Env interface {
	// Now is the node's monotonic clock in nanoseconds.
	Now() uint64
	// Random is a pseudo-random number, not for cryptography.
	Random() uint64
	// Trace writes b to the host's log. b is valid only during the call.
	Trace(b []byte)
	// Send sends payload as an asynchronous message to handler on node.
	// payload is valid only during the call: Send copies what it keeps.
	Send(node uint64, handler uint32, payload []byte) error
	// Forward forwards the request being run to handler on node, which
	// answers the original caller.
	Forward(node uint64, handler uint32) error
}

// helperFailed is what send and forward return when nothing was sent: -1.
const helperFailed = ^uint64(0)

// ABIHelpers returns the helper table of the handler ABI (spec/abi.md,
// bytecode.Helpers) over env. Memory arguments go through Machine.Bytes, so
// a bad pointer or length faults as an access of the helper's call would.
// Send and forward return a negative value, not a fault, when env refuses:
// the handler decides what a lost message means. Each call returns a fresh
// table, which a caller may extend.
func ABIHelpers(env Env) HelperTable {
	return HelperTable{
		bytecode.HelperHash: func(m *Machine, ptr, n, _, _, _ uint64) (uint64, error) {
			b, err := m.Bytes(ptr, n, false)
			if err != nil {
				return 0, err
			}
			return FNV1a(b), nil
		},
		bytecode.HelperCopy: func(m *Machine, dst, src, n, _, _ uint64) (uint64, error) {
			d, err := m.Bytes(dst, n, true)
			if err != nil {
				return 0, err
			}
			s, err := m.Bytes(src, n, false)
			if err != nil {
				return 0, err
			}
			copy(d, s) // memmove: overlapping ranges copy as if through a temporary buffer
			return 0, nil
		},
		bytecode.HelperNow: func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
			return env.Now(), nil
		},
		bytecode.HelperRandom: func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
			return env.Random(), nil
		},
		bytecode.HelperTrace: func(m *Machine, ptr, n, _, _, _ uint64) (uint64, error) {
			b, err := m.Bytes(ptr, n, false)
			if err != nil {
				return 0, err
			}
			env.Trace(b)
			return 0, nil
		},
		bytecode.HelperSend: func(m *Machine, node, handler, ptr, n, _ uint64) (uint64, error) {
			b, err := m.Bytes(ptr, n, false)
			if err != nil {
				return 0, err
			}
			if env.Send(node, uint32(handler), b) != nil {
				return helperFailed, nil
			}
			return 0, nil
		},
		bytecode.HelperForward: func(m *Machine, node, handler, _, _, _ uint64) (uint64, error) {
			// At most once per run; a refused forward does not count, so the
			// handler may try another node.
			if m.forwarded || env.Forward(node, uint32(handler)) != nil {
				return helperFailed, nil
			}
			m.forwarded, m.forward = true, Forward{Node: node, Handler: uint32(handler)}
			return 0, nil
		},
	}
}

// FNV-1a 64 parameters.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// FNV1a returns the 64-bit FNV-1a hash of b, as the hash helper computes it
// (hash/fnv's New64a, without the allocation).
func FNV1a(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}
