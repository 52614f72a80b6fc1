package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// ActorBuyer is the buyer, who pays an order on the hosted checkout.
const ActorBuyer = "buyer"

// HostedHold is how long a payment on the hosted checkout holds its name
// for the session's partner while the card is charged.
const HostedHold = 5 * time.Minute

// Offer is a listed name as the hosted checkout sells it: at its buy-now
// price.
type Offer struct {
	ListingID  string
	Domain     string
	PriceCents int64
	Currency   string
}

// Offer returns env's listing of domain as partnerID's hosted checkout
// sells it now: not_found when it is not listed there, a conflict when it
// is sold, held by someone else, or sold by offer only (no buy-now price).
func (s *Service) Offer(ctx context.Context, partnerID, env, domain string) (Offer, error) {
	l, err := findListing(s.db.WithContext(ctx), env, domain, "domain")
	if err != nil {
		return Offer{}, err
	}
	return offerOf(l, partnerID, s.now().UTC())
}

func offerOf(l listing, partnerID string, now time.Time) (Offer, error) {
	if err := l.buyable(partnerID, now); err != nil {
		return Offer{}, err
	}
	if l.BINCents == nil {
		return Offer{}, fault.New(fault.Conflict, "%s has no buy-now price: it is sold by offer", l.Domain)
	}
	return Offer{ListingID: l.ID, Domain: l.Domain, PriceCents: *l.BINCents, Currency: l.Currency}, nil
}

// HostedPayment is a buyer's payment of a checkout session.
type HostedPayment struct {
	Session models.CheckoutSession
	// PriceCents and Currency are the price the buyer was shown.
	PriceCents int64
	Currency   string
	Buyer      Buyer
	// ChargeID and CardLast4 are the provider's charge, once taken.
	ChargeID, CardLast4 string
	// Referral is the affiliate link that brought the buyer, if any.
	Referral *Referral
}

// Referral is the affiliate link a sale is attributed to: its partner
// earns BPS basis points of the sale (internal/referral decides them).
type Referral struct {
	LinkID, PartnerID string
	BPS               int
}

// ReserveHosted checks a payment before its card is charged: the buyer's
// fields (validation errors naming email, name, country), the name still
// for sale to the session's partner (not_found, conflict) at the price the
// buyer was shown (price_mismatch). Then it holds the name for the partner
// for HostedHold, so that the charge is not taken for a name someone else
// buys meanwhile.
func (s *Service) ReserveHosted(ctx context.Context, p *HostedPayment) error {
	if err := p.Buyer.check(""); err != nil {
		return err
	}
	cs := p.Session
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		l, err := findListing(tx, cs.Environment, cs.Domain, "domain")
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if err := checkHostedPrice(l, cs.PartnerID, p, now); err != nil {
			return err
		}
		until := now.Add(HostedHold)
		if l.HeldBy != nil && *l.HeldBy == cs.PartnerID && l.LockedUntil != nil && l.LockedUntil.After(until) {
			until = *l.LockedUntil // the partner's own quote holds it longer
		}
		ok, err := hold(tx, cs.Environment, l, cs.PartnerID, now, until)
		if err != nil {
			return fmt.Errorf("hold %s: %w", l.Domain, err)
		}
		if !ok {
			return fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
		}
		return nil
	})
}

// checkHostedPrice checks that l is for sale to partnerID at the price p
// was shown.
func checkHostedPrice(l listing, partnerID string, p *HostedPayment, now time.Time) error {
	o, err := offerOf(l, partnerID, now)
	if err != nil {
		return err
	}
	if o.PriceCents != p.PriceCents || o.Currency != p.Currency {
		return fault.New(fault.PriceMismatch, "the price of %s is now %d %s (you were shown %d %s): check it and pay again", l.Domain, o.PriceCents, o.Currency, p.PriceCents, p.Currency)
	}
	return nil
}

// errPaidMeanwhile rolls back an order whose session another payment
// settled first.
var errPaidMeanwhile = errors.New("order: the checkout session was paid meanwhile")

// RecordHosted records a payment the provider took (p.ChargeID): it sells
// the name as Record does, to the session's partner in its environment,
// and writes the order (PAID, payment_model hosted, review as any order's),
// its first step and order.paid, and the session's order, all together. A
// session pays for one order: when it has one already (a second
// submission, another tab), that order is returned and nothing is written.
func (s *Service) RecordHosted(ctx context.Context, p HostedPayment) (View, error) {
	var o models.Order
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var cs models.CheckoutSession
		if err := models.ForUpdate(tx.DB).Take(&cs, "id = ?", p.Session.ID).Error; err != nil {
			return fmt.Errorf("find checkout session %s: %w", p.Session.ID, err)
		}
		if cs.OrderID != nil {
			var err error
			o, err = find(tx.DB, *cs.OrderID)
			return err
		}
		l, err := findListing(tx.DB, cs.Environment, cs.Domain, "domain")
		if err != nil {
			return err
		}
		now := s.now().UTC()
		if err := checkHostedPrice(l, cs.PartnerID, &p, now); err != nil {
			return err
		}
		sold, err := sell(tx.DB, cs.Environment, l, cs.PartnerID, now)
		if err != nil {
			return fmt.Errorf("sell %s: %w", l.Domain, err)
		}
		if !sold {
			return fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
		}
		review := models.ReviewNone
		if p.PriceCents >= s.opts.ReviewThresholdCents {
			review = models.ReviewPending
		}
		o = models.Order{PublicID: secret.NewID("ord_"), PartnerID: cs.PartnerID, Environment: cs.Environment, ListingID: l.ID, Domain: l.Domain,
			Status: models.OrderPaid, Review: review, SalePriceCents: p.PriceCents, Currency: p.Currency,
			PaymentModel: models.PaymentHosted, BuyerEmail: p.Buyer.Email, BuyerName: p.Buyer.Name, BuyerCountry: p.Buyer.Country,
			ExternalPaymentRef: p.ChargeID, ReturnURL: cs.ReturnURL, CancelURL: cs.CancelURL, CreatedAt: now, UpdatedAt: now}
		if r := p.Referral; r != nil {
			o.ReferralLinkID, o.ReferralPartnerID, o.ReferralBPS = &r.LinkID, &r.PartnerID, r.BPS
		}
		if err := createSale(tx, &o); err != nil {
			return err
		}
		res := tx.Model(&models.CheckoutSession{}).Where("id = ? AND order_id IS NULL", cs.ID).
			Updates(map[string]any{"order_id": o.PublicID, "charge_id": p.ChargeID, "card_last4": p.CardLast4, "paid_at": now})
		if res.Error != nil {
			return fmt.Errorf("mark checkout session %s paid: %w", cs.ID, res.Error)
		}
		if res.RowsAffected != 1 {
			return errPaidMeanwhile
		}
		note := fmt.Sprintf("paid on the hosted checkout (card ending %s)", p.CardLast4)
		if review == models.ReviewPending {
			note += fmt.Sprintf("; held for manual review (at or above %d cents)", s.opts.ReviewThresholdCents)
		}
		return s.record(tx, o, ActorBuyer, EventPaid, note, nil)
	})
	if errors.Is(err, errPaidMeanwhile) {
		var cs models.CheckoutSession
		if err := s.db.WithContext(ctx).Take(&cs, "id = ? AND order_id IS NOT NULL", p.Session.ID).Error; err != nil {
			return View{}, fmt.Errorf("find the order of checkout session %s: %w", p.Session.ID, err)
		}
		o, err = find(s.db.WithContext(ctx), *cs.OrderID)
	}
	if err != nil {
		return View{}, err
	}
	return withTimeline(s.db.WithContext(ctx), newView(o))
}
