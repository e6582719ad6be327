// Package msgpackshape checks the shape of a msgpack value before a
// reflective decoder sees it (lengths against the bytes left, nesting
// depth), so that a few hostile bytes cannot make the decoder allocate
// hundreds of megabytes; CheckInts checks that every integer fits the Go
// field it will be decoded into, which the decoder would cut silently. The object file (bytecode) and the wire's control
// bodies (nicrt/wire) share it.
package msgpackshape
