package checkout

import (
	"time"

	"github.com/domaind/domaind/internal/signedtoken"
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

// token signs cs's claims (package signedtoken), so that a link cannot be
// made or changed without the secret key.
func (s *Service) token(cs models.CheckoutSession) string {
	t, _ := s.links.Sign(claims{SessionID: cs.ID, PartnerID: cs.PartnerID, ExpiresAt: cs.ExpiresAt.UTC()}) // strings and a time always marshal
	return t
}

// parseToken checks token's signature and returns its claims, expired or
// not.
func (s *Service) parseToken(token string) (claims, error) {
	var c claims
	if err := s.links.Open(token, &c); err != nil || c.SessionID == "" {
		return claims{}, signedtoken.ErrInvalid
	}
	return c, nil
}
