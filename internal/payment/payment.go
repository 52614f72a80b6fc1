// Package payment charges buyers' cards for the hosted checkout: one
// Provider interface, and Sandbox, the built-in provider of test mode. A
// real processor (Stripe, for one) is an adapter behind the same interface.
//
// Every charge is a row (models.Payment), written before the card is
// charged and moved through its statuses in the transactions of what
// happens to it (the Book): a charge whose order could not be recorded is
// refunded through the outbox, and one whose answer was lost is found
// again by the reconciliation (Book.Reconcile), which asks the provider.
//
// A card lives in memory for one charge and no longer: it is never stored
// and never logged (Card prints as its last four digits). What is kept of
// a payment is the provider's charge id and the card's last four digits.
package payment

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// Provider is a payment processor: it refunds what it charged, and says
// what became of a charge whose answer was lost. A provider takes the
// buyer's money in one of two ways: on our page, from a card the buyer
// typed there (CardTaker: the sandbox), or on its own page, to which the
// buyer is sent (Redirector: Stripe Checkout), no card number ever
// reaching us. A provider's refusal is a fault.CardDeclined error with a
// message for the buyer; a card it judges malformed is a fault.Validation
// error naming the field.
type Provider interface {
	// Name is the processor's name, as payments record it.
	Name() string
	// TestMode reports whether the provider moves no money (test cards).
	TestMode() bool
	// Refund gives r.AmountCents of charge r.ChargeID back to its card and
	// returns the refund's id. Two calls with one IdempotencyKey are one
	// refund.
	Refund(ctx context.Context, r Refund) (refundID string, err error)
	// Lookup returns the charge made for pending payment p (with its
	// idempotency key), if one was.
	Lookup(ctx context.Context, p models.Payment) (chargeID string, found bool, err error)
}

// CardTaker is a provider charging the card the buyer typed on our page.
// Any error of Charge but a refusal leaves the outcome unknown (the answer
// may have been lost after the charge was taken): Lookup tells.
type CardTaker interface {
	Provider
	// Charge takes ch.AmountCents from the card and returns the charge's
	// id. Two calls with one IdempotencyKey are one charge: the second
	// returns the first's id (or its refusal) and charges nothing.
	Charge(ctx context.Context, ch Charge) (chargeID string, err error)
}

// Redirector is a provider on whose own page the buyer pays: we send the
// buyer there, and learn the outcome from its signed notices (Notifier),
// or, when a notice is late, by asking (Check).
type Redirector interface {
	Provider
	Notifier
	// Processor is how our page speaks of the processor, and where its
	// pages are.
	Processor() Processor
	// Redirect opens the processor's page for r and returns it. Two calls
	// with one IdempotencyKey and the same request open one page; a call
	// with another request under a key already used is refused. An
	// r.ExpiresAt too near to open a page is refused with
	// ErrExpiryRefused.
	Redirect(ctx context.Context, r Redirect) (Redirection, error)
	// Check reports what became of the page ref: an event of kind
	// EventPaid or EventExpired once the page is done with, or one of no
	// kind while the buyer may still pay on it.
	Check(ctx context.Context, ref string) (Event, error)
}

// Processor is a Redirector's processor as the checkout page speaks of
// it.
type Processor struct {
	// Name is as the page says it ("Stripe").
	Name string
	// PageOrigin is where its pages are: the page's form leads there, and
	// its Content-Security-Policy lets it.
	PageOrigin string
}

// Redirect is a payment for the buyer to make on the processor's page.
type Redirect struct {
	// PaymentID is ours (models.Payment), carried by the processor's
	// notices; IdempotencyKey names the page: one key, one request.
	PaymentID, IdempotencyKey string
	// SessionID is our checkout session, the processor's reference to it.
	SessionID   string
	AmountCents int64
	Currency    string // ISO 4217, upper case
	// Description is what the buyer pays for (the domain name).
	Description string
	// Email is the buyer's, when known.
	Email string
	// SuccessURL is where the processor sends the buyer who paid,
	// CancelURL the one who goes back.
	SuccessURL, CancelURL string
	// ExpiresAt is when the page stops taking the payment.
	ExpiresAt time.Time
}

// Redirection is a processor's page for one payment.
type Redirection struct {
	// Ref is the processor's id of the page (a Stripe Checkout Session's).
	Ref string
	// URL is where the buyer pays.
	URL string
	// ExpiresAt is when it closes (Redirect.ExpiresAt, as asked).
	ExpiresAt time.Time
}

// PageTTL is how long a processor's page takes a payment (Stripe's
// shortest), and PageHold how long a payment on it holds its name: the
// page's life and time for its notice to arrive.
const (
	PageTTL  = 30 * time.Minute
	PageHold = PageTTL + 5*time.Minute
)

// ErrExpiryRefused is a processor's refusal of a page whose ExpiresAt is
// too near (less than PageTTL away, or past): no page was made under its
// key. Whether the processor keeps the refusal under the key is not
// said, so a page asked for again with a later time goes under a key of
// its own.
var ErrExpiryRefused = errors.New("payment: the processor refused the page's closing time as too near")

// Refund is money to give back of a charge.
type Refund struct {
	ChargeID    string
	AmountCents int64
	Currency    string
	// IdempotencyKey names the refund, so that a retry refunds once.
	IdempotencyKey string
	// Since is when the refund was first asked for (or earlier): a
	// provider that forgets keys after a while looks for a refund made
	// under an old key before it makes one.
	Since time.Time
}

// Providers returns the providers of the hosted checkout by environment:
// the sandbox's is always the sandbox provider (keeping its charges in
// db); the live one is live when given (Stripe), else the sandbox on the
// embedded deployment, whose live inventory is demo data. A live sale
// paid with a test card would give a name away, so elsewhere, without a
// live provider, live sessions are refused.
func Providers(db *gorm.DB, embedded bool, opts SandboxOptions, live Provider) map[string]Provider {
	sandbox := NewSandbox(db, opts)
	p := map[string]Provider{models.EnvSandbox: sandbox}
	switch {
	case live != nil:
		p[models.EnvLive] = live
	case embedded:
		p[models.EnvLive] = sandbox
	}
	return p
}

// Charge is one payment to take.
type Charge struct {
	AmountCents int64
	Currency    string // ISO 4217, upper case
	Card        Card
	// IdempotencyKey names the payment, so that a retry or a second
	// submission charges once.
	IdempotencyKey string
	// Description is what the buyer's statement may show.
	Description string
}

// Card is a payment card as the buyer typed it, checked by ParseCard. It
// prints as "card ending 4242" in every format and log, so that its number
// cannot end up in one by mistake.
type Card struct {
	Number   string // digits only
	ExpMonth int    // 1 to 12
	ExpYear  int    // four digits
	CVC      string // 3 or 4 digits
	Name     string // the cardholder
}

// Last4 is the card number's last four digits, all that is kept of it.
func (c Card) Last4() string {
	if len(c.Number) < 4 {
		return ""
	}
	return c.Number[len(c.Number)-4:]
}

// String is the card as it may be shown or logged.
func (c Card) String() string { return "card ending " + c.Last4() }

// GoString keeps %#v from printing the number.
func (c Card) GoString() string { return "payment.Card{" + c.String() + "}" }

// LogValue keeps slog from printing the number.
func (c Card) LogValue() slog.Value { return slog.StringValue(c.String()) }

// ParseCard checks what the buyer typed: the number (12 to 19 digits,
// spaces and dashes allowed, passing the Luhn check), the expiry (MM/YY or
// MM/YYYY, not past at now), the CVC (3 or 4 digits) and the cardholder's
// name. The first problem is a validation error naming its field
// (card_number, expiry, cvc, name).
func ParseCard(number, expiry, cvc, name string, now time.Time) (Card, error) {
	digits := strings.NewReplacer(" ", "", "-", "").Replace(number)
	if len(digits) < 12 || len(digits) > 19 || !allDigits(digits) || !Luhn(digits) {
		return Card{}, invalid("card_number", "The card number is not valid: check it and try again.")
	}
	month, year, ok := parseExpiry(expiry)
	if !ok {
		return Card{}, invalid("expiry", "Give the card's expiry as MM/YY.")
	}
	if y, m, _ := now.UTC().Date(); year < y || year == y && month < int(m) {
		return Card{}, invalid("expiry", "The card has expired.")
	}
	cvc = strings.TrimSpace(cvc)
	if len(cvc) < 3 || len(cvc) > 4 || !allDigits(cvc) {
		return Card{}, invalid("cvc", "The security code (CVC) is the 3 or 4 digits on the card.")
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return Card{}, invalid("name", "Give the name on the card (at most 200 characters).")
	}
	return Card{Number: digits, ExpMonth: month, ExpYear: year, CVC: cvc, Name: name}, nil
}

func invalid(field, message string) error {
	return &fault.Error{Code: fault.Validation, Field: field, Message: message}
}

// parseExpiry reads MM/YY or MM/YYYY (spaces around the slash allowed).
func parseExpiry(s string) (month, year int, ok bool) {
	m, y, found := strings.Cut(strings.ReplaceAll(s, " ", ""), "/")
	if !found || len(m) < 1 || len(m) > 2 || (len(y) != 2 && len(y) != 4) || !allDigits(m) || !allDigits(y) {
		return 0, 0, false
	}
	month, _ = strconv.Atoi(m)
	year, _ = strconv.Atoi(y)
	if len(y) == 2 {
		year += 2000
	}
	return month, year, month >= 1 && month <= 12
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Luhn reports whether a string of digits passes the Luhn check that every
// card number passes.
func Luhn(digits string) bool {
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
