// Package stripepay is the Stripe provider of the hosted checkout: the
// buyer pays on a Stripe Checkout page, so that no card number ever
// reaches the service (PCI DSS's narrowest scope, SAQ A), and the order is
// made when Stripe's signed notice of the payment arrives
// (checkout.session.completed at POST /api/payments/stripe/webhook).
// Refunds go through Stripe's Refunds API. Every call that makes
// something carries an idempotency key, so a retry makes it once.
//
// The provider speaks to Stripe's API over HTTP itself (three endpoints
// and the signature of a notice) rather than through stripe-go, whose
// package of every API type took a fifth of the service's first build.
// The tests hold it to Stripe's contract: stripe-mock checks each call
// against Stripe's OpenAPI document, and the notices are signed by
// stripe-go's own signer (stripepaytest).
package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

// Name is the provider's name, as payments record it.
const Name = "stripe"

// Options are what the provider is built from.
type Options struct {
	// SecretKey is the account's secret API key (DOMAIND_STRIPE_SECRET_KEY,
	// sk_live_… or sk_test_…, or a restricted rk_ key).
	SecretKey string
	// WebhookSecret signs the notices of the account's webhook endpoint
	// (DOMAIND_STRIPE_WEBHOOK_SECRET, whsec_…).
	WebhookSecret string
	// APIURL, when set, is where the API is asked instead of Stripe's
	// (DOMAIND_STRIPE_API_URL: stripe-mock, in tests).
	APIURL string
	// Timeout bounds one call to the API; zero means 15 seconds.
	Timeout time.Duration
}

// Stripe is a processor on whose page buyers pay: the checkout finds it
// out by a type assertion, which this keeps true.
var _ payment.Redirector = (*Provider)(nil)

// Provider is Stripe, for one account.
type Provider struct {
	api           *client
	webhookSecret string
	test          bool
}

// New returns the Stripe provider of o's account.
func New(o Options) *Provider {
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	base := "https://api.stripe.com"
	if o.APIURL != "" {
		base = strings.TrimSuffix(o.APIURL, "/")
	}
	return &Provider{
		api:           &client{http: &http.Client{Timeout: o.Timeout}, base: base, key: o.SecretKey, retries: 2, backoff: 500 * time.Millisecond},
		webhookSecret: o.WebhookSecret,
		test:          strings.Contains(o.SecretKey, "_test_"),
	}
}

// Name implements payment.Provider.
func (*Provider) Name() string { return Name }

// TestMode implements payment.Provider: a test key moves no money.
func (p *Provider) TestMode() bool { return p.test }

// Processor implements payment.Redirector: buyers pay on Stripe
// Checkout's pages.
func (*Provider) Processor() payment.Processor {
	return payment.Processor{Name: "Stripe", PageOrigin: "https://checkout.stripe.com"}
}

// metaPayment is the metadata key carrying our payment's id on the
// Checkout Session and its PaymentIntent.
const metaPayment = "payment_id"

// Redirect implements payment.Redirector: it creates a Checkout Session
// for one line, the name at its price, which expires at r.ExpiresAt. The
// session's client_reference_id is our checkout session, and its metadata
// and its PaymentIntent's name our payment, which Stripe's notices carry.
func (p *Provider) Redirect(ctx context.Context, r payment.Redirect) (payment.Redirection, error) {
	f := url.Values{
		"mode":                                          {"payment"},
		"line_items[0][quantity]":                       {"1"},
		"line_items[0][price_data][currency]":           {strings.ToLower(r.Currency)},
		"line_items[0][price_data][unit_amount]":        {strconv.FormatInt(r.AmountCents, 10)},
		"line_items[0][price_data][product_data][name]": {r.Description},
		"success_url":                                   {r.SuccessURL},
		"cancel_url":                                    {r.CancelURL},
		"client_reference_id":                           {r.SessionID},
		"expires_at":                                    {strconv.FormatInt(r.ExpiresAt.Unix(), 10)},
		"payment_intent_data[description]":              {r.Description},
	}
	for k, v := range map[string]string{metaPayment: r.PaymentID, "checkout_session": r.SessionID} {
		f.Set("metadata["+k+"]", v)
		f.Set("payment_intent_data[metadata]["+k+"]", v)
	}
	if r.Email != "" {
		f.Set("customer_email", r.Email)
	}
	var cs checkoutSession
	err := p.api.call(ctx, http.MethodPost, "/v1/checkout/sessions", f, r.IdempotencyKey, &cs)
	var e *apiError
	if errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Type == "invalid_request_error" && e.Param == "expires_at" {
		// No page was made: one may be asked for with a later time.
		return payment.Redirection{}, fmt.Errorf("stripe: create a checkout session: %w: %w", payment.ErrExpiryRefused, err)
	}
	if err != nil {
		return payment.Redirection{}, fmt.Errorf("stripe: create a checkout session: %w", err)
	}
	if cs.URL == "" {
		return payment.Redirection{}, fmt.Errorf("stripe: checkout session %s came without its page's URL", cs.ID)
	}
	return payment.Redirection{Ref: cs.ID, URL: cs.URL, ExpiresAt: r.ExpiresAt}, nil
}

// metaRefund is the metadata key carrying a refund's idempotency key, by
// which it is found once Stripe has forgotten the key.
const metaRefund = "domaind_refund"

// keyMemory is how long Stripe keeps an idempotency key, less a margin:
// a refund first asked for longer ago may have been made under a key a
// new request would not find.
const keyMemory = 23 * time.Hour

// Refund implements payment.Provider through the Refunds API: r.ChargeID
// is the PaymentIntent that took the money. The refund carries its key in
// its metadata; one first asked for before Stripe's key memory is looked
// for among the PaymentIntent's refunds before a new one is made, and so
// is one whose answer leaves it unknown whether it was made (madeOrNot).
func (p *Provider) Refund(ctx context.Context, r payment.Refund) (string, error) {
	if !r.Since.IsZero() && time.Since(r.Since) > keyMemory {
		id, found, err := p.findRefund(ctx, r)
		if err != nil || found {
			return id, err
		}
	}
	f := url.Values{"payment_intent": {r.ChargeID}, "amount": {strconv.FormatInt(r.AmountCents, 10)},
		"metadata[" + metaRefund + "]": {r.IdempotencyKey}}
	id, err := p.createRefund(ctx, f, r)
	var e *apiError
	if errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Type == "idempotency_error" {
		// The key's first request, made before refunds carried their key,
		// had no metadata: asked as it was, Stripe answers its refund.
		f.Del("metadata[" + metaRefund + "]")
		id, err = p.createRefund(ctx, f, r)
	}
	if err != nil && madeOrNot(err) {
		// Stripe answers every repeat of the key with its first server
		// error for a day: retries would not tell, and a refund given up
		// for ops to pay by hand may have been made.
		if made, found, ferr := p.findRefund(ctx, r); ferr == nil && found {
			return made, nil
		}
	}
	return id, err
}

// madeOrNot reports whether err, a POST's, leaves it unknown whether
// Stripe made what was asked: a server error, or no answer at all. Any
// other refusal made nothing.
func madeOrNot(err error) bool {
	var e *apiError
	if errors.As(err, &e) {
		return e.Status >= 500
	}
	return true
}

func (p *Provider) createRefund(ctx context.Context, f url.Values, r payment.Refund) (string, error) {
	var re struct {
		ID string `json:"id"`
	}
	if err := p.api.call(ctx, http.MethodPost, "/v1/refunds", f, r.IdempotencyKey, &re); err != nil {
		return "", fmt.Errorf("stripe: refund %d of %s: %w", r.AmountCents, r.ChargeID, err)
	}
	return re.ID, nil
}

// findRefund looks among the refunds of r.ChargeID for the one made under
// r.IdempotencyKey; one that failed or was canceled gave nothing back and
// is passed over. A refund of the same amount since r.Since carrying no
// key (made before refunds carried theirs, or by hand in Stripe's
// dashboard) may be this one: that is an error, for ops to check.
func (p *Provider) findRefund(ctx context.Context, r payment.Refund) (string, bool, error) {
	q := url.Values{"payment_intent": {r.ChargeID}, "limit": {"100"}}
	var untagged string
	for {
		var page struct {
			Data []struct {
				ID       string            `json:"id"`
				Amount   int64             `json:"amount"`
				Status   string            `json:"status"`
				Created  int64             `json:"created"`
				Metadata map[string]string `json:"metadata"`
			} `json:"data"`
			HasMore bool `json:"has_more"`
		}
		if err := p.api.call(ctx, http.MethodGet, "/v1/refunds?"+q.Encode(), nil, "", &page); err != nil {
			return "", false, fmt.Errorf("stripe: list the refunds of %s: %w", r.ChargeID, err)
		}
		for _, re := range page.Data {
			switch {
			case re.Status == "failed" || re.Status == "canceled":
			case re.Metadata[metaRefund] == r.IdempotencyKey:
				return re.ID, true, nil
			case re.Metadata[metaRefund] == "" && re.Amount == r.AmountCents && re.Created >= r.Since.Add(-time.Minute).Unix():
				untagged = re.ID
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
		q.Set("starting_after", page.Data[len(page.Data)-1].ID)
	}
	if untagged != "" {
		return "", false, fmt.Errorf("stripe: refund %s of %d cents of %s carries no key of ours and may be this one: check it in Stripe's dashboard before refunding again",
			untagged, r.AmountCents, r.ChargeID)
	}
	return "", false, nil
}

// Lookup implements payment.Provider for a payment whose page was never
// opened (p.ProviderRef empty: the call to open it failed or its answer
// was lost, so no buyer saw it): nothing was charged.
func (p *Provider) Lookup(context.Context, models.Payment) (string, bool, error) {
	return "", false, nil
}

// Check implements payment.Redirector: a complete, paid session is paid,
// an expired one (or one whose delayed payment failed) expired, any other
// still open.
func (p *Provider) Check(ctx context.Context, ref string) (payment.Event, error) {
	var cs checkoutSession
	if err := p.api.call(ctx, http.MethodGet, "/v1/checkout/sessions/"+url.PathEscape(ref), nil, "", &cs); err != nil {
		return payment.Event{}, fmt.Errorf("stripe: retrieve checkout session %s: %w", ref, err)
	}
	ev := cs.event()
	ev.Type = "checkout.session (retrieved)"
	switch {
	case cs.Status == "complete" && cs.PaymentStatus == "paid":
		ev.Kind = payment.EventPaid
	case cs.Status == "expired":
		ev.Kind = payment.EventExpired
	}
	return ev, nil
}

// ParseEvent implements payment.Notifier: it checks the Stripe-Signature
// header against the webhook secret (a signature over the timestamp and
// the payload, at most five minutes old) and reads the events the
// checkout acts on:
//   - checkout.session.completed and async_payment_succeeded, once paid;
//   - checkout.session.expired and async_payment_failed: expired;
//   - payment_intent.payment_failed: a card refused on the page;
//   - charge.refunded: what went back to the card in all.
//
// Any other type is read with no kind.
func (p *Provider) ParseEvent(payload []byte, signature string) (payment.Event, error) {
	if err := verifySignature(payload, signature, p.webhookSecret, time.Now()); err != nil {
		return payment.Event{}, fmt.Errorf("%w: %v", payment.ErrBadSignature, err)
	}
	var e struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &e); err != nil {
		return payment.Event{}, fmt.Errorf("%w: a signed payload that is not an event: %v", payment.ErrBadSignature, err)
	}
	ev := payment.Event{ID: e.ID, Type: e.Type}
	read := func(v any) error {
		if err := json.Unmarshal(e.Data.Object, v); err != nil {
			return fmt.Errorf("stripe: read event %s: %w", e.ID, err)
		}
		return nil
	}
	switch e.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded",
		"checkout.session.expired", "checkout.session.async_payment_failed":
		var cs checkoutSession
		if err := read(&cs); err != nil {
			return ev, err
		}
		ev = cs.event()
		ev.ID, ev.Type = e.ID, e.Type
		switch {
		case e.Type == "checkout.session.expired" || e.Type == "checkout.session.async_payment_failed":
			ev.Kind = payment.EventExpired
		case cs.PaymentStatus == "paid": // not before a delayed method's money arrives
			ev.Kind = payment.EventPaid
		}
	case "payment_intent.payment_failed":
		var pi struct {
			ID               string            `json:"id"`
			Metadata         map[string]string `json:"metadata"`
			LastPaymentError *struct {
				Message string `json:"message"`
			} `json:"last_payment_error"`
		}
		if err := read(&pi); err != nil {
			return ev, err
		}
		ev.Kind, ev.PaymentID, ev.ChargeID = payment.EventFailed, pi.Metadata[metaPayment], pi.ID
		if pi.LastPaymentError != nil {
			ev.Message = models.Cut(pi.LastPaymentError.Message, 300)
		}
	case "charge.refunded":
		var ch struct {
			PaymentIntent  expandable `json:"payment_intent"`
			AmountRefunded int64      `json:"amount_refunded"`
			Currency       string     `json:"currency"`
		}
		if err := read(&ch); err != nil {
			return ev, err
		}
		if ch.PaymentIntent.ID == "" {
			return ev, nil // a charge of no PaymentIntent is none of the checkout's
		}
		ev.Kind, ev.ChargeID, ev.RefundedCents, ev.Currency = payment.EventRefunded, ch.PaymentIntent.ID, ch.AmountRefunded, strings.ToUpper(ch.Currency)
	}
	return ev, nil
}

// checkoutSession is the part of a Checkout Session the checkout reads.
type checkoutSession struct {
	ID            string            `json:"id"`
	URL           string            `json:"url"`
	Status        string            `json:"status"`         // open, complete or expired
	PaymentStatus string            `json:"payment_status"` // paid, unpaid or no_payment_required
	AmountTotal   int64             `json:"amount_total"`
	Currency      string            `json:"currency"`
	Metadata      map[string]string `json:"metadata"`
	PaymentIntent expandable        `json:"payment_intent"`
}

// event is what the session says of our payment.
func (cs *checkoutSession) event() payment.Event {
	return payment.Event{PaymentID: cs.Metadata[metaPayment], Ref: cs.ID, AmountCents: cs.AmountTotal,
		Currency: strings.ToUpper(cs.Currency), ChargeID: cs.PaymentIntent.ID}
}
