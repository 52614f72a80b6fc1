package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// ActorBuyer is the buyer, who pays an order on the hosted checkout.
const ActorBuyer = "buyer"

// HostedHold is how long a payment on the hosted checkout holds its name
// for its session while the card is charged.
const HostedHold = 5 * time.Minute

// Offer is a listed name as the hosted checkout sells it: at its buy-now
// price.
type Offer struct {
	ListingID  string
	Domain     string
	PriceCents int64
	Currency   string
}

// Offer returns env's listing of domain as a hosted checkout of
// partnerID's sells it now (sessionID, "" for none yet, is the checkout
// asking: its own hold does not keep it out): not_found when it is not
// listed there, a conflict when it is sold, held by someone else, or sold
// by offer only (no buy-now price).
func (s *Service) Offer(ctx context.Context, partnerID, sessionID, env, domain string) (Offer, error) {
	l, err := findListing(s.db.WithContext(ctx), env, domain, "domain")
	if err != nil {
		return Offer{}, err
	}
	return offerOf(l, holder{partnerID: partnerID, sessionID: sessionID}, s.now().UTC())
}

func offerOf(l listing, h holder, now time.Time) (Offer, error) {
	if err := l.buyable(h, now); err != nil {
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
	// Provider is the name of the payment provider charging the card.
	Provider string
	// PriceCents and Currency are the price the buyer was shown.
	PriceCents int64
	Currency   string
	Buyer      Buyer
	// Payment is the charge's row, from ReserveHosted on.
	Payment models.Payment
	// ChargeID and CardLast4 are the provider's charge, once taken.
	ChargeID, CardLast4 string
	// Referral is the affiliate link that brought the buyer, if any.
	Referral *Referral
	// Hold is how long the name is held for the session while the buyer
	// pays: HostedHold when zero (a card charged from our page), longer
	// when the buyer pays on the processor's page (payment.PageHold).
	Hold time.Duration
	// PaidCents and PaidCurrency, when set, are what the processor took
	// where it is not the price (a charge no order is recorded for).
	PaidCents    int64
	PaidCurrency string
}

// pendingOrder is what a payment made on the processor's page keeps of
// the buyer's form (models.Payment.PendingOrder), for its order.
type pendingOrder struct {
	Buyer    Buyer     `json:"buyer"`
	Referral *Referral `json:"referral,omitempty"`
}

// Referral is the affiliate link a sale is attributed to: its partner
// earns BPS basis points of the sale (internal/referral decides them).
type Referral struct {
	LinkID, PartnerID string
	BPS               int
}

// ErrSessionPaid is ReserveHosted's answer for a session that has its
// order already (another tab paid it): the buyer goes to that order.
var ErrSessionPaid = fault.New(fault.Conflict, "This checkout is paid already.")

// ReserveHosted readies a payment before its card is charged: it checks
// the buyer's fields (validation errors naming email, name, country), the
// name still for sale to the session (not_found, conflict) at the price
// the buyer was shown (price_mismatch), and the session not paid yet
// (ErrSessionPaid). Then, in one transaction under the session's lock, it
// holds the name for the session for HostedHold, so that no one else (no
// other session, not the partner's own order) can buy it while the card
// is charged, and records the payment about to be made (p.Payment: the
// session's pending one when another tab, or an earlier attempt whose
// answer was lost, made one; its idempotency key charges once).
func (s *Service) ReserveHosted(ctx context.Context, p *HostedPayment) error {
	if err := p.Buyer.check(""); err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cs, err := lockSession(tx, p.Session.ID)
		if err != nil {
			return err
		}
		if cs.OrderID != nil {
			return ErrSessionPaid
		}
		l, err := findListing(tx, cs.Environment, cs.Domain, "domain")
		if err != nil {
			return err
		}
		now := s.now().UTC()
		h := holder{partnerID: cs.PartnerID, sessionID: cs.ID}
		if err := checkHostedPrice(l, h, p, now); err != nil {
			return err
		}
		until := now.Add(HostedHold)
		if p.Hold > 0 {
			until = now.Add(p.Hold)
		}
		if l.HeldBy != nil && *l.HeldBy == cs.PartnerID && l.LockedUntil != nil && l.LockedUntil.After(until) {
			until = *l.LockedUntil // the partner's own quote holds it longer
		}
		ok, err := hold(tx, cs.Environment, l, h, now, until, nil)
		if err != nil {
			return fmt.Errorf("hold %s: %w", l.Domain, err)
		}
		if !ok {
			return fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
		}
		pending, err := json.Marshal(pendingOrder{Buyer: p.Buyer, Referral: p.Referral})
		if err != nil {
			return fmt.Errorf("encode the order of checkout session %s: %w", cs.ID, err)
		}
		p.Payment, err = payment.Attempt(tx, payment.NewAttempt{Provider: p.Provider, SessionID: cs.ID, PartnerID: cs.PartnerID,
			Environment: cs.Environment, Domain: l.Domain, AmountCents: p.PriceCents, Currency: p.Currency, PendingOrder: string(pending)}, now)
		if errors.Is(err, payment.ErrPendingElsewhere) {
			return fault.New(fault.Conflict, "Another payment of this checkout, at another price, is still being confirmed. Try again in a minute.")
		}
		return err
	})
}

// lockSession reads checkout session id, locked for the rest of tx.
func lockSession(tx *gorm.DB, id string) (models.CheckoutSession, error) {
	var cs models.CheckoutSession
	if err := models.ForUpdate(tx).Take(&cs, "id = ?", id).Error; err != nil {
		return cs, fmt.Errorf("find checkout session %s: %w", id, err)
	}
	return cs, nil
}

// checkHostedPrice checks that l is for sale to h at the price p was
// shown.
func checkHostedPrice(l listing, h holder, p *HostedPayment, now time.Time) error {
	o, err := offerOf(l, h, now)
	if err != nil {
		return err
	}
	if o.PriceCents != p.PriceCents || o.Currency != p.Currency {
		return fault.New(fault.PriceMismatch, "the price of %s is now %d %s (you were shown %d %s): check it and pay again", l.Domain, o.PriceCents, o.Currency, p.PriceCents, p.Currency)
	}
	return nil
}

// RecordHosted records a payment the provider took (p.ChargeID, of
// p.Payment): it sells the name to the session, as Record does to a
// partner, and writes the order (PAID, payment_model hosted, review as any
// order's), its first step and order.paid, the payment's order and the
// session's, all together, under the session's lock. A session pays for
// one order: when another tab's payment of the same charge recorded it,
// that order is returned and nothing is written. Any other failure
// (another charge paid the session, the reconciliation settled the
// payment first, the name was sold meanwhile, an error) records no order:
// the caller gives the charge back (Unrecorded).
func (s *Service) RecordHosted(ctx context.Context, p HostedPayment) (View, error) {
	var v View
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		cs, err := lockSession(tx.DB, p.Session.ID)
		if err != nil {
			return err
		}
		if cs.OrderID != nil {
			o, err := find(tx.DB, *cs.OrderID)
			if err != nil {
				return err
			}
			if o.ExternalPaymentRef != p.ChargeID {
				return fault.New(fault.Conflict, "this checkout was paid a moment ago by another payment")
			}
			v, err = withTimeline(tx.DB, newView(o))
			return err
		}
		l, err := findListing(tx.DB, cs.Environment, cs.Domain, "domain")
		if err != nil {
			return err
		}
		now := saleTime(s.now())
		h := holder{partnerID: cs.PartnerID, sessionID: cs.ID}
		if err := checkHostedPrice(l, h, &p, now); err != nil {
			return err
		}
		sold, err := sell(tx.DB, cs.Environment, l, h, now)
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
		o := models.Order{PublicID: secret.NewID("ord_"), PartnerID: cs.PartnerID, Environment: cs.Environment, ListingID: l.ID, Domain: l.Domain,
			Status: models.OrderPaid, Review: review, SalePriceCents: p.PriceCents, Currency: p.Currency,
			PaymentModel: models.PaymentHosted, BuyerEmail: p.Buyer.Email, BuyerName: p.Buyer.Name, BuyerCountry: p.Buyer.Country,
			ExternalPaymentRef: p.ChargeID, ReturnURL: cs.ReturnURL, CancelURL: cs.CancelURL, CreatedAt: now, UpdatedAt: now}
		if r := p.Referral; r != nil {
			o.ReferralLinkID, o.ReferralPartnerID, o.ReferralBPS = &r.LinkID, &r.PartnerID, r.BPS
		}
		if err := createSale(tx, &o); err != nil {
			return err
		}
		if err := payment.Paid(tx.DB, p.Payment.ID, p.ChargeID, p.CardLast4, o.PublicID, now); err != nil {
			if errors.Is(err, payment.ErrNotPending) {
				return fault.New(fault.Conflict, "the payment of %s was settled meanwhile", l.Domain)
			}
			return err
		}
		err = tx.Model(&models.CheckoutSession{}).Where("id = ?", cs.ID).
			Updates(map[string]any{"order_id": o.PublicID, "charge_id": p.ChargeID, "card_last4": p.CardLast4, "paid_at": now}).Error
		if err != nil {
			return fmt.Errorf("mark checkout session %s paid: %w", cs.ID, err)
		}
		note := fmt.Sprintf("paid on the hosted checkout (card ending %s)", p.CardLast4)
		if p.CardLast4 == "" {
			note = fmt.Sprintf("paid on %s's page (%s)", p.Provider, p.ChargeID)
		}
		if review == models.ReviewPending {
			note += fmt.Sprintf("; held for manual review (at or above %d cents)", s.opts.ReviewThresholdCents)
		}
		v, err = recordSale(tx, o, ActorBuyer, EventPaid, note)
		return err
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// Unrecorded gives back the charge of p, which RecordHosted could not
// make an order of (why): the payment is recorded as charged, and its
// return queued, in one transaction (payment.Unrecorded). The hold of the
// session on the name ends.
func (s *Service) Unrecorded(ctx context.Context, p HostedPayment, why error) error {
	return s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if _, err := lockSession(tx.DB, p.Session.ID); err != nil { // first, as every path of a session's payment
			return err
		}
		now := s.now().UTC()
		if err := releaseHold(tx.DB, p.Session.Environment, p.Session.ID); err != nil {
			return err
		}
		return payment.Unrecorded(tx, p.Payment.ID, payment.Charged{ChargeID: p.ChargeID, CardLast4: p.CardLast4,
			AmountCents: p.PaidCents, Currency: p.PaidCurrency}, models.ErrorText(why, 300), now)
	})
}

// releaseHold ends the hold of checkout session id on its name, unless
// the name was sold.
func releaseHold(tx *gorm.DB, env, id string) error {
	err := tx.Model(model(env)).Where("held_session = ? AND sold_at IS NULL", id).
		Updates(map[string]any{"locked_until": nil, "held_by": nil, "held_session": nil}).Error
	if err != nil {
		return fmt.Errorf("release the hold of checkout session %s: %w", id, err)
	}
	return nil
}

// PagePayment returns pending payment p, made on the processor's page, as
// RecordHosted records it once the processor confirms it: with its
// session, and the buyer and referral its form gave (pendingOrder).
func (s *Service) PagePayment(ctx context.Context, p models.Payment) (HostedPayment, error) {
	var cs models.CheckoutSession
	if err := s.db.WithContext(ctx).Take(&cs, "id = ?", p.SessionID).Error; err != nil {
		return HostedPayment{}, fmt.Errorf("find checkout session %s of payment %s: %w", p.SessionID, p.ID, err)
	}
	po, err := pendingOf(p)
	if err != nil {
		return HostedPayment{}, err
	}
	return HostedPayment{Session: cs, Provider: p.Provider, PriceCents: p.AmountCents, Currency: p.Currency,
		Buyer: po.Buyer, Referral: po.Referral, Payment: p}, nil
}

// PendingBuyer is the buyer payment p was made with, whose form made it
// first (another tab's or a later try's form is not kept): the order of
// a payment made on the processor's page is recorded with this buyer.
func PendingBuyer(p models.Payment) (Buyer, error) {
	po, err := pendingOf(p)
	return po.Buyer, err
}

func pendingOf(p models.Payment) (pendingOrder, error) {
	var po pendingOrder
	if err := json.Unmarshal([]byte(p.PendingOrder), &po); err != nil {
		return po, fmt.Errorf("read the order of payment %s: %w", p.ID, err)
	}
	return po, nil
}

// Abandoned records that pending payment p came to nothing (why: its page
// expired, its payment failed for good) and ends its session's hold on
// the name, together, under the session's lock as RecordHosted takes it.
// A payment settled meanwhile (paid, or given back) is left alone, and so
// is the hold; Abandoned reports whether it declined p.
func (s *Service) Abandoned(ctx context.Context, p models.Payment, why string) (bool, error) {
	var declined bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockSession(tx, p.SessionID); err != nil {
			return err
		}
		var err error
		if declined, err = payment.Declined(tx, p.ID, why, s.now().UTC()); err != nil || !declined {
			return err
		}
		return releaseHold(tx, p.Environment, p.SessionID)
	})
	return declined, err
}
