package checkout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

// Page is what the checkout page shows of a session.
type Page struct {
	Token       string
	Domain      string
	PartnerName string
	BuyerEmail  string
	ReturnURL   string
	CancelURL   string
	// PriceCents and Currency are the name's price now.
	PriceCents int64
	Currency   string
	// TestMode says the environment's provider moves no money: the
	// sandbox, which takes test cards only, or a processor in test mode.
	TestMode bool
	// Processor, when set, names the processor on whose own page the buyer
	// pays (Stripe), at ProcessorOrigin: this page asks for no card.
	// Pending says a payment on that page is open or being confirmed.
	Processor, ProcessorOrigin string
	Pending                    bool
	// Closed, when set, is why the session can be paid no more (the name
	// was sold or is reserved by someone else, too many declined cards):
	// the page says so and shows no form.
	Closed error
	// DoneURL is set once the session is paid: where the buyer goes.
	DoneURL string
}

// Open returns the page of the session token names, for a visitor
// carrying the attribution cookie ref ("" for none: internal/referral),
// which counts the checkout as one its link started. A token that is
// malformed or not ours is a bad request, an expired one
// checkout_expired, an unknown session not_found.
func (s *Service) Open(ctx context.Context, token, ref string) (Page, error) {
	cs, err := s.session(ctx, token)
	if err != nil {
		return Page{}, err
	}
	if s.opts.Referrals != nil {
		if err := s.opts.Referrals.CheckoutOpened(ctx, ref, cs); err != nil {
			return Page{}, err
		}
	}
	p := Page{Token: token, Domain: cs.Domain, BuyerEmail: cs.BuyerEmail, ReturnURL: cs.ReturnURL, CancelURL: cs.CancelURL}
	if cs.OrderID != nil {
		p.DoneURL = doneURL(cs)
		return p, nil
	}
	var partner models.Partner
	if err := s.db.WithContext(ctx).Select("name").Take(&partner, "id = ?", cs.PartnerID).Error; err != nil {
		return Page{}, fmt.Errorf("find partner %s: %w", cs.PartnerID, err)
	}
	p.PartnerName = partner.Name
	if provider := s.opts.Providers[cs.Environment]; provider != nil {
		p.TestMode = provider.TestMode()
		if r, ok := provider.(payment.Redirector); ok {
			p.Processor, p.ProcessorOrigin = r.Processor().Name, r.Processor().PageOrigin
			if p.Pending, err = s.pendingOnPage(ctx, cs.ID); err != nil {
				return Page{}, err
			}
		}
	}
	if cs.Declines >= maxDeclines {
		p.Closed = errTooManyDeclines
		return p, nil
	}
	offer, err := s.orders.Offer(ctx, cs.PartnerID, cs.ID, cs.Environment, cs.Domain)
	if _, coded := fault.As(err); coded {
		p.Closed = err
		return p, nil
	}
	if err != nil {
		return Page{}, err
	}
	p.PriceCents, p.Currency = offer.PriceCents, offer.Currency
	return p, nil
}

var errTooManyDeclines = fault.New(fault.Forbidden, "This checkout took too many declined payments. Ask the seller for a new link.")

// Payment is the page's form as the buyer sent it.
type Payment struct {
	Token string
	// PriceCents and Currency are the price the page showed.
	PriceCents int64
	Currency   string
	// The card, as typed; never stored.
	CardNumber, Expiry, CVC string
	// Name is the cardholder's, and the buyer's.
	Name, Email, Country string
	// Referral is the buyer's attribution cookie ("" for none).
	Referral string
}

// payFor bounds a payment: the processor's call, and the statements
// before and after it. It stays below the HTTP server's write timeout
// (30 s: the buyer gets the answer), the API's shutdown (25 s: a
// process stopping lets the payment end) and payment.PendingAfter (the
// reconciliation takes up only payments nobody is working on).
const payFor = payment.ChargeTimeout + 5*time.Second

// Pay pays the session p.Token names and returns where the buyer goes
// next: its return_url with the order. The buyer's fields and card are
// checked (validation errors naming the field), the name held for the
// session at the price shown and the payment recorded before the card is
// charged (not_found, conflict, price_mismatch: nothing is charged), the
// card charged (card_declined), and the order recorded. A session paid
// already sends the buyer to its order and charges nothing; one whose
// payment races this one (another tab) ends at the same order, the charge
// being made under the same idempotency key.
//
// A charge is never left without its order: when the order cannot be
// recorded after the charge (the name sold meanwhile, an error), the
// charge's return is queued with the record of what happened, and the
// buyer is told the card was charged and is being refunded (conflict);
// when the processor's answer is lost, the buyer is told to try again,
// which uses the same payment, and the reconciliation returns a charge
// nobody comes back for (unavailable).
//
// A payment runs to its end, within payFor, when ctx ends: a buyer's
// browser drops the first send of a double click, and a payment given up
// between the charge and its order would be a refund, and the second
// send a second charge.
func (s *Service) Pay(ctx context.Context, p Payment) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), payFor)
	defer cancel()
	cs, err := s.session(ctx, p.Token)
	if err != nil {
		return "", err
	}
	if cs.OrderID != nil {
		return doneURL(cs), nil
	}
	if cs.Declines >= maxDeclines {
		return "", errTooManyDeclines
	}
	var provider payment.CardTaker
	switch pr := s.opts.Providers[cs.Environment].(type) {
	case payment.Redirector:
		return s.redirect(ctx, cs, pr, p)
	case payment.CardTaker:
		provider = pr
	default:
		return "", fault.New(fault.Forbidden, "This checkout cannot take payments now. Ask the seller.")
	}
	card, err := payment.ParseCard(p.CardNumber, p.Expiry, p.CVC, p.Name, s.now())
	if err != nil {
		return "", err
	}
	hp := order.HostedPayment{Session: cs, Provider: provider.Name(), PriceCents: p.PriceCents, Currency: p.Currency,
		Buyer: order.Buyer{Email: p.Email, Name: card.Name, Country: p.Country}}
	if err := s.reserve(ctx, &hp, p.Referral); err != nil {
		return s.paidMeanwhile(ctx, cs, err)
	}
	cctx, stopCharge := context.WithTimeout(ctx, payment.ChargeTimeout)
	hp.ChargeID, err = provider.Charge(cctx, payment.Charge{AmountCents: hp.PriceCents, Currency: hp.Currency, Card: card,
		IdempotencyKey: hp.Payment.IdempotencyKey, Description: cs.Domain})
	stopCharge()
	if e, refused := fault.As(err); refused { // no charge was taken
		return "", s.refused(ctx, cs, hp.Payment, e)
	}
	if err != nil {
		return "", &fault.Error{Code: fault.Unavailable, Err: err, Message: "We could not confirm your payment with the card processor. " +
			"Pay again to finish: the same payment is used, so you are charged once. If you leave now, any charge is refunded in full within minutes."}
	}
	hp.CardLast4 = card.Last4()
	v, err := s.orders.RecordHosted(ctx, hp)
	if err != nil {
		return "", s.giveBack(ctx, hp, err)
	}
	cs.OrderID = &v.PublicID
	return doneURL(cs), nil
}

// reserve attributes hp to the affiliate link of the buyer's cookie ref,
// if any, and holds the name for it (order.ReserveHosted).
func (s *Service) reserve(ctx context.Context, hp *order.HostedPayment, ref string) error {
	if s.opts.Referrals != nil {
		var err error
		if hp.Referral, err = s.opts.Referrals.Referral(ctx, ref, hp.Session, hp.Currency); err != nil {
			return err
		}
	}
	return s.orders.ReserveHosted(ctx, hp)
}

// refused records the provider's refusal e of payment pay on session cs
// (a decline counts towards the session's limit) and returns it.
func (s *Service) refused(ctx context.Context, cs models.CheckoutSession, pay models.Payment, e *fault.Error) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Every refused card counts, though tabs sharing the payment
		// decline it once: the limit is on cards tried. The session's row
		// is written before the payment's, the order in which every path
		// of a session's payment locks them.
		if e.Code == fault.CardDeclined {
			if err := tx.Model(&models.CheckoutSession{}).Where("id = ?", cs.ID).Update("declines", gorm.Expr("declines + 1")).Error; err != nil {
				return err
			}
		}
		_, err := payment.Declined(tx, pay.ID, e.Message, s.now().UTC())
		return err
	})
	if err != nil {
		return fmt.Errorf("record the refusal of payment %s: %w", pay.ID, err)
	}
	return e
}

// giveBack answers a charge of hp whose order could not be recorded
// (why): its return is queued with the record of the charge, and the
// buyer told so. Should that record fail too, the payment stays pending
// and the reconciliation returns the charge.
func (s *Service) giveBack(ctx context.Context, hp order.HostedPayment, why error) error {
	if err := s.orders.Unrecorded(context.WithoutCancel(ctx), hp, why); err != nil {
		return &fault.Error{Code: fault.Unavailable, Err: fmt.Errorf("charge %s of payment %s without an order (%v), and its return not recorded: %w", hp.ChargeID, hp.Payment.ID, why, err),
			Message: "Your card was charged, but we could not finish your order. The charge is refunded in full automatically; nothing else is needed from you."}
	}
	return &fault.Error{Code: fault.Conflict, Err: why,
		Message: fmt.Sprintf("%s was sold a moment ago, as your payment went through. Your card was charged, and the whole charge is being refunded to it now.", hp.Session.Domain)}
}

// paidMeanwhile is where the buyer goes when a payment of cs failed its
// checks (err), before any charge: to cs's order when another payment
// (another tab) made it meanwhile, which is why the name is sold; else
// nowhere, with err, which says the card was not charged when the name
// went.
func (s *Service) paidMeanwhile(ctx context.Context, cs models.CheckoutSession, err error) (string, error) {
	if _, coded := fault.As(err); !coded {
		return "", err
	}
	var now models.CheckoutSession
	if s.db.WithContext(ctx).Take(&now, "id = ? AND order_id IS NOT NULL", cs.ID).Error == nil {
		return doneURL(now), nil
	}
	if e, _ := fault.As(err); e.Code == fault.Conflict || e.Code == fault.NotFound {
		return "", &fault.Error{Code: e.Code, Field: e.Field, Err: err, Message: strings.TrimSuffix(e.Message, ".") + ". Your card was not charged."}
	}
	return "", err
}
