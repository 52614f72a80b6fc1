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

// MaxHold is the longest a partner's quotes hold one name without a
// break: re-quoting extends a hold up to MaxHold from the first quote, and
// once that is over the partner may hold the name again only MaxHold
// later (others may hold it meanwhile).
const MaxHold = 30 * time.Minute

// Quote reserves env's listing of domain for partnerID at its buy-now
// price for the quote TTL. A partner asking again while its quote lives
// gets that quote back, its hold extended by the TTL but to no more than
// MaxHold from its first quote. While another partner's quote, a checkout
// paying or a sale holds the name, it is a conflict saying until when. A
// partner holds at most QuoteHoldLimit names at once in env, and a name
// for at most MaxHold in any 2 × MaxHold: past either it is rate_limited,
// with when to retry.
func (s *Service) Quote(ctx context.Context, partnerID, env, domain string) (Quote, error) {
	var q models.Quote
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The partner's row lock serializes its quotes, so the count of
		// its holds below stays true until commit.
		if err := models.ForUpdate(tx).Select("id").Take(&models.Partner{}, "id = ?", partnerID).Error; err != nil {
			return fmt.Errorf("lock partner %s: %w", partnerID, err)
		}
		l, err := findListing(tx, env, domain, "domain")
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if err := l.buyable(holder{partnerID: partnerID}, now); err != nil {
			return err
		}
		if l.BINCents == nil {
			return fault.New(fault.Conflict, "%s has no buy-now price: it is sold by offer", l.Domain)
		}
		since, err := chainStart(l, partnerID, now)
		if err != nil {
			return err
		}
		expires := now.Add(min(s.opts.QuoteTTL, since.Add(MaxHold).Sub(now)))
		err = tx.Where("partner_id = ? AND environment = ? AND listing_id = ? AND expires_at > ?", partnerID, env, l.ID, now).Order("expires_at DESC").Take(&q).Error
		switch {
		case err == nil: // its live quote, again: held longer
			if expires.After(q.ExpiresAt) {
				q.ExpiresAt = expires
				if err := tx.Model(&q).Update("expires_at", expires).Error; err != nil {
					return fmt.Errorf("extend quote %s: %w", q.ID, err)
				}
			}
		case errors.Is(err, gorm.ErrRecordNotFound):
			if err := s.checkHoldLimit(tx, partnerID, env, now); err != nil {
				return err
			}
			q = models.Quote{ID: secret.NewID("qt_"), PartnerID: partnerID, Environment: env, ListingID: l.ID, Domain: l.Domain,
				PriceCents: *l.BINCents, Currency: l.Currency, ExpiresAt: expires, CreatedAt: now}
			if err := tx.Create(&q).Error; err != nil {
				return fmt.Errorf("record quote of %s: %w", l.Domain, err)
			}
		default:
			return fmt.Errorf("find quotes of %s: %w", l.Domain, err)
		}
		ok, err := hold(tx, env, l, holder{partnerID: partnerID}, now, q.ExpiresAt, &since)
		if err != nil {
			return fmt.Errorf("hold %s: %w", l.Domain, err)
		}
		if !ok {
			return fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
		}
		return nil
	})
	if err != nil {
		return Quote{}, err
	}
	return Quote{QuoteID: q.ID, QuoteToken: s.quoteToken(q), Domain: q.Domain, PriceCents: q.PriceCents,
		Currency: q.Currency, ExpiresAt: q.ExpiresAt.UTC()}, nil
}

// chainStart is when partnerID's hold of l began, for a quote at now: the
// start of its quotes' hold when one began less than MaxHold ago (live or
// lapsed since), else now. A hold that ran its MaxHold less than MaxHold
// ago is rate_limited until then.
func chainStart(l listing, partnerID string, now time.Time) (time.Time, error) {
	if l.HeldBy == nil || *l.HeldBy != partnerID || l.HeldSession != nil || l.HeldSince == nil {
		return now, nil
	}
	since := l.HeldSince.UTC()
	switch {
	case now.Before(since.Add(MaxHold)):
		return since, nil
	case now.Before(since.Add(2 * MaxHold)):
		again := since.Add(2 * MaxHold)
		return now, &fault.Error{Code: fault.RateLimited, RetryAfter: again.Sub(now),
			Message: fmt.Sprintf("you held %s for %s from %s, as long as a name is held: quote it again from %s", l.Domain, MaxHold,
				since.Format(time.RFC3339), again.Format(time.RFC3339))}
	}
	return now, nil
}

// checkHoldLimit refuses a new quote of partnerID in env when it holds
// QuoteHoldLimit names already (quotes alive and not used by an order):
// rate_limited until the first of them lapses.
func (s *Service) checkHoldLimit(tx *gorm.DB, partnerID, env string, now time.Time) error {
	live := tx.Model(&models.Quote{}).Where("partner_id = ? AND environment = ? AND expires_at > ?", partnerID, env, now).
		Where("NOT EXISTS (SELECT 1 FROM orders WHERE orders.quote_id = quotes.id)")
	var n int64
	if err := live.Session(&gorm.Session{}).Count(&n).Error; err != nil {
		return fmt.Errorf("count the holds of %s: %w", partnerID, err)
	}
	if n < int64(s.opts.QuoteHoldLimit) {
		return nil
	}
	var first models.Quote
	if err := live.Order("expires_at").Take(&first).Error; err != nil {
		return fmt.Errorf("find the first hold of %s to lapse: %w", partnerID, err)
	}
	return &fault.Error{Code: fault.RateLimited, RetryAfter: max(first.ExpiresAt.Sub(now), time.Second),
		Message: fmt.Sprintf("you hold %d names with live quotes, the most at once: quote another when one lapses or is ordered", n)}
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
