// Package secret makes the service's bearer secrets (session cookies, API
// secrets, OAuth codes and tokens) and the form they are stored in.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// New returns 256 random bits, URL-safe base64 (43 characters).
func New() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewID returns an identifier that is public but must not be guessable
// (a developer key, an OAuth client id): prefix and 96 random bits in hex.
func NewID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b) // never fails
	return prefix + hex.EncodeToString(b)
}

// Hash is how a secret made by New is stored: hex SHA-256. The secrets are
// 256-bit random, so a fast hash is enough (a slow one is for passwords
// people choose), and lookups by hash stay indexable.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
