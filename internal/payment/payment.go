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
	"log/slog"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// Provider charges cards and refunds charges. A provider's refusal is a
// fault.CardDeclined error with a message for the buyer; a card it judges
// malformed is a fault.Validation error naming the field. Any other error
// of Charge leaves the outcome unknown (the answer may have been lost
// after the charge was taken): Lookup tells.
type Provider interface {
	// Name is the processor's name, as payments record it.
	Name() string
	// TestMode reports whether the provider moves no money (test cards).
	TestMode() bool
	// Charge takes ch.AmountCents from the card and returns the charge's
	// id. Two calls with one IdempotencyKey are one charge: the second
	// returns the first's id (or its refusal) and charges nothing.
	Charge(ctx context.Context, ch Charge) (chargeID string, err error)
	// Refund gives r.AmountCents of charge r.ChargeID back to its card and
	// returns the refund's id. Two calls with one IdempotencyKey are one
	// refund.
	Refund(ctx context.Context, r Refund) (refundID string, err error)
	// Lookup returns the charge made with idempotencyKey, if one was.
	Lookup(ctx context.Context, idempotencyKey string) (chargeID string, found bool, err error)
}

// Refund is money to give back of a charge.
type Refund struct {
	ChargeID    string
	AmountCents int64
	Currency    string
	// IdempotencyKey names the refund, so that a retry refunds once.
	IdempotencyKey string
}

// Providers returns the providers of the hosted checkout by environment:
// the sandbox's is always the sandbox provider (keeping its charges in
// db); a live one only on the embedded deployment, whose live inventory is
// demo data. No real processor is built in yet, and a live sale paid with
// a test card would give a name away, so elsewhere live sessions are
// refused.
func Providers(db *gorm.DB, embedded bool, opts SandboxOptions) map[string]Provider {
	sandbox := NewSandbox(db, opts)
	p := map[string]Provider{models.EnvSandbox: sandbox}
	if embedded {
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
