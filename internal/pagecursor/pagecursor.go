// Package pagecursor makes the opaque, tamper-proof cursors of keyset
// pagination. A cursor carries the sort keys of the last item of a page and
// a fingerprint of the query (filters and sort) it was issued for, signed
// with HMAC-SHA256 under the service's secret key, so that a client can
// neither forge a position nor reuse a cursor with other filters.
package pagecursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// maxLen bounds a cursor a client sends back.
const maxLen = 1024

// Cursor is a position in one ordered query.
type Cursor struct {
	// Query fingerprints the filters and sort the cursor belongs to.
	Query string `json:"q"`
	// Key is the sort key of the last item shown (a time in Unix
	// nanoseconds, or a price in cents); ID breaks ties.
	Key int64  `json:"k"`
	ID  string `json:"i"`
}

// ErrInvalid is a cursor that is malformed, forged or from another query.
var ErrInvalid = errors.New("pagecursor: invalid cursor")

var b64 = base64.RawURLEncoding

// Encode signs c with key.
func Encode(key []byte, c Cursor) string {
	payload, _ := json.Marshal(c) // a struct of strings and an int never fails
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(sign(key, payload))
}

// Decode verifies s with key and returns its cursor if it belongs to query.
func Decode(key []byte, s, query string) (Cursor, error) {
	if len(s) > maxLen {
		return Cursor{}, ErrInvalid
	}
	p, sig, ok := strings.Cut(s, ".")
	if !ok {
		return Cursor{}, ErrInvalid
	}
	payload, err1 := b64.DecodeString(p)
	mac, err2 := b64.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, sign(key, payload)) {
		return Cursor{}, ErrInvalid
	}
	var c Cursor
	if err := json.Unmarshal(payload, &c); err != nil || c.ID == "" || c.Query != query {
		return Cursor{}, ErrInvalid
	}
	return c, nil
}

func sign(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pagecursor\x00"))
	m.Write(payload)
	return m.Sum(nil)
}
