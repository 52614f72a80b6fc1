package order

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// ActorPayment is the payment provider, in a timeline.
const ActorPayment = "payment"

// ReturnToCard gives refund id of a hosted order back to the buyer's card
// through the provider of the order's environment, with the refund's id as
// the provider's idempotency key, so that running it again (a retry, a
// second delivery of its task) refunds the card once. It records on the
// refund and in the order's timeline that the money was sent; a refund
// sent already, or not pending, is left alone.
func (s *Service) ReturnToCard(ctx context.Context, providers map[string]payment.Provider, id string) error {
	rf, o, err := s.refundOf(ctx, id)
	if err != nil {
		return err
	}
	if rf.CardStatus != models.CardRefundPending {
		tasks.FoundDone(ctx)
		return nil
	}
	p := providers[o.Environment]
	if p == nil {
		return fmt.Errorf("refund %s: no payment provider takes %s payments", id, o.Environment)
	}
	refundID, err := p.Refund(ctx, payment.Refund{ChargeID: o.ExternalPaymentRef, AmountCents: rf.AmountCents, Currency: rf.Currency,
		IdempotencyKey: rf.ID, Since: rf.CreatedAt})
	if err != nil {
		return fmt.Errorf("refund %s to the card: %w", id, err)
	}
	note := fmt.Sprintf("refund %s: %d cents given back to the buyer's card (%s)", rf.ID, rf.AmountCents, refundID)
	err = s.settleCardRefund(ctx, o, rf.ID, map[string]any{"card_status": models.CardRefundSent, "card_refund_id": refundID, "card_error": ""}, note,
		func(tx *outbox.Tx) error {
			return payment.CardRefunded(tx.DB, o.PublicID, refundID, s.now().UTC())
		})
	if err != nil {
		return fmt.Errorf("refund %s went back to the card (%s): %w: %w", id, refundID, payment.ErrNotRecorded, err)
	}
	return nil
}

// FailCardRefund records that refund id could not be given back to the
// card (its task gave up), on the refund and in the order's timeline, for
// ops to see and pay back by hand.
func (s *Service) FailCardRefund(ctx context.Context, id string, why error) error {
	rf, o, err := s.refundOf(ctx, id)
	if err != nil {
		return err
	}
	text := models.ErrorText(why, 500)
	note := fmt.Sprintf("refund %s: giving %d cents back to the buyer's card failed; pay it back by hand (%s)", rf.ID, rf.AmountCents, text)
	return s.settleCardRefund(ctx, o, rf.ID, map[string]any{"card_status": models.CardRefundFailed, "card_error": text}, note, nil)
}

// refundOf returns refund id and its order.
func (s *Service) refundOf(ctx context.Context, id string) (models.Refund, models.Order, error) {
	var rf models.Refund
	err := s.db.WithContext(ctx).Take(&rf, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return rf, models.Order{}, fmt.Errorf("no refund %s", id)
	}
	if err != nil {
		return rf, models.Order{}, fmt.Errorf("find refund %s: %w", id, err)
	}
	o, err := find(s.db.WithContext(ctx), rf.OrderID)
	return rf, o, err
}

// settleCardRefund moves pending refund id of o to the state of changes,
// with a step of note and what also (when set) writes, unless it has left
// pending meanwhile. It holds the order's lock, as every change of the
// order does: the card refunds of one order settled at once then follow
// one another, each counting those before it on the payment
// (payment.CardRefunded), and the step names the order's status as it is.
func (s *Service) settleCardRefund(ctx context.Context, o models.Order, id string, changes map[string]any, note string, also func(*outbox.Tx) error) error {
	return s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB), o.PublicID)
		if err != nil {
			return err
		}
		res := tx.Model(&models.Refund{}).Where("id = ? AND card_status = ?", id, models.CardRefundPending).Updates(changes)
		if res.Error != nil {
			return fmt.Errorf("record the card refund of %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return nil // settled meanwhile by another run
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		return s.record(tx, o, ActorPayment, "", note, nil)
	})
}

// RefundsAwaitingOps is the condition of the refunds whose card refund
// failed (FailCardRefund) and that ops have not paid back by hand
// (RefundPaidByHand). Its partial index (idx_refunds_card_failed) holds
// just those.
const RefundsAwaitingOps = "refunds.card_status = '" + models.CardRefundFailed + "' AND refunds.paid_by_hand_at IS NULL"

// RetryCardRefund asks again for refund id to go back to the buyer's
// card, after it failed (FailCardRefund): ops found the processor working
// again, or a refund in its dashboard that may be this one. The refund is
// pending again with a new payment:refund task, which asks under the
// refund's own idempotency key, so a refund the processor made for it is
// found and recorded, not made twice. A refund whose card refund did not
// fail, or that ops paid back by hand, is a conflict. It returns the
// order as ops see it.
func (s *Service) RetryCardRefund(ctx context.Context, id string) (View, error) {
	return s.refundMove(ctx, id, func(tx *outbox.Tx, o models.Order, rf models.Refund) error {
		if rf.CardStatus != models.CardRefundFailed || rf.PaidByHandAt != nil {
			return fault.New(fault.Conflict, "refund %s has no failed card refund waiting for ops: nothing to retry", id)
		}
		err := tx.Model(&models.Refund{}).Where("id = ?", id).Updates(map[string]any{"card_status": models.CardRefundPending, "card_error": ""}).Error
		if err != nil {
			return fmt.Errorf("retry refund %s: %w", id, err)
		}
		tx.Add(tasks.PaymentRefundPayload{RefundID: id})
		return s.record(tx, o, ActorOps, "", fmt.Sprintf("refund %s: giving %d cents back to the buyer's card asked again", id, rf.AmountCents), nil)
	})
}

// RefundPaidByHand records that ops paid refund id back to the buyer by
// hand after its card refund failed (FailCardRefund), reference saying
// how (a bank transfer's reference, say): the refund keeps it, which
// takes it off the work awaiting ops, and the order's timeline says so.
// Recording it again with the same reference changes nothing; a refund
// whose card refund did not fail is a conflict. It returns the order as
// ops see it.
func (s *Service) RefundPaidByHand(ctx context.Context, id, reference string) (View, error) {
	reference = strings.TrimSpace(reference)
	if err := models.CheckReference(reference, "the refund"); err != nil {
		return View{}, err
	}
	return s.refundMove(ctx, id, func(tx *outbox.Tx, o models.Order, rf models.Refund) error {
		switch {
		case rf.PaidByHandAt != nil && rf.PaidByHandReference == reference:
			return nil
		case rf.PaidByHandAt != nil:
			return fault.New(fault.Conflict, "refund %s was already paid back by hand, with reference %q", id, rf.PaidByHandReference)
		case rf.CardStatus != models.CardRefundFailed:
			return fault.New(fault.Conflict, "refund %s has no failed card refund (its card status is %q): nothing to pay back by hand", id, rf.CardStatus)
		}
		err := tx.Model(&models.Refund{}).Where("id = ?", id).
			Updates(map[string]any{"paid_by_hand_at": s.now().UTC(), "paid_by_hand_reference": reference}).Error
		if err != nil {
			return fmt.Errorf("record refund %s paid by hand: %w", id, err)
		}
		note := fmt.Sprintf("refund %s: %d cents paid back to the buyer by hand (%s)", rf.ID, rf.AmountCents, reference)
		return s.record(tx, o, ActorOps, "", note, nil)
	})
}

// refundMove runs an ops move of refund id: move, in a transaction that
// holds the lock of the refund's order (as every change of the order
// does) and with the refund as read under it. It returns the order as
// ops see it after.
func (s *Service) refundMove(ctx context.Context, id string, move func(tx *outbox.Tx, o models.Order, rf models.Refund) error) (View, error) {
	var rf models.Refund
	if err := models.Found(s.db.WithContext(ctx).Take(&rf, "id = ?", id).Error, "refund "+id); err != nil {
		return View{}, err
	}
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB), rf.OrderID)
		if err != nil {
			return err
		}
		var locked models.Refund
		if err := models.Found(tx.Take(&locked, "id = ?", id).Error, "refund "+id); err != nil {
			return err
		}
		return move(tx, o, locked)
	})
	if err != nil {
		return View{}, err
	}
	return s.Ops(ctx, rf.OrderID)
}
