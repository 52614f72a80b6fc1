package checkout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/domaind/domaind/models"
)

// claims is what a checkout link's token vouches for.
type claims struct {
	SessionID string    `json:"id"`
	PartnerID string    `json:"partner"`
	ExpiresAt time.Time `json:"exp"`
}

// tokenPrefix versions the token format.
const tokenPrefix = "pt1."

// b64 decodes strictly: a changed last character is a changed token, not
// one that decodes the same.
var b64 = base64.RawURLEncoding.Strict()

// token signs cs's claims: "pt1." payload "." HMAC-SHA256, both base64url,
// under a key derived from the secret key, so that a link cannot be made
// or changed without it.
func (s *Service) token(cs models.CheckoutSession) string {
	raw, _ := json.Marshal(claims{SessionID: cs.ID, PartnerID: cs.PartnerID, ExpiresAt: cs.ExpiresAt.UTC()}) // strings and a time always marshal
	payload := b64.EncodeToString(raw)
	return tokenPrefix + payload + "." + b64.EncodeToString(s.mac(payload))
}

func (s *Service) mac(payload string) []byte {
	key := sha256.Sum256(append([]byte("checkout tokens\x00"), s.opts.SecretKey...))
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte(payload))
	return m.Sum(nil)
}

var errBadToken = errors.New("checkout: invalid token")

// parseToken checks token's signature and returns its claims, expired or
// not.
func (s *Service) parseToken(token string) (claims, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || len(token) > 1024 {
		return claims{}, errBadToken
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return claims{}, errBadToken
	}
	raw, err := b64.DecodeString(payload)
	var c claims
	if err != nil || json.Unmarshal(raw, &c) != nil || c.SessionID == "" {
		return claims{}, errBadToken
	}
	return c, nil
}
