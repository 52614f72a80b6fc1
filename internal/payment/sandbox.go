package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/domaind/domaind/internal/fault"
)

// The sandbox's test cards, as payment processors' test modes have them.
const (
	// TestCardPays is charged.
	TestCardPays = "4242424242424242"
	// TestCardDeclined is declined (card_declined).
	TestCardDeclined = "4000000000000002"
)

// Sandbox is the built-in provider of test mode: no money moves. The test
// card 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined, and any
// other number is declined too (one failing the Luhn check is invalid).
// A charge's id follows from its idempotency key, so a second charge with
// the key is the first one, as a processor's idempotency makes it.
type Sandbox struct{}

// Charge charges a test card.
func (Sandbox) Charge(_ context.Context, ch Charge) (string, error) {
	if ch.IdempotencyKey == "" || ch.AmountCents < 1 || len(ch.Currency) != 3 {
		return "", errBadCharge(ch)
	}
	if !allDigits(ch.Card.Number) || !Luhn(ch.Card.Number) {
		return "", invalid("card_number", "The card number is not valid: check it and try again.")
	}
	switch ch.Card.Number {
	case TestCardPays:
		sum := sha256.Sum256([]byte("sandbox charge\x00" + ch.IdempotencyKey))
		return "ch_test_" + hex.EncodeToString(sum[:12]), nil
	case TestCardDeclined:
		return "", fault.New(fault.CardDeclined, "Your card was declined. Try another card.")
	default:
		return "", fault.New(fault.CardDeclined, "Your card was declined: this is a test checkout, which takes only the test cards (4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined).")
	}
}

// errBadCharge is a charge no provider should be asked for: a bug of the
// caller, not the buyer's.
func errBadCharge(ch Charge) error {
	return fmt.Errorf("payment: charge of %d %q with idempotency key %q is not one to make", ch.AmountCents, ch.Currency, ch.IdempotencyKey)
}

// Refund refunds a sandbox charge (its id starts ch_test_). A refund's id
// follows from its idempotency key, as a charge's does.
func (Sandbox) Refund(_ context.Context, r Refund) (string, error) {
	if r.IdempotencyKey == "" || r.AmountCents < 1 || len(r.Currency) != 3 || !strings.HasPrefix(r.ChargeID, "ch_test_") {
		return "", fmt.Errorf("payment: refund of %d %q of charge %q with idempotency key %q is not one to make",
			r.AmountCents, r.Currency, r.ChargeID, r.IdempotencyKey)
	}
	sum := sha256.Sum256([]byte("sandbox refund\x00" + r.IdempotencyKey))
	return "re_test_" + hex.EncodeToString(sum[:12]), nil
}
