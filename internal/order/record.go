package order

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/language"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// NewOrder is a sale the partner collected (SPEC §2.13).
type NewOrder struct {
	Domain             string `json:"domain"`
	ExpectedPrice      *int64 `json:"expected_price"`
	Currency           string `json:"currency"`
	Buyer              *Buyer `json:"buyer"`
	QuoteID            string `json:"quote_id"`
	ExternalPaymentRef string `json:"external_payment_ref"`
	ReturnURL          string `json:"return_url"`
	CancelURL          string `json:"cancel_url"`
}

// maxPriceCents bounds a price anyone can mean ($1 billion).
const maxPriceCents = 100_000_000_000

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// check validates the fields alone, normalising the buyer; the first
// problem is a validation error naming its field.
func (n *NewOrder) check() error {
	switch {
	case strings.TrimSpace(n.Domain) == "":
		return fault.Invalid("domain", "is required")
	case n.ExpectedPrice == nil:
		return fault.Invalid("expected_price", "is required: the price you charged, in cents")
	case *n.ExpectedPrice < 1 || *n.ExpectedPrice > maxPriceCents:
		return fault.Invalid("expected_price", "must be a whole number of cents from 1 to %d", int64(maxPriceCents))
	case !currencyCode.MatchString(n.Currency):
		return fault.Invalid("currency", "must be an ISO 4217 code such as USD")
	case n.Buyer == nil:
		return fault.Invalid("buyer", "is required: {email, name, country}")
	}
	if err := n.Buyer.check("buyer."); err != nil {
		return err
	}
	if n.ExternalPaymentRef == "" || len(n.ExternalPaymentRef) > 200 || !printable(n.ExternalPaymentRef) {
		return fault.Invalid("external_payment_ref", "must be your payment's reference, 1 to 200 printable characters")
	}
	if len(n.QuoteID) > 64 {
		return fault.Invalid("quote_id", "is not a quote id")
	}
	for field, u := range map[string]string{"return_url": n.ReturnURL, "cancel_url": n.CancelURL} {
		if u != "" && !WebURL(u) {
			return fault.Invalid(field, "must be an absolute http(s) URL of at most 2000 characters")
		}
	}
	return nil
}

// check validates b's fields and normalises them; the fields' names in
// errors begin with prefix ("buyer." in an order's body).
func (b *Buyer) check(prefix string) error {
	email, err := account.NormaliseEmail(b.Email)
	if err != nil {
		e, _ := fault.As(err)
		return fault.Invalid(prefix+"email", "%s", strings.TrimPrefix(e.Message, "email "))
	}
	b.Email = email
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" || len(b.Name) > 200 {
		return fault.Invalid(prefix+"name", "must be 1 to 200 characters")
	}
	country, err := countryCode(prefix+"country", b.Country)
	if err != nil {
		return err
	}
	b.Country = country
	return nil
}

// countryCode checks an ISO 3166-1 alpha-2 country code, the value of field.
func countryCode(field, raw string) (string, error) {
	code := strings.ToUpper(strings.TrimSpace(raw))
	r, err := language.ParseRegion(code)
	if len(code) != 2 || err != nil || !r.IsCountry() || r.String() != code {
		return "", fault.Invalid(field, "must be an ISO 3166-1 alpha-2 country code such as NL")
	}
	return code, nil
}

// WebURL reports whether raw is an absolute http(s) URL without user
// info, of at most 2000 characters: where a buyer may be sent back to.
func WebURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && len(raw) <= 2000 && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

func printable(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Record records a sale partnerID collected in env: after checking the
// fields, that the name is listed here (not_found), not sold or held by
// someone else (conflict), the quote is the partner's (validation) and
// alive (quote_expired), and expected_price is the quoted or buy-now price
// (price_mismatch), it marks the listing sold and writes the order, its
// first step and order.recorded together. An order at or above the review
// threshold waits for ops' manual review.
func (s *Service) Record(ctx context.Context, partnerID, env string, n NewOrder) (View, error) {
	if err := n.check(); err != nil {
		return View{}, err
	}
	var v View
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		now := saleTime(s.now())
		l, err := take(tx.DB, env, n.Domain, "domain", holder{partnerID: partnerID}, now)
		if err != nil {
			return err
		}
		// A refusal below rolls the sale back with the transaction.
		price, currency, quoteID, err := s.priceOf(tx.DB, l, partnerID, env, n.QuoteID, now)
		if err != nil {
			return err
		}
		if currency != n.Currency || price != *n.ExpectedPrice {
			return fault.New(fault.PriceMismatch, "expected_price %d %s differs from the price of %s, %d %s", *n.ExpectedPrice, n.Currency, l.Domain, price, currency)
		}
		review := models.ReviewNone
		if price >= s.opts.ReviewThresholdCents {
			review = models.ReviewPending
		}
		o := models.Order{PublicID: secret.NewID("ord_"), PartnerID: partnerID, Environment: env, ListingID: l.ID, Domain: l.Domain,
			Status: models.OrderExternallyPaid, Review: review, SalePriceCents: price, Currency: currency,
			PaymentModel: models.PaymentPartnerCollected, BuyerEmail: n.Buyer.Email, BuyerName: n.Buyer.Name, BuyerCountry: n.Buyer.Country,
			QuoteID: quoteID, ExternalPaymentRef: n.ExternalPaymentRef, ReturnURL: n.ReturnURL, CancelURL: n.CancelURL,
			CreatedAt: now, UpdatedAt: now}
		if err := createSale(tx, &o); err != nil {
			return err
		}
		note := "recorded by the partner"
		if review == models.ReviewPending {
			note += fmt.Sprintf("; held for manual review (at or above %d cents)", s.opts.ReviewThresholdCents)
		}
		if v, err = recordSale(tx, o, ActorPartner, EventRecorded, note); err != nil {
			return err
		}
		return idempotency.CarriedOut(ctx, tx.DB)
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// createSale records o, sold, with its partner's commission at today's
// rate and the sale's ledger lines, and those of its referral commission
// when o is referred (ReferralBPS set).
func createSale(tx *outbox.Tx, o *models.Order) error {
	var p models.Partner
	if err := tx.Select("commission_bps").Take(&p, "id = ?", o.PartnerID).Error; err != nil {
		return fmt.Errorf("find the commission rate of %s: %w", o.PartnerID, err)
	}
	o.CommissionBPS, o.CommissionCents = p.CommissionBPS, ledger.Share(o.SalePriceCents, p.CommissionBPS)
	o.ReferralCents = ledger.Share(o.SalePriceCents, o.ReferralBPS)
	if err := tx.Create(o).Error; err != nil {
		return fmt.Errorf("record order of %s: %w", o.Domain, err)
	}
	return ledger.PostAll(tx.DB, o.CreatedAt,
		ledger.Txn{Ref: ledgerRef(*o, ledger.KindSale), Lines: ledger.Sale(o.PaymentModel, o.SalePriceCents, o.CommissionCents)},
		ledger.Txn{Ref: referralRef(*o), Lines: ledger.Referral(o.ReferralCents)})
}

// ledgerRef is the ledger reference of a transaction of kind about o.
func ledgerRef(o models.Order, kind string) ledger.Ref {
	return ledger.Ref{PartnerID: o.PartnerID, Environment: o.Environment, Currency: o.Currency, Kind: kind, OrderID: &o.PublicID}
}

// referralRef is the ledger reference of o's referral commission, posted
// under the affiliate that referred it. Only a referred order with
// commission (ReferralCents) has lines under it.
func referralRef(o models.Order) ledger.Ref {
	r := ledgerRef(o, ledger.KindReferral)
	if o.ReferralPartnerID != nil {
		r.PartnerID = *o.ReferralPartnerID
	}
	return r
}

// priceOf is what the partner pays for l: its live quote's price, or the
// buy-now price without a quote.
func (s *Service) priceOf(tx *gorm.DB, l listing, partnerID, env, quoteID string, now time.Time) (int64, string, *string, error) {
	if quoteID == "" {
		if l.BINCents == nil {
			return 0, "", nil, fault.New(fault.Conflict, "%s has no buy-now price: it is sold by offer", l.Domain)
		}
		return *l.BINCents, l.Currency, nil, nil
	}
	var q models.Quote
	err := tx.Take(&q, "id = ? AND partner_id = ? AND environment = ? AND listing_id = ?", quoteID, partnerID, env, l.ID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, "", nil, fault.Invalid("quote_id", "is not one of your quotes for %s", l.Domain)
	}
	if err != nil {
		return 0, "", nil, fmt.Errorf("find quote %s: %w", quoteID, err)
	}
	if !q.ExpiresAt.After(now) {
		return 0, "", nil, fault.New(fault.QuoteExpired, "quote %s expired at %s: ask for a new one", q.ID, q.ExpiresAt.UTC().Format(time.RFC3339))
	}
	var used int64
	if err := tx.Model(&models.Order{}).Where("quote_id = ?", q.ID).Count(&used).Error; err != nil {
		return 0, "", nil, fmt.Errorf("count orders of quote %s: %w", q.ID, err)
	}
	if used > 0 {
		return 0, "", nil, fault.New(fault.Conflict, "quote %s was used by an order already", q.ID)
	}
	return q.PriceCents, q.Currency, &q.ID, nil
}
