package wire

import (
	"crypto/hmac"
	"crypto/sha256"
)

// referenceTag is the tag computed with crypto/hmac, the specification the
// precomputed states must agree with.
func referenceTag(secret, msg []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return m.Sum(nil)[:TagSize]
}
