// Package secret makes the service's bearer secrets (session cookies, API
// secrets, OAuth codes and tokens) and the form they are stored in: a hash
// when the service only checks them, sealed when it must read them again.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
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

// IsID reports whether id is one NewID made with prefix: the prefix and
// 24 lower-case hex digits. A handler checks a path's id with it before
// any query.
func IsID(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 24 {
		return false
	}
	for i := range len(rest) {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hash is how a secret made by New is stored: hex SHA-256. The secrets are
// 256-bit random, so a fast hash is enough (a slow one is for passwords
// people choose), and lookups by hash stay indexable.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Sealer encrypts data the service keeps but must not keep in the clear
// (stored answers that carry a secret, partners' signing secrets, cursors),
// with AES-256-GCM under a key derived from the service's secret key for
// one purpose, so that the uses of the key share nothing.
type Sealer struct{ aead cipher.AEAD }

// ErrUnsealable is sealed data that is malformed, forged or sealed under
// another key or purpose.
var ErrUnsealable = errors.New("secret: cannot open sealed data")

// NewSealer returns the Sealer of purpose under key (DOMAIND_SECRET_KEY).
func NewSealer(key []byte, purpose string) *Sealer {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	block, _ := aes.NewCipher(m.Sum(nil)) // a 32-byte key never fails
	gcm, _ := cipher.NewGCM(block)        // nor does the standard GCM
	return &Sealer{aead: gcm}
}

// Seal encrypts plain under a fresh random nonce.
func (s *Sealer) Seal(plain []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce) // never fails
	return s.aead.Seal(nonce, nonce, plain, nil)
}

// Open decrypts what Seal made, or returns ErrUnsealable.
func (s *Sealer) Open(sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, ErrUnsealable
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, ErrUnsealable
	}
	return plain, nil
}
