package kernel

import "errors"

var (
	// ErrUnsupported is returned on systems without Linux BPF.
	ErrUnsupported = errors.New("kernel BPF is only available on Linux")
	// ErrRejected wraps the kernel verifier's refusal of a program; the
	// wrapped *ebpf.VerifierError (errors.As) holds the whole log.
	ErrRejected = errors.New("kernel verifier rejected the program")
)
