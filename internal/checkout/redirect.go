package checkout

import (
	"context"
	"fmt"
	"net/url"
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
// opened with the payment's idempotency key, so that a second submission,
// from this tab or another, sends the buyer to the same page. The order
// is made when the processor's notice of the payment arrives (Apply).
func (s *Service) redirect(ctx context.Context, cs models.CheckoutSession, pr payment.Redirector, p Payment) (string, error) {
	hp := order.HostedPayment{Session: cs, Provider: pr.Name(), PriceCents: p.PriceCents, Currency: p.Currency,
		Buyer: order.Buyer{Email: p.Email, Name: p.Name, Country: p.Country}, Hold: payment.PageHold}
	if err := s.reserve(ctx, &hp, p.Referral); err != nil {
		return s.paidMeanwhile(ctx, cs, err)
	}
	pay := hp.Payment
	if pay.RedirectURL != "" {
		if pay.CreatedAt.Add(payment.PageTTL).After(s.now()) {
			return pay.RedirectURL, nil
		}
		return "", fault.New(fault.Conflict, "Your last payment page for %s has just closed. Try again in a minute.", cs.Domain)
	}
	here := s.opts.BaseURL + PagePath + "?" + url.Values{"pt": {p.Token}}.Encode()
	rctx, cancel := context.WithTimeout(ctx, payment.ChargeTimeout)
	page, err := pr.Redirect(rctx, payment.Redirect{PaymentID: pay.ID, IdempotencyKey: pay.IdempotencyKey, SessionID: cs.ID,
		AmountCents: pay.AmountCents, Currency: pay.Currency, Description: cs.Domain, Email: hp.Buyer.Email,
		SuccessURL: here + "&" + PaidParam + "=1", CancelURL: here,
		ExpiresAt: s.now().UTC().Add(payment.PageTTL + time.Minute).Truncate(time.Minute)}) // the same within a minute, for a retry's idempotency
	cancel()
	if err != nil {
		return "", &fault.Error{Code: fault.Unavailable, Err: fmt.Errorf("open %s's page for payment %s: %w", pr.Name(), pay.ID, err),
			Message: fmt.Sprintf("We could not reach %s, who takes the payment. Nothing was charged: try again in a minute.", pr.Processor().Name)}
	}
	if err := payment.Redirected(s.db.WithContext(ctx), pay.ID, page, s.now().UTC()); err != nil {
		return "", err
	}
	return page.URL, nil
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
