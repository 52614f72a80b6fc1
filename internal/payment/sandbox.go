package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// The sandbox's test cards, as payment processors' test modes have them.
const (
	// TestCardPays is charged.
	TestCardPays = "4242424242424242"
	// TestCardDeclined is declined (card_declined).
	TestCardDeclined = "4000000000000002"
)

// SandboxName is the sandbox provider's name in payments.
const SandboxName = "sandbox"

// SandboxOptions make the sandbox behave as a real processor on a bad day.
type SandboxOptions struct {
	// Latency is how long each call takes (DOMAIND_SANDBOX_LATENCY).
	Latency time.Duration
	// LostAnswers is the share of charges (0 to 1) whose answer is lost
	// after the charge was taken: Charge reports an error, as a timeout
	// would, and Lookup finds the charge (DOMAIND_SANDBOX_PAYMENT_FAILURES).
	LostAnswers float64
}

// Sandbox is the built-in provider of test mode: no money moves, but the
// sandbox keeps its charges and refunds as a processor does (tables
// sandbox_charges and sandbox_refunds), so that what it charged can be
// checked against what the service recorded. The test card 4242 4242 4242
// 4242 pays, 4000 0000 0000 0002 is declined, and any other number is
// declined too (one failing the Luhn check is invalid). A charge's id
// follows from its idempotency key, so a second charge with the key is the
// first one, as a processor's idempotency makes it.
type Sandbox struct {
	db   *gorm.DB
	opts SandboxOptions
}

// NewSandbox returns the sandbox processor keeping its books in db.
func NewSandbox(db *gorm.DB, opts SandboxOptions) *Sandbox { return &Sandbox{db: db, opts: opts} }

// Name implements Provider.
func (*Sandbox) Name() string { return SandboxName }

// TestMode implements Provider: the sandbox takes test cards only.
func (*Sandbox) TestMode() bool { return true }

// ErrLostAnswer is the error of a sandbox charge whose answer was lost
// (SandboxOptions.LostAnswers): the charge was taken.
var ErrLostAnswer = errors.New("payment: the processor's answer was lost (timed out)")

// Charge charges a test card.
func (s *Sandbox) Charge(ctx context.Context, ch Charge) (string, error) {
	if err := s.wait(ctx); err != nil {
		return "", err
	}
	if ch.IdempotencyKey == "" || ch.AmountCents < 1 || len(ch.Currency) != 3 {
		return "", errBadCharge(ch)
	}
	id := sandboxID("ch_test_", "sandbox charge", ch.IdempotencyKey)
	// A key charged already answers with its charge, whatever card comes
	// with it now: a second call of one charge (the buyer's other tab)
	// takes nothing, and its card is not judged, as a decline would fail
	// the payment the first call paid.
	var taken models.SandboxCharge
	res := s.db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&taken)
	if res.Error != nil {
		return "", fmt.Errorf("sandbox charge: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		if err := chargeable(ch.Card); err != nil {
			return "", err
		}
		c := models.SandboxCharge{ID: id, IdempotencyKey: ch.IdempotencyKey,
			AmountCents: ch.AmountCents, Currency: ch.Currency, CardLast4: ch.Card.Last4(), Description: models.Cut(ch.Description, 253),
			CreatedAt: time.Now().UTC()}
		if err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&c).Error; err != nil {
			return "", fmt.Errorf("sandbox charge: %w", err)
		}
		if err := s.db.WithContext(ctx).Take(&taken, "id = ?", id).Error; err != nil {
			return "", fmt.Errorf("sandbox charge: %w", err)
		}
	}
	if taken.AmountCents != ch.AmountCents || taken.Currency != ch.Currency {
		return "", fmt.Errorf("payment: idempotency key %q was used for a charge of %d %s, not %d %s",
			ch.IdempotencyKey, taken.AmountCents, taken.Currency, ch.AmountCents, ch.Currency)
	}
	if s.opts.LostAnswers > 0 && rand.Float64() < s.opts.LostAnswers {
		return "", ErrLostAnswer
	}
	return taken.ID, nil
}

// chargeable refuses a card the sandbox does not charge: one whose number
// is not valid, and every test card but the one that pays.
func chargeable(c Card) error {
	if !allDigits(c.Number) || !Luhn(c.Number) {
		return invalid("card_number", "The card number is not valid: check it and try again.")
	}
	switch c.Number {
	case TestCardPays:
		return nil
	case TestCardDeclined:
		return fault.New(fault.CardDeclined, "Your card was declined. Try another card.")
	}
	return fault.New(fault.CardDeclined, "Your card was declined: this is a test checkout, which takes only the test cards (4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined).")
}

// errBadCharge is a charge no provider should be asked for: a bug of the
// caller, not the buyer's.
func errBadCharge(ch Charge) error {
	return fmt.Errorf("payment: charge of %d %q with idempotency key %q is not one to make", ch.AmountCents, ch.Currency, ch.IdempotencyKey)
}

// Refund refunds part or all of a sandbox charge, once per idempotency
// key; more than is left of the charge is refused. A refund's id follows
// from its idempotency key, as a charge's does.
func (s *Sandbox) Refund(ctx context.Context, r Refund) (string, error) {
	if err := s.wait(ctx); err != nil {
		return "", err
	}
	if r.IdempotencyKey == "" || r.AmountCents < 1 || len(r.Currency) != 3 || !strings.HasPrefix(r.ChargeID, "ch_test_") {
		return "", fmt.Errorf("payment: refund of %d %q of charge %q with idempotency key %q is not one to make",
			r.AmountCents, r.Currency, r.ChargeID, r.IdempotencyKey)
	}
	rf := models.SandboxRefund{ID: sandboxID("re_test_", "sandbox refund", r.IdempotencyKey), ChargeID: r.ChargeID,
		IdempotencyKey: r.IdempotencyKey, AmountCents: r.AmountCents, CreatedAt: time.Now().UTC()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var c models.SandboxCharge
		if err := models.ForUpdate(tx).Take(&c, "id = ?", r.ChargeID).Error; err != nil {
			return fmt.Errorf("sandbox refund: charge %s: %w", r.ChargeID, err)
		}
		made := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rf)
		if made.Error != nil || made.RowsAffected == 0 {
			return made.Error // made before: the same refund
		}
		if c.Currency != r.Currency || c.RefundedCents+r.AmountCents > c.AmountCents {
			return fmt.Errorf("payment: refund of %d %s of charge %s, of which %d of %d %s are refunded already, is refused",
				r.AmountCents, r.Currency, c.ID, c.RefundedCents, c.AmountCents, c.Currency)
		}
		return tx.Model(&c).Update("refunded_cents", gorm.Expr("refunded_cents + ?", r.AmountCents)).Error
	})
	if err != nil {
		return "", err
	}
	return rf.ID, nil
}

// Lookup finds the charge made with p's idempotency key.
func (s *Sandbox) Lookup(ctx context.Context, p models.Payment) (string, bool, error) {
	key := p.IdempotencyKey
	if err := s.wait(ctx); err != nil {
		return "", false, err
	}
	var c models.SandboxCharge
	res := s.db.WithContext(ctx).Select("id").Where("idempotency_key = ?", key).Limit(1).Find(&c)
	if res.Error != nil {
		return "", false, fmt.Errorf("sandbox lookup of %q: %w", key, res.Error)
	}
	return c.ID, res.RowsAffected == 1, nil
}

// wait is the sandbox's latency.
func (s *Sandbox) wait(ctx context.Context) error {
	if s.opts.Latency <= 0 {
		return nil
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sandboxID is the id of the sandbox's object of kind with key.
func sandboxID(prefix, kind, key string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + key))
	return prefix + hex.EncodeToString(sum[:12])
}
