// Package hmacsig holds the signing mechanics of the partner API: the
// canonical query and canonical string a request is signed over, the v1
// request signature, the timestamp and nonce rules that stop a signed request
// from being replayed, and the signature of webhook deliveries. The server's
// signing middleware and the Go client (package partnerclient) both use it,
// so the two cannot drift apart.
//
// A signed request carries four headers: HeaderKeyID, HeaderTimestamp
// (Unix seconds, within MaxSkew of the server's clock), HeaderNonce (fresh
// for every attempt) and HeaderSignature ("v1=" and the lowercase hex
// HMAC-SHA256 of CanonicalString, keyed with the credential's secret as
// UTF-8 bytes).
//
// The package knows nothing of HTTP servers; it returns errors wrapping
// ErrBadQuery, ErrBadTimestamp, ErrBadNonce and ErrBadSignature for the
// caller to map to its error codes.
package hmacsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The headers of a signed request.
const (
	HeaderKeyID     = "X-Service-Key-Id"
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderNonce     = "X-Service-Nonce"
	HeaderSignature = "X-Service-Signature"
)

// Errors the checks wrap, each with a message saying which rule failed.
var (
	// ErrBadQuery: the query string cannot be canonicalised (a malformed
	// percent escape, or bytes that are not UTF-8), so no signature over it
	// can be checked.
	ErrBadQuery = errors.New("invalid query string")
	// ErrBadTimestamp: the timestamp is not Unix seconds or is too far from
	// the server's clock.
	ErrBadTimestamp = errors.New("invalid timestamp")
	// ErrBadNonce: the nonce is empty, too long or not printable ASCII.
	ErrBadNonce = errors.New("invalid nonce")
	// ErrBadSignature: the signature is malformed or does not match.
	ErrBadSignature = errors.New("invalid signature")
	// ErrMismatch is the ErrBadSignature of a well-formed signature that
	// does not match. A server answers an unknown key id with it too, so
	// that key ids that exist cannot be told from ones that do not.
	ErrMismatch = fmt.Errorf("%w: does not match the request (secret, canonical string or body differ)", ErrBadSignature)
)

// signaturePrefix names the version of the request signature.
const signaturePrefix = "v1="

// CanonicalString is what a request's signature covers: six lines joined
// with "\n": the method in upper case, the path (starting with /, the full
// path as sent), the canonical query (CanonicalQuery; empty when there is
// none), the timestamp and nonce exactly as sent in their headers, and the
// lowercase hex SHA-256 of the raw body bytes (of no bytes when there is no
// body). Any change to one of them changes the signature.
func CanonicalString(method, path, canonicalQuery, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.Join([]string{
		strings.ToUpper(method),
		path,
		canonicalQuery,
		timestamp,
		nonce,
		hex.EncodeToString(sum[:]),
	}, "\n")
}

// Sign returns the v1 signature of canonical under secret: "v1=" and the
// lowercase hex HMAC-SHA256.
func Sign(secret []byte, canonical string) string {
	return signaturePrefix + hmacHex(secret, []byte(canonical))
}

// Verify reports whether signature is the v1 signature of canonical under
// secret, comparing in constant time. Anything but "v1=" followed by 64
// lowercase hex digits is refused.
func Verify(secret []byte, canonical, signature string) bool {
	return CheckSignature(secret, canonical, signature) == nil
}

// CheckSignature is Verify returning why a signature is refused: malformed
// (which a partner can fix by reading the rule) or not matching
// (ErrMismatch). The error wraps ErrBadSignature.
func CheckSignature(secret []byte, canonical, signature string) error {
	hexPart, ok := strings.CutPrefix(signature, signaturePrefix)
	if !ok || !isLowerHex(hexPart, sha256.Size*2) {
		return fmt.Errorf(`%w: want "v1=" followed by 64 lowercase hex digits`, ErrBadSignature)
	}
	if !hmac.Equal([]byte(signature), []byte(Sign(secret, canonical))) {
		return ErrMismatch
	}
	return nil
}

func hmacHex(secret, msg []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
