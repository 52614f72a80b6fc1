// Package stripepay is the Stripe provider of the hosted checkout: the
// buyer pays on a Stripe Checkout page, so that no card number ever
// reaches the service (PCI DSS's narrowest scope, SAQ A), and the order is
// made when Stripe's signed notice of the payment arrives
// (checkout.session.completed at POST /api/payments/stripe/webhook).
// Refunds go through Stripe's Refunds API. Every call that makes
// something carries an idempotency key, so a retry makes it once.
package stripepay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

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

// Provider is Stripe, for one account. It calls the three endpoints it
// uses through the library's backend rather than stripe.Client, whose
// hundred-odd services would all be linked into the binary.
type Provider struct {
	api           stripe.Backend
	key           string
	webhookSecret string
	test          bool
}

// New returns the Stripe provider of o's account.
func New(o Options) *Provider {
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	cfg := &stripe.BackendConfig{
		HTTPClient:        &http.Client{Timeout: o.Timeout},
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull}, // errors are returned, and logged by the caller
		MaxNetworkRetries: stripe.Int64(2),                                // with the idempotency key of the call
	}
	if o.APIURL != "" {
		cfg.URL = stripe.String(strings.TrimSuffix(o.APIURL, "/"))
	}
	return &Provider{api: stripe.GetBackendWithConfig(stripe.APIBackend, cfg), key: o.SecretKey, webhookSecret: o.WebhookSecret,
		test: strings.Contains(o.SecretKey, "_test_")}
}

// Name implements payment.Provider.
func (*Provider) Name() string { return Name }

// TestMode implements payment.Provider: a test key moves no money.
func (p *Provider) TestMode() bool { return p.test }

// metaPayment is the metadata key carrying our payment's id on the
// Checkout Session and its PaymentIntent.
const metaPayment = "payment_id"

// Redirect implements payment.Redirector: it creates a Checkout Session
// for one line, the name at its price, which expires at r.ExpiresAt. The
// session's client_reference_id is our checkout session, and its metadata
// and its PaymentIntent's name our payment, which Stripe's notices carry.
func (p *Provider) Redirect(ctx context.Context, r payment.Redirect) (payment.Redirection, error) {
	meta := map[string]string{metaPayment: r.PaymentID, "checkout_session": r.SessionID}
	params := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(r.Currency)),
				UnitAmount:  stripe.Int64(r.AmountCents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(r.Description)},
			},
		}},
		SuccessURL:        stripe.String(r.SuccessURL),
		CancelURL:         stripe.String(r.CancelURL),
		ClientReferenceID: stripe.String(r.SessionID),
		ExpiresAt:         stripe.Int64(r.ExpiresAt.Unix()),
		Metadata:          meta,
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Description: stripe.String(r.Description), Metadata: meta},
	}
	if r.Email != "" {
		params.CustomerEmail = stripe.String(r.Email)
	}
	params.SetIdempotencyKey(r.IdempotencyKey)
	params.Context = ctx
	cs := &stripe.CheckoutSession{}
	if err := p.api.Call(http.MethodPost, "/v1/checkout/sessions", p.key, params, cs); err != nil {
		return payment.Redirection{}, fmt.Errorf("stripe: create a checkout session: %w", err)
	}
	if cs.URL == "" {
		return payment.Redirection{}, fmt.Errorf("stripe: checkout session %s came without its page's URL", cs.ID)
	}
	return payment.Redirection{Ref: cs.ID, URL: cs.URL}, nil
}

// Refund implements payment.Provider through the Refunds API: r.ChargeID
// is the PaymentIntent that took the money.
func (p *Provider) Refund(ctx context.Context, r payment.Refund) (string, error) {
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(r.ChargeID), Amount: stripe.Int64(r.AmountCents)}
	params.SetIdempotencyKey(r.IdempotencyKey)
	params.Context = ctx
	re := &stripe.Refund{}
	if err := p.api.Call(http.MethodPost, "/v1/refunds", p.key, params, re); err != nil {
		return "", fmt.Errorf("stripe: refund %d of %s: %w", r.AmountCents, r.ChargeID, err)
	}
	return re.ID, nil
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
	params := &stripe.CheckoutSessionRetrieveParams{}
	params.Context = ctx
	cs := &stripe.CheckoutSession{}
	if err := p.api.Call(http.MethodGet, stripe.FormatURLPath("/v1/checkout/sessions/%s", ref), p.key, params, cs); err != nil {
		return payment.Event{}, fmt.Errorf("stripe: retrieve checkout session %s: %w", ref, err)
	}
	ev := sessionEvent(cs)
	ev.Type = "checkout.session (retrieved)"
	switch {
	case cs.Status == stripe.CheckoutSessionStatusComplete && cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid:
		ev.Kind = payment.EventPaid
	case cs.Status == stripe.CheckoutSessionStatusExpired:
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
	e, err := webhook.ConstructEventWithOptions(payload, signature, p.webhookSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return payment.Event{}, fmt.Errorf("%w: %v", payment.ErrBadSignature, err)
	}
	ev := payment.Event{ID: e.ID, Type: string(e.Type)}
	if e.Data == nil {
		return ev, nil
	}
	switch e.Type {
	case stripe.EventTypeCheckoutSessionCompleted, stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded,
		stripe.EventTypeCheckoutSessionExpired, stripe.EventTypeCheckoutSessionAsyncPaymentFailed:
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(e.Data.Raw, &cs); err != nil {
			return ev, fmt.Errorf("stripe: read event %s: %w", e.ID, err)
		}
		read := sessionEvent(&cs)
		read.ID, read.Type = ev.ID, ev.Type
		switch {
		case e.Type == stripe.EventTypeCheckoutSessionExpired || e.Type == stripe.EventTypeCheckoutSessionAsyncPaymentFailed:
			read.Kind = payment.EventExpired
		case cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid: // not before a delayed method's money arrives
			read.Kind = payment.EventPaid
		}
		return read, nil
	case stripe.EventTypePaymentIntentPaymentFailed:
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(e.Data.Raw, &pi); err != nil {
			return ev, fmt.Errorf("stripe: read event %s: %w", e.ID, err)
		}
		ev.Kind, ev.PaymentID, ev.ChargeID = payment.EventFailed, pi.Metadata[metaPayment], pi.ID
		if pi.LastPaymentError != nil {
			ev.Message = models.Cut(pi.LastPaymentError.Msg, 300)
		}
	case stripe.EventTypeChargeRefunded:
		var ch stripe.Charge
		if err := json.Unmarshal(e.Data.Raw, &ch); err != nil {
			return ev, fmt.Errorf("stripe: read event %s: %w", e.ID, err)
		}
		if ch.PaymentIntent == nil {
			return ev, nil // a charge of no PaymentIntent is none of the checkout's
		}
		ev.Kind, ev.ChargeID, ev.RefundedCents, ev.Currency = payment.EventRefunded, ch.PaymentIntent.ID, ch.AmountRefunded, upper(ch.Currency)
	}
	return ev, nil
}

// sessionEvent is what a Checkout Session says of our payment.
func sessionEvent(cs *stripe.CheckoutSession) payment.Event {
	ev := payment.Event{PaymentID: cs.Metadata[metaPayment], Ref: cs.ID, AmountCents: cs.AmountTotal, Currency: upper(cs.Currency)}
	if cs.PaymentIntent != nil {
		ev.ChargeID = cs.PaymentIntent.ID
	}
	return ev
}

func upper(c stripe.Currency) string { return strings.ToUpper(string(c)) }
