// Package signedtoken makes the compact signed tokens the service hands out
// for others to carry (a quote a partner shows its buyer, a checkout link):
// a version prefix, the claims as base64url JSON, ".", and their
// HMAC-SHA256 under a key derived from the service's secret key for one
// purpose. Anyone can read the claims; nobody without the key can make or
// change them. Decoding is strict: a token differing in any character is
// refused, not read as the same.
package signedtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// MaxLen bounds a token Open reads.
const MaxLen = 2048

// ErrInvalid is a token that is malformed, of another prefix, or not
// signed by this Signer.
var ErrInvalid = errors.New("signedtoken: invalid token")

var b64 = base64.RawURLEncoding.Strict()

// Signer signs and opens the tokens of one purpose.
type Signer struct {
	prefix string
	key    [32]byte
}

// New returns the Signer of tokens starting with prefix ("qt1."), keyed by
// secretKey (DOMAIND_SECRET_KEY) for purpose: tokens of two purposes never
// open as each other's.
func New(secretKey []byte, purpose, prefix string) *Signer {
	return &Signer{prefix: prefix, key: sha256.Sum256(append([]byte(purpose+"\x00"), secretKey...))}
}

// Sign returns the token of claims, which must marshal to JSON.
func (s *Signer) Sign(claims any) (string, error) {
	raw, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	payload := b64.EncodeToString(raw)
	return s.prefix + payload + "." + b64.EncodeToString(s.mac(payload)), nil
}

// Open checks token's signature and decodes its claims into claims.
func (s *Signer) Open(token string, claims any) error {
	rest, ok := strings.CutPrefix(token, s.prefix)
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || len(token) > MaxLen {
		return ErrInvalid
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return ErrInvalid
	}
	raw, err := b64.DecodeString(payload)
	if err != nil || json.Unmarshal(raw, claims) != nil {
		return ErrInvalid
	}
	return nil
}

func (s *Signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(payload))
	return m.Sum(nil)
}
