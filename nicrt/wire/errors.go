package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per way a packet can be wrong. Every error that
// Encode, Decode and Parse return is an *Error wrapping one of them, so a
// runtime counts drops with errors.Is.
var (
	ErrShort         = errors.New("short packet")
	ErrMagic         = errors.New("bad magic")
	ErrVersion       = errors.New("unsupported version")
	ErrType          = errors.New("unknown packet type")
	ErrFlags         = errors.New("unknown flags")
	ErrStatus        = errors.New("status does not fit the packet type")
	ErrLength        = errors.New("payload length does not match the datagram")
	ErrTooLarge      = errors.New("payload over the limit")
	ErrUnknownTenant = errors.New("no key for the tenant")
	ErrMAC           = errors.New("bad MAC")
	ErrControl       = errors.New("malformed control body")
	ErrRoute         = errors.New("malformed route prefix")
)

// Error is a problem with a packet or a control body. Field names the
// header field ("magic", "length", "tag") or the control body's field
// ("install.offset"); Err is the sentinel it wraps.
type Error struct {
	Field string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	return "wire: " + e.Field + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(field string, sentinel error, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
