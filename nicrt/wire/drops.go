package wire

import (
	"errors"
	"sync/atomic"
)

// Malformed names the ways a datagram fails Parse: one counter each in a
// responder's and a caller's drop counters (DecodeErrors).
type Malformed uint8

const (
	MalformedShort    Malformed = iota // shorter than a header (ErrShort)
	MalformedMagic                     // ErrMagic
	MalformedVersion                   // ErrVersion
	MalformedTooLarge                  // length over the payload limit (ErrTooLarge)
	MalformedLength                    // length does not match the datagram (ErrLength)
	MalformedType                      // ErrType
	MalformedFlags                     // ErrFlags
	MalformedStatus                    // ErrStatus
	MalformedRoute                     // a request's route prefix (ErrRoute), or route flags on another type

	// NumMalformed is the number of reasons.
	NumMalformed = int(MalformedRoute) + 1
)

var malformedNames = [NumMalformed]string{"short", "magic", "version", "too_large", "length", "type", "flags", "status", "route"}
var malformedErrs = [NumMalformed]error{ErrShort, ErrMagic, ErrVersion, ErrTooLarge, ErrLength, ErrType, ErrFlags, ErrStatus, ErrRoute}

func (m Malformed) String() string { return malformedNames[m] }

// DecodeErrors counts the datagrams a Codec refused, by reason; safe for
// concurrent use.
type DecodeErrors struct {
	malformed     [NumMalformed]atomic.Uint64
	badMAC        atomic.Uint64
	unknownTenant atomic.Uint64
}

// Count counts err, an error of Decode.
func (c *DecodeErrors) Count(err error) {
	switch {
	case errors.Is(err, ErrMAC):
		c.badMAC.Add(1)
	case errors.Is(err, ErrUnknownTenant):
		c.unknownTenant.Add(1)
	default:
		for i, e := range malformedErrs {
			if errors.Is(err, e) {
				c.malformed[i].Add(1)
				return
			}
		}
		c.malformed[MalformedShort].Add(1) // Decode returns no other error
	}
}

// CountMalformed counts one datagram refused for reason m outside Decode.
func (c *DecodeErrors) CountMalformed(m Malformed) { c.malformed[m].Add(1) }

// Snapshot returns the counts: by reason, bad MACs, unknown tenants.
func (c *DecodeErrors) Snapshot() (m [NumMalformed]uint64, badMAC, unknownTenant uint64) {
	for i := range m {
		m[i] = c.malformed[i].Load()
	}
	return m, c.badMAC.Load(), c.unknownTenant.Load()
}
