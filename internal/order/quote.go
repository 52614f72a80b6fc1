package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Quote is a firm price reserved for a partner, with its signed token.
type Quote struct {
	QuoteID    string    `json:"quote_id"`
	QuoteToken string    `json:"quote_token"`
	Domain     string    `json:"domain"`
	PriceCents int64     `json:"price_cents"`
	Currency   string    `json:"currency"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// Quote reserves env's listing of domain for partnerID at its buy-now
// price for the quote TTL. A partner asking again while its quote lives
// gets that quote back; while another partner's quote or a sale holds the
// name, it is a conflict saying until when.
func (s *Service) Quote(ctx context.Context, partnerID, env, domain string) (Quote, error) {
	var q models.Quote
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		l, err := findListing(tx, env, domain, "domain")
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if err := l.buyable(partnerID, now); err != nil {
			return err
		}
		if l.BINCents == nil {
			return fault.New(fault.Conflict, "%s has no buy-now price: it is sold by offer", l.Domain)
		}
		err = tx.Where("partner_id = ? AND environment = ? AND listing_id = ? AND expires_at > ?", partnerID, env, l.ID, now).Order("expires_at DESC").Take(&q).Error
		if err == nil {
			return nil // its live quote, again
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("find quotes of %s: %w", l.Domain, err)
		}
		q = models.Quote{ID: secret.NewID("qt_"), PartnerID: partnerID, Environment: env, ListingID: l.ID, Domain: l.Domain,
			PriceCents: *l.BINCents, Currency: l.Currency, ExpiresAt: now.Add(s.opts.QuoteTTL), CreatedAt: now}
		ok, err := hold(tx, env, l, partnerID, now, q.ExpiresAt)
		if err != nil {
			return fmt.Errorf("hold %s: %w", l.Domain, err)
		}
		if !ok {
			return fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
		}
		return tx.Create(&q).Error
	})
	if err != nil {
		return Quote{}, err
	}
	return Quote{QuoteID: q.ID, QuoteToken: s.quoteToken(q), Domain: q.Domain, PriceCents: q.PriceCents,
		Currency: q.Currency, ExpiresAt: q.ExpiresAt.UTC()}, nil
}

// QuoteClaims is what a quote token vouches for.
type QuoteClaims struct {
	QuoteID    string    `json:"id"`
	PartnerID  string    `json:"partner"`
	Domain     string    `json:"domain"`
	PriceCents int64     `json:"price_cents"`
	Currency   string    `json:"currency"`
	ExpiresAt  time.Time `json:"exp"`
}

// quoteTokenPrefix versions the token format.
const quoteTokenPrefix = "qt1."

// quoteToken signs q's claims (package signedtoken). A partner can show it
// to its buyer; we can check it without the database (ParseQuoteToken).
func (s *Service) quoteToken(q models.Quote) string {
	t, _ := s.quotes.Sign(QuoteClaims{QuoteID: q.ID, PartnerID: q.PartnerID, Domain: q.Domain, // strings, ints and a time always marshal
		PriceCents: q.PriceCents, Currency: q.Currency, ExpiresAt: q.ExpiresAt.UTC()})
	return t
}

// ErrBadQuoteToken is a token that is malformed or not signed by us.
var ErrBadQuoteToken = errors.New("order: invalid quote token")

// ParseQuoteToken checks token's signature and returns its claims, expired
// or not (ExpiresAt says).
func (s *Service) ParseQuoteToken(token string) (QuoteClaims, error) {
	var c QuoteClaims
	if err := s.quotes.Open(token, &c); err != nil {
		return QuoteClaims{}, ErrBadQuoteToken
	}
	return c, nil
}
