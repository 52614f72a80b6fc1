package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Event kinds: what a processor's notice says happened to a payment made
// on its page.
const (
	// EventPaid: the buyer paid (the charge is taken).
	EventPaid = "paid"
	// EventExpired: the page closed without a payment, for good.
	EventExpired = "expired"
	// EventFailed: a card was refused on the page; the buyer may try
	// another while it is open.
	EventFailed = "failed"
	// EventRefunded: money went back to the card (ours, or a refund made
	// in the processor's dashboard).
	EventRefunded = "refunded"
)

// Event is a processor's notice about a payment, as the service acts on
// it. A notice of a kind the service does not act on has no Kind.
type Event struct {
	// ID is the processor's id of the notice, Type its name for it.
	ID   string `json:"id"`
	Type string `json:"type"`
	Kind string `json:"kind"`
	// PaymentID is ours, as the page was opened with (paid, expired,
	// failed); Ref the processor's id of the page.
	PaymentID string `json:"payment_id,omitempty"`
	Ref       string `json:"ref,omitempty"`
	// ChargeID is what refunds of the payment name (a Stripe
	// PaymentIntent's id).
	ChargeID    string `json:"charge_id,omitempty"`
	AmountCents int64  `json:"amount_cents,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// RefundedCents is all that was refunded of the charge (refunded).
	RefundedCents int64 `json:"refunded_cents,omitempty"`
	// Message is why a card was refused (failed).
	Message string `json:"message,omitempty"`
}

// Notifier is a provider whose notices come signed (webhooks).
type Notifier interface {
	// ParseEvent checks that payload carries the processor's signature
	// (ErrBadSignature if not) and reads it.
	ParseEvent(payload []byte, signature string) (Event, error)
}

// ErrBadSignature is a notice whose signature is missing, wrong, or too
// old to be trusted.
var ErrBadSignature = errors.New("payment: the notice is not signed by the processor")

// Receive keeps provider's notice ev, once per event id, and queues its
// task (payment:event) in the same transaction. It reports whether the
// notice is new: one received before changes nothing.
func (b *Book) Receive(ctx context.Context, provider string, ev Event) (bool, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode %s event %s: %w", provider, ev.ID, err)
	}
	row := models.PaymentEvent{ID: provider + ":" + ev.ID, Provider: provider, Kind: ev.Kind, Type: models.Cut(ev.Type, 80),
		PaymentID: models.Cut(ev.PaymentID, 40), Body: string(body), ReceivedAt: b.now().UTC()}
	fresh := false
	err = b.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		fresh = true
		tx.Add(tasks.PaymentEventPayload{EventID: row.ID})
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("keep %s event %s: %w", provider, ev.ID, err)
	}
	return fresh, nil
}

// Event returns the notice kept as id, and whether it was acted on.
func (b *Book) Event(ctx context.Context, id string) (Event, bool, error) {
	var row models.PaymentEvent
	if err := b.db.WithContext(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return Event{}, false, fmt.Errorf("find payment event %s: %w", id, err)
	}
	var ev Event
	if err := json.Unmarshal([]byte(row.Body), &ev); err != nil {
		return Event{}, false, fmt.Errorf("read payment event %s: %w", id, err)
	}
	return ev, row.DoneAt != nil, nil
}

// EventDone records that notice id was acted on, with what was done.
func (b *Book) EventDone(ctx context.Context, id, note string) error {
	err := b.db.WithContext(ctx).Model(&models.PaymentEvent{}).Where("id = ?", id).
		Updates(map[string]any{"done_at": b.now().UTC(), "note": models.Cut(note, 500)}).Error
	if err != nil {
		return fmt.Errorf("record payment event %s done: %w", id, err)
	}
	return nil
}

// Redirected records page r as the one payment id is paid on, with when
// it closes, and returns it; unless another page was recorded first (a
// tab racing this one, whose request the processor answered with
// another page), which is returned instead: every tab's buyer pays on the
// one page recorded, the page whose notices are acted on.
func Redirected(db *gorm.DB, id string, r Redirection, now time.Time) (Redirection, error) {
	res := db.Model(&models.Payment{}).Where("id = ? AND provider_ref IN ?", id, []string{"", r.Ref}).Updates(map[string]any{
		"provider_ref": r.Ref, "redirect_url": r.URL, "page_expires_at": r.ExpiresAt.UTC().Truncate(time.Second), "updated_at": now})
	if res.Error != nil {
		return r, fmt.Errorf("record the page of payment %s: %w", id, res.Error)
	}
	if res.RowsAffected == 1 {
		return r, nil
	}
	var p models.Payment
	if err := db.Select("provider_ref", "redirect_url", "page_expires_at").Take(&p, "id = ?", id).Error; err != nil {
		return r, fmt.Errorf("read the page of payment %s: %w", id, err)
	}
	recorded := Redirection{Ref: p.ProviderRef, URL: p.RedirectURL}
	if p.PageExpiresAt != nil {
		recorded.ExpiresAt = p.PageExpiresAt.UTC()
	}
	return recorded, nil
}

// PageExpiry returns when the page of payment id is to close, as every
// request for it must say: the time stored with the payment, set to next
// when it had none (was nil) or when it still is was, the time the
// processor refused (ErrExpiryRefused). Callers racing to set it get the
// one that was stored first.
func PageExpiry(db *gorm.DB, id string, was *time.Time, next time.Time) (time.Time, error) {
	q := db.Model(&models.Payment{}).Where("id = ?", id)
	if was == nil {
		q = q.Where("page_expires_at IS NULL")
	} else {
		q = q.Where("page_expires_at = ?", was.UTC().Truncate(time.Second)) // as it was stored (SQLite compares text)
	}
	if err := q.Update("page_expires_at", next.UTC().Truncate(time.Second)).Error; err != nil {
		return time.Time{}, fmt.Errorf("set when the page of payment %s closes: %w", id, err)
	}
	var p models.Payment
	if err := db.Select("page_expires_at").Take(&p, "id = ?", id).Error; err != nil {
		return time.Time{}, fmt.Errorf("read when the page of payment %s closes: %w", id, err)
	}
	if p.PageExpiresAt == nil {
		return time.Time{}, fmt.Errorf("payment %s has no closing time for its page after it was set", id)
	}
	return p.PageExpiresAt.UTC(), nil
}

// Noted adds why to pending payment id's note, leaving it pending (a card
// refused on the processor's page, where the buyer may try another).
func Noted(db *gorm.DB, id, why string, now time.Time) error {
	err := db.Model(&models.Payment{}).Where("id = ? AND status = ?", id, models.PaymentPending).
		Updates(map[string]any{"note": models.Cut(why, 500), "updated_at": now}).Error
	if err != nil {
		return fmt.Errorf("note on payment %s: %w", id, err)
	}
	return nil
}

// PaidTwiceNote ends the note of a payment the processor refunded after
// ops paid it back by hand (ChargeRefunded).
const PaidTwiceNote = "; the processor refunded it too after it was paid back by hand: the buyer was paid twice, recover one"

// ChargeRefunded records that refunded cents in all of charge chargeID
// went back to the card, as the processor counts them: refunds of ours
// (recorded when they were made, or to be: CardRefunded counts them
// without adding to this) or ones made in the processor's dashboard. It never lowers what a payment counts as refunded, and
// reports whether a payment has the charge.
func ChargeRefunded(db *gorm.DB, chargeID string, refunded int64, now time.Time) (bool, error) {
	// A charge ops paid back by hand that the processor now refunds too
	// has paid the buyer twice: its note says so, for ops to recover one.
	err := db.Model(&models.Payment{}).Where("charge_id = ? AND paid_by_hand_at IS NOT NULL AND refunded_cents < ?", chargeID, refunded).
		Update("note", gorm.Expr("substr(note || ?, 1, 500)", PaidTwiceNote)).Error
	if err != nil {
		return false, fmt.Errorf("note the refunds of charge %s: %w", chargeID, err)
	}
	res := db.Model(&models.Payment{}).Where("charge_id = ? AND status IN ?", chargeID,
		[]string{models.PaymentSucceeded, models.PaymentPartiallyRefunded, models.PaymentRefunded}).Updates(map[string]any{
		"refunded_cents": gorm.Expr("CASE WHEN refunded_cents < ? THEN ? ELSE refunded_cents END", refunded, refunded),
		"status": gorm.Expr("CASE WHEN ? >= amount_cents OR refunded_cents >= amount_cents THEN ? ELSE ? END", refunded,
			models.PaymentRefunded, models.PaymentPartiallyRefunded),
		"updated_at": now})
	if res.Error != nil {
		return false, fmt.Errorf("record the refunds of charge %s: %w", chargeID, res.Error)
	}
	return res.RowsAffected > 0, nil
}
