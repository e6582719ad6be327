// Package msgpackshape checks the shape of a msgpack value before a
// reflective decoder sees it: Check, lengths against the bytes left and
// nesting depth, so that a few hostile bytes cannot make the decoder
// allocate hundreds of megabytes; CheckInts, that every integer fits the
// Go field it will be decoded into, which the decoder would cut silently.
// The object file (bytecode) and the wire's control bodies (nicrt/wire)
// share it.
package msgpackshape
