package wire

import (
	"errors"
	"fmt"
)

// RuntimeStatus is what became of a request at its responder, as the
// runtime says it: the status k that an error reply carries as
// StatusRuntime+k (Wire), and the NIC model's Reply.Status. The values are
// stable and only appended (spec/nic.md, Messages and replies).
type RuntimeStatus uint8

const (
	RuntimeOK             RuntimeStatus = iota // the handler replied
	RuntimeError                               // the handler failed with its own code
	RuntimeForwarded                           // the handler forwarded the request; another node answers
	RuntimeFault                               // the run faulted
	RuntimeUnknownHandler                      // no such handler (or it is being uninstalled)
	RuntimeForeignHandler                      // the handler belongs to another tenant
	RuntimeOverloaded                          // the queues were full; the request was dropped
	RuntimeBadRequest                          // a built-in verb's payload is malformed
	RuntimeUnknownRegion                       // a built-in verb names no registered region
	RuntimeForeignRegion                       // the region belongs to another tenant
	RuntimeWrongKey                            // the region's key does not match
	RuntimeOutOfBounds                         // the access leaves the region
	RuntimeReadOnly                            // a write to a read-only region
	RuntimeMisaligned                          // an atomic not on an 8-byte boundary
	RuntimeTooLarge                            // a READ longer than the largest reply
	RuntimeClosed                              // the NIC is closed
	RuntimeBadControl                          // a control packet's op or body is malformed
	RuntimeControlFailed                       // the node refused a well-formed control op (verification, a name taken, …)

	// NumRuntimeStatus is the number of statuses this runtime knows.
	NumRuntimeStatus = int(RuntimeControlFailed) + 1
)

var runtimeNames = [NumRuntimeStatus]string{
	"ok", "error", "forwarded", "fault", "unknown handler", "foreign handler", "overloaded",
	"bad request", "unknown region", "foreign region", "wrong key", "out of bounds", "read-only",
	"misaligned", "too large", "closed", "bad control", "control failed",
}

func (s RuntimeStatus) String() string {
	if int(s) < NumRuntimeStatus {
		return runtimeNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Rejected reports whether the request was refused before any handler or
// verb ran (everything but OK, Error, Forwarded and Fault).
func (s RuntimeStatus) Rejected() bool { return s > RuntimeFault }

// Wire is the status an error reply carries for s: StatusRuntime+s.
func (s RuntimeStatus) Wire() Status { return StatusRuntime + Status(s) }

// Err is the sentinel error of a rejection, the same value wherever the
// rejection is met (the NIC model's Reply.Err, a caller's remote error);
// nil for OK, Error, Forwarded, Fault and statuses this runtime does not
// know.
func (s RuntimeStatus) Err() error {
	if int(s) < NumRuntimeStatus {
		return runtimeErrors[s]
	}
	return nil
}

var runtimeErrors = [NumRuntimeStatus]error{
	RuntimeUnknownHandler: errors.New("nicrt: unknown handler"),
	RuntimeForeignHandler: errors.New("nicrt: the handler belongs to another tenant"),
	RuntimeOverloaded:     errors.New("nicrt: queues full"),
	RuntimeBadRequest:     errors.New("nicrt: malformed built-in request"),
	RuntimeUnknownRegion:  errors.New("nicrt: unknown region"),
	RuntimeForeignRegion:  errors.New("nicrt: the region belongs to another tenant"),
	RuntimeWrongKey:       errors.New("nicrt: wrong region key"),
	RuntimeOutOfBounds:    errors.New("nicrt: access out of the region's bounds"),
	RuntimeReadOnly:       errors.New("nicrt: write to a read-only region"),
	RuntimeMisaligned:     errors.New("nicrt: atomic not 8-byte aligned"),
	RuntimeTooLarge:       errors.New("nicrt: READ longer than the largest reply"),
	RuntimeClosed:         errors.New("nicrt: closed"),
	RuntimeBadControl:     errors.New("nicrt: malformed control packet"),
	RuntimeControlFailed:  errors.New("nicrt: control operation failed"),
}
