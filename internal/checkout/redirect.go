package checkout

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

// PaidParam is the query parameter the processor's page adds to this
// page's link when it sends back a buyer who paid.
const PaidParam = "paid"

// redirect readies the payment of session cs on processor pr's own page
// and returns the page, where the buyer goes next: the buyer's fields
// are checked and the name held for the session at the price shown, for
// as long as the page takes a payment (payment.PageHold), and the page is
// opened under an idempotency key of the payment's, so that a second
// submission, from this tab or another, sends the buyer to the same page. The order
// is made when the processor's notice of the payment arrives (Apply).
//
// Every request for the payment's page is the same request, since the
// processor refuses a key sent again with another: the closing time
// stored with the payment, and the buyer's email as the payment was made
// with it (its order is recorded with that buyer). So a retry after a
// lost answer gets the page made then. When no page was made (the first
// request never reached the processor) and that time is now too near,
// the processor refuses it, and the page is asked for with a new time,
// under a key of its own (pageKey).
func (s *Service) redirect(ctx context.Context, cs models.CheckoutSession, pr payment.Redirector, p Payment) (string, error) {
	hp := order.HostedPayment{Session: cs, Provider: pr.Name(), PriceCents: p.PriceCents, Currency: p.Currency,
		Buyer: order.Buyer{Email: p.Email, Name: p.Name, Country: p.Country}, Hold: payment.PageHold}
	if err := s.reserve(ctx, &hp, p.Referral); err != nil {
		return s.paidMeanwhile(ctx, cs, err)
	}
	pay := hp.Payment
	if pay.RedirectURL != "" {
		closes := pay.CreatedAt.Add(payment.PageTTL) // a page opened before payments kept the time
		if pay.PageExpiresAt != nil {
			closes = *pay.PageExpiresAt
		}
		return s.stillOpen(cs, pay.RedirectURL, closes)
	}
	buyer, err := order.PendingBuyer(pay)
	if err != nil {
		return "", err
	}
	db := s.db.WithContext(ctx)
	var closes time.Time
	if pay.PageExpiresAt != nil {
		closes = *pay.PageExpiresAt
	} else if closes, err = payment.PageExpiry(db, pay.ID, nil, s.pageCloses()); err != nil {
		return "", err
	}
	here := s.opts.BaseURL + PagePath + "?" + url.Values{"pt": {p.Token}}.Encode()
	open := func(closes time.Time) (payment.Redirection, error) {
		rctx, cancel := context.WithTimeout(ctx, payment.ChargeTimeout)
		defer cancel()
		return pr.Redirect(rctx, payment.Redirect{PaymentID: pay.ID, IdempotencyKey: pageKey(pay, closes), SessionID: cs.ID,
			AmountCents: pay.AmountCents, Currency: pay.Currency, Description: cs.Domain, Email: buyer.Email,
			SuccessURL: here + "&" + PaidParam + "=1", CancelURL: here, ExpiresAt: closes})
	}
	page, err := open(closes)
	if errors.Is(err, payment.ErrExpiryRefused) {
		if closes, err = payment.PageExpiry(db, pay.ID, &closes, s.pageCloses()); err != nil {
			return "", err
		}
		page, err = open(closes)
	}
	if err != nil {
		return "", &fault.Error{Code: fault.Unavailable, Err: fmt.Errorf("open %s's page for payment %s: %w", pr.Name(), pay.ID, err),
			Message: fmt.Sprintf("We could not reach %s, who takes the payment. Nothing was charged: try again in a minute.", pr.Processor().Name)}
	}
	if page, err = payment.Redirected(db, pay.ID, page, s.now().UTC()); err != nil {
		return "", err
	}
	return s.stillOpen(cs, page.URL, page.ExpiresAt)
}

// pageKey is the idempotency key of the page of pay closing at closes:
// the payment's, with the time. A time refused as too near made no page,
// and the processor may keep its refusal under its key: the later time
// asked for next is a request of its own.
func pageKey(pay models.Payment, closes time.Time) string {
	return pay.IdempotencyKey + "-" + strconv.FormatInt(closes.Unix(), 10)
}

// pageLeast is the least time a page must have left for a buyer to be
// sent to it: one closing sooner leaves no time to pay.
const pageLeast = time.Minute

// pageCloses is when a page asked for now is to close: a minute past the
// processor's least (payment.PageTTL), for the call's time and the
// processor's clock.
func (s *Service) pageCloses() time.Time { return s.now().UTC().Add(payment.PageTTL + time.Minute) }

// stillOpen returns page, which closes at closes, for the buyer of cs to
// pay on, unless it is about to close: the buyer is then told to come
// back once its end is known (its notice, or the reconciliation's
// asking) and has freed the session.
func (s *Service) stillOpen(cs models.CheckoutSession, page string, closes time.Time) (string, error) {
	if closes.After(s.now().Add(pageLeast)) {
		return page, nil
	}
	return "", fault.New(fault.Conflict, "Your last payment page for %s has closed or is about to. Try again in a minute.", cs.Domain)
}

// pendingOnPage reports whether session id has a payment pending on a
// processor's page.
func (s *Service) pendingOnPage(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Payment{}).
		Where("session_id = ? AND status = ? AND provider_ref <> ''", id, models.PaymentPending).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("find the pending payments of checkout session %s: %w", id, err)
	}
	return n > 0, nil
}
