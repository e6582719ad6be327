// Package msgpackshape checks the shape of a msgpack value before a
// reflective decoder sees it (lengths against the bytes left, nesting
// depth), so that a few hostile bytes cannot make the decoder allocate
// hundreds of megabytes. The object file (bytecode) and the wire's control
// bodies (nicrt/wire) share it.
package msgpackshape
