package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// ChargeTimeout bounds one call to the provider. A payment pending for
// PendingAfter without a touch has no call of ours under way any more: the
// reconciliation may ask the provider what became of it.
const (
	ChargeTimeout = 15 * time.Second
	PendingAfter  = 2 * ChargeTimeout
)

// Book is the payments of one database: every charge of the hosted
// checkout, from before the card is charged until the money is kept or
// given back. The checkout and the order rules write its rows inside their
// own transactions (Attempt, Paid, Declined, Unrecorded, CardRefunded);
// the Book's methods do what runs on its own: the reconciliation of
// payments whose answer was lost, the return of charges that paid for no
// order, and the list finance reads.
type Book struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	providers map[string]Provider
	secretKey []byte
	log       *slog.Logger
	now       func() time.Time
}

// NewBook returns the payments of db, charged through providers (by
// environment); secretKey seals list cursors.
func NewBook(db *gorm.DB, ob *outbox.Outbox, providers map[string]Provider, secretKey []byte, log *slog.Logger, now func() time.Time) *Book {
	return &Book{db: db, outbox: ob, providers: providers, secretKey: secretKey, log: log, now: now}
}

// NewAttempt is a charge about to be made for a checkout session.
type NewAttempt struct {
	Provider                          string
	SessionID, PartnerID, Environment string
	Domain                            string
	AmountCents                       int64
	Currency                          string
	// PendingOrder is what the order is recorded with when a processor
	// confirms a payment made on its page (models.Payment.PendingOrder).
	PendingOrder string
}

// Attempt returns the payment a charge for a.SessionID is made under, in
// tx, whose caller holds the session's row lock: the session's pending
// payment when it has one (another tab paying, or a retry after an answer
// that was lost: the same idempotency key charges once), touched so that
// the reconciliation leaves it alone, or else a new one, whose id is its
// idempotency key. A pending payment of another amount (the price moved
// since) is refused: its charge may have been taken.
func Attempt(tx *gorm.DB, a NewAttempt, now time.Time) (models.Payment, error) {
	var p models.Payment
	res := models.ForUpdate(tx).Where("session_id = ? AND status = ?", a.SessionID, models.PaymentPending).Limit(1).Find(&p)
	if res.Error != nil {
		return p, fmt.Errorf("find the pending payment of %s: %w", a.SessionID, res.Error)
	}
	if res.RowsAffected == 1 {
		if p.AmountCents != a.AmountCents || p.Currency != a.Currency || p.Provider != a.Provider {
			return p, ErrPendingElsewhere
		}
		p.UpdatedAt = now
		return p, tx.Model(&p).Update("updated_at", now).Error
	}
	id := secret.NewID("pay_")
	p = models.Payment{ID: id, Provider: a.Provider, SessionID: a.SessionID, PartnerID: a.PartnerID, Environment: a.Environment,
		Domain: a.Domain, IdempotencyKey: id, AmountCents: a.AmountCents, Currency: a.Currency, Status: models.PaymentPending,
		PendingOrder: a.PendingOrder, CreatedAt: now, UpdatedAt: now}
	if err := tx.Create(&p).Error; err != nil {
		return p, fmt.Errorf("record a payment of %s: %w", a.SessionID, err)
	}
	return p, nil
}

// ErrPendingElsewhere is an attempt to pay a session while a payment of
// another amount is pending on it.
var ErrPendingElsewhere = errors.New("payment: a payment of another amount is pending on this checkout")

// ErrNotPending is Paid's refusal of a payment the reconciliation settled
// first: its charge is not to pay for an order.
var ErrNotPending = errors.New("payment: the payment is no longer pending")

// ErrNotRecorded is the error of a refund the processor made whose record
// failed (the database, after the processor answered). The money is back
// on the card: the task must not be given up as a refund to pay by hand;
// its retry, or the rescue's after its last attempt, asks the processor
// again under the same idempotency key and records the same refund.
var ErrNotRecorded = errors.New("payment: the refund was made but not recorded")

// Paid records in tx that payment id was charged (chargeID) and paid for
// order orderID. The payment must still be pending (ErrNotPending).
func Paid(tx *gorm.DB, id, chargeID, last4, orderID string, now time.Time) error {
	res := tx.Model(&models.Payment{}).Where("id = ? AND status = ?", id, models.PaymentPending).
		Updates(map[string]any{"status": models.PaymentSucceeded, "charge_id": chargeID, "card_last4": last4, "order_id": orderID, "updated_at": now})
	if res.Error != nil {
		return fmt.Errorf("record payment %s: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return ErrNotPending
	}
	return nil
}

// Declined records that the provider refused payment id, with why, and
// reports whether it did: a payment no longer pending is left alone.
func Declined(db *gorm.DB, id, why string, now time.Time) (bool, error) {
	res := db.Model(&models.Payment{}).Where("id = ? AND status = ?", id, models.PaymentPending).
		Updates(map[string]any{"status": models.PaymentFailed, "note": models.Cut(why, 500), "updated_at": now})
	if res.Error != nil {
		return false, fmt.Errorf("record the decline of payment %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Charged is a charge the processor took for a payment.
type Charged struct {
	ChargeID, CardLast4 string
	// AmountCents and Currency, when set, are what the processor says it
	// took, where that is not what the payment asked for.
	AmountCents int64
	Currency    string
}

// Unrecorded records in tx that payment id was charged (c) but paid for
// no order, because of why, and queues the return of the whole charge
// (payment:return) in the same transaction. A payment that paid an order,
// or whose return is queued already, is left alone.
func Unrecorded(tx *outbox.Tx, id string, c Charged, why string, now time.Time) error {
	changes := map[string]any{"status": models.PaymentSucceeded, "charge_id": c.ChargeID, "card_last4": c.CardLast4,
		"note": models.Cut("no order: "+why+"; the charge is refunded in full", 500), "updated_at": now}
	if c.AmountCents > 0 {
		changes["amount_cents"], changes["currency"] = c.AmountCents, c.Currency
	}
	res := tx.Model(&models.Payment{}).Where("id = ? AND order_id IS NULL AND status IN ?", id, []string{models.PaymentPending, models.PaymentFailed}).
		Updates(changes)
	if res.Error != nil {
		return fmt.Errorf("record the charge of payment %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil
	}
	tx.Add(tasks.PaymentReturnPayload{PaymentID: id})
	return nil
}

// CardRefunded records in tx that a refund of order orderID went back to
// the card (the provider's refundID): the payment counts as refunded what
// the order's refunds sent to the card add up to (the refund just marked
// sent included), or what the processor's notices said if that is more
// (ChargeRefunded; a refund made in its dashboard). Counting the sum, not
// adding this refund to it, keeps a refund the processor's notice
// recorded first from being counted twice.
func CardRefunded(tx *gorm.DB, orderID, refundID string, now time.Time) error {
	sent := tx.Session(&gorm.Session{NewDB: true}).Model(&models.Refund{}).Select("COALESCE(SUM(amount_cents), 0)").
		Where("order_id = ? AND card_status = ?", orderID, models.CardRefundSent)
	err := tx.Model(&models.Payment{}).Where("order_id = ?", orderID).Updates(map[string]any{
		"refunded_cents": gorm.Expr("CASE WHEN refunded_cents < (?) THEN (?) ELSE refunded_cents END", sent, sent),
		"status": gorm.Expr("CASE WHEN (?) >= amount_cents OR refunded_cents >= amount_cents THEN ? ELSE ? END", sent,
			models.PaymentRefunded, models.PaymentPartiallyRefunded),
		"refund_id": refundID, "updated_at": now}).Error
	if err != nil {
		return fmt.Errorf("record the card refund of order %s: %w", orderID, err)
	}
	return nil
}

// ToReturn is the condition, with ReturnStatuses as its one argument, of
// the payments whose charge paid for no order (Unrecorded) and is not all
// back on the card yet, nor given up for ops (FailReturn): Return gives
// back what is left of it.
const ToReturn = "status IN ? AND order_id IS NULL AND charge_id IS NOT NULL AND return_given_up_at IS NULL"

// ReturnStatuses are the statuses ToReturn takes: a charge not refunded
// at all, or in part (the processor's notice of a refund made in its
// dashboard, ChargeRefunded).
var ReturnStatuses = []string{models.PaymentSucceeded, models.PaymentPartiallyRefunded}

// Return gives back what is left of the charge of payment id, which paid
// for no order (Unrecorded), through its provider, with an idempotency key
// of its own, so that running it again refunds once. A payment returned
// already, or one that paid an order, is left alone. An error is for the
// task to retry.
func (b *Book) Return(ctx context.Context, id string) error {
	var p models.Payment
	if err := b.db.WithContext(ctx).Take(&p, "id = ?", id).Error; err != nil {
		return fmt.Errorf("find payment %s: %w", id, err)
	}
	if p.Status == models.PaymentRefunded {
		tasks.FoundDone(ctx)
	}
	left := p.AmountCents - p.RefundedCents
	if !slices.Contains(ReturnStatuses, p.Status) || p.OrderID != nil || p.ChargeID == nil || p.ReturnGivenUpAt != nil || left <= 0 {
		return nil
	}
	provider, err := b.provider(p)
	if err != nil {
		return err
	}
	// The key names what is left when a part came back first: asked again
	// with the same key, a processor answers the first request, and
	// refuses one of another amount.
	key := p.ID + "-return"
	if left != p.AmountCents {
		key += "-" + strconv.FormatInt(left, 10)
	}
	refundID, err := provider.Refund(ctx, Refund{ChargeID: *p.ChargeID, AmountCents: left,
		Currency: p.Currency, IdempotencyKey: key, Since: p.CreatedAt})
	if err != nil {
		return fmt.Errorf("return payment %s: %w", id, err)
	}
	err = b.db.WithContext(ctx).Model(&models.Payment{}).Where("id = ? AND "+ToReturn, id, ReturnStatuses).
		Updates(map[string]any{"status": models.PaymentRefunded, "refunded_cents": p.AmountCents, "refund_id": refundID, "updated_at": b.now().UTC()}).Error
	if err != nil {
		return fmt.Errorf("record the return of payment %s (%s): %w: %w", id, refundID, ErrNotRecorded, err)
	}
	return nil
}

// FailReturn notes on payment id that its return failed for good (why), for
// ops to pay it back by hand, and gives the return up: nothing runs it
// again (ToReturn), which could pay the buyer back a second time.
func (b *Book) FailReturn(ctx context.Context, id string, why error) error {
	note := models.Cut("no order, and giving the charge back failed: pay it back by hand ("+models.ErrorText(why, 300)+")", 500)
	now := b.now().UTC()
	err := b.db.WithContext(ctx).Model(&models.Payment{}).Where("id = ? AND "+ToReturn, id, ReturnStatuses).
		Updates(map[string]any{"note": note, "return_given_up_at": now, "updated_at": now}).Error
	if err != nil {
		return fmt.Errorf("record the failed return of payment %s: %w", id, err)
	}
	return nil
}

// Reconcile settles up to limit payments left pending for PendingAfter (a
// crash or a lost answer between the charge and its record), asking each
// one's provider whether it charged: a charge found is recorded and
// returned (Unrecorded: a pending payment has no order), a charge not
// found makes the payment failed. It returns how many it settled; a
// provider that does not answer leaves its payments for the next run.
func (b *Book) Reconcile(ctx context.Context, limit int) (int, error) {
	var stale []models.Payment
	cutoff := b.now().UTC().Add(-PendingAfter)
	if err := b.db.WithContext(ctx).Where("status = ? AND updated_at < ?", models.PaymentPending, cutoff).
		Order("updated_at").Limit(limit).Find(&stale).Error; err != nil {
		return 0, fmt.Errorf("find pending payments: %w", err)
	}
	settled := 0
	var errs []error
	for _, p := range stale {
		ok, err := b.reconcile(ctx, p, cutoff)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			settled++
		}
	}
	return settled, errors.Join(errs...)
}

// reconcile settles pending payment p, unless it was settled or touched
// (its updated_at past cutoff) since it was read.
func (b *Book) reconcile(ctx context.Context, p models.Payment, cutoff time.Time) (bool, error) {
	provider, err := b.provider(p)
	if err != nil {
		return false, err
	}
	if pr, ok := provider.(Redirector); ok && p.ProviderRef != "" {
		return b.reconcilePage(ctx, pr, p, cutoff)
	}
	lctx, cancel := context.WithTimeout(ctx, ChargeTimeout)
	chargeID, found, err := provider.Lookup(lctx, p)
	cancel()
	if err != nil {
		return false, fmt.Errorf("look up payment %s at %s: %w", p.ID, p.Provider, err)
	}
	settled := false
	err = b.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var still models.Payment
		res := models.ForUpdate(tx.DB).Where("id = ? AND status = ? AND updated_at < ?", p.ID, models.PaymentPending, cutoff).Limit(1).Find(&still)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // settled or touched meanwhile
		}
		settled = true
		at := b.now().UTC()
		if found {
			b.log.WarnContext(ctx, "a charge without its record: returning it", "payment", p.ID, "charge", chargeID, "session", p.SessionID)
			return Unrecorded(tx, p.ID, Charged{ChargeID: chargeID}, "the charge's answer was lost before its order was recorded", at)
		}
		return tx.Model(&models.Payment{}).Where("id = ?", p.ID).Updates(map[string]any{"status": models.PaymentFailed,
			"note": "no charge was taken: the payment was abandoned before the processor charged it", "updated_at": at}).Error
	})
	return settled, err
}

// reconcilePage asks the processor what became of pending payment p,
// made on its page, whose notice is late: a page done with is acted on as
// its notice would be (Receive queues the same task, once per outcome), and
// one the buyer may still pay on is left for a later run, touched so that
// the next runs ask about others first.
func (b *Book) reconcilePage(ctx context.Context, pr Redirector, p models.Payment, cutoff time.Time) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, ChargeTimeout)
	ev, err := pr.Check(cctx, p.ProviderRef)
	cancel()
	if err != nil {
		return false, fmt.Errorf("check payment %s at %s: %w", p.ID, p.Provider, err)
	}
	if ev.Kind == "" {
		err := b.db.WithContext(ctx).Model(&models.Payment{}).Where("id = ? AND status = ? AND updated_at < ?", p.ID, models.PaymentPending, cutoff).
			Update("updated_at", b.now().UTC()).Error
		return false, err
	}
	ev.ID, ev.PaymentID = "check-"+ev.Kind+"-"+p.ProviderRef, p.ID
	if _, err := b.Receive(ctx, pr.Name(), ev); err != nil {
		return false, err
	}
	b.log.WarnContext(ctx, "a payment page's notice is late: acting on what the processor says", "payment", p.ID, "page", p.ProviderRef, "kind", ev.Kind)
	return true, nil
}

// provider is p's provider, if this deployment has it.
func (b *Book) provider(p models.Payment) (Provider, error) {
	provider := b.providers[p.Environment]
	if provider == nil || provider.Name() != p.Provider {
		return nil, fmt.Errorf("payment %s: no %s provider for %s payments here", p.ID, p.Provider, p.Environment)
	}
	return provider, nil
}
