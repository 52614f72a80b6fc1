package order

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// NewRefund is a partner's refund request (POST /refunds).
type NewRefund struct {
	OrderID     string `json:"order_id"`
	Reason      string `json:"reason"`
	AmountCents *int64 `json:"amount_cents"`
}

// RefundView is a refund as its partner sees it.
type RefundView struct {
	ID          string    `json:"id"`
	OrderID     string    `json:"order_id"`
	AmountCents int64     `json:"amount_cents"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason"`
	OrderStatus string    `json:"order_status"`
	CreatedAt   time.Time `json:"created_at"`
}

// refundable are the statuses a refund may still be made in: before the
// transfer completes (SPEC §3.1).
var refundable = map[string]bool{models.OrderExternallyPaid: true, models.OrderPaid: true, models.OrderTransferInProgress: true}

// Refund gives back all of the partner's order (amount_cents omitted) or
// part of it. A full refund makes the order REFUNDED, emits order.refunded
// and puts the name back on sale; a partial one keeps the status, adds to
// refunded_cents and emits order.partially_refunded; both events carry the
// order and the refund. After the transfer completed, or while a push of
// the name is in flight (it may be at the buyer's registrar already), it
// is a conflict.
func (s *Service) Refund(ctx context.Context, partnerID, env string, r NewRefund) (RefundView, error) {
	r.Reason = strings.TrimSpace(r.Reason)
	switch {
	case r.OrderID == "":
		return RefundView{}, fault.Invalid("order_id", "is required: the order's public_id")
	case len(r.OrderID) > 64:
		return RefundView{}, fault.Invalid("order_id", "is not an order's public_id")
	case r.Reason == "" || len(r.Reason) > 500:
		return RefundView{}, fault.Invalid("reason", "must be 1 to 500 characters")
	case r.AmountCents != nil && *r.AmountCents < 1:
		return RefundView{}, fault.Invalid("amount_cents", "must be a positive number of cents (omit it to refund the rest)")
	}
	var out RefundView
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB).Where("partner_id = ? AND environment = ?", partnerID, env), r.OrderID)
		if err != nil {
			return err
		}
		if !refundable[o.Status] {
			return fault.New(fault.Conflict, "order %s is %s: refunds are possible only before the transfer completes", o.PublicID, o.Status)
		}
		if o.Status == models.OrderTransferInProgress {
			push, err := findLastPush(tx.DB, o.PublicID)
			if err != nil {
				return err
			}
			if push.inFlight() {
				return errPushInFlight(o, push, "a refund")
			}
		}
		left := o.SalePriceCents - o.RefundedCents
		amount := left
		if r.AmountCents != nil {
			amount = *r.AmountCents
		}
		if amount > left {
			return fault.Invalid("amount_cents", "is more than the %d cents not refunded yet", left)
		}
		now := s.now().UTC()
		rf, err := addRefund(tx, &o, amount, r.Reason, ActorPartner, now)
		if err != nil {
			return err
		}
		if o.RefundedCents == o.SalePriceCents {
			o.Status = models.OrderRefunded
			if err := putBackOnSale(tx.DB, o.Environment, o.ListingID); err != nil {
				return fmt.Errorf("put %s back on sale: %w", o.Domain, err)
			}
		}
		if err := tx.Model(&models.Order{PublicID: o.PublicID}).Select("status", "refunded_cents", "updated_at").Updates(&o).Error; err != nil {
			return fmt.Errorf("refund order %s: %w", o.PublicID, err)
		}
		out = newRefundView(rf, o)
		note := fmt.Sprintf("refund of %d cents: %s", amount, rf.Reason)
		event := EventRefunded
		if o.Status != models.OrderRefunded {
			event = EventPartiallyRefunded
		}
		if err := s.record(tx, o, ActorPartner, event, note, map[string]any{"refund": out}); err != nil {
			return err
		}
		return idempotency.CarriedOut(ctx, tx.DB)
	})
	return out, err
}

// addRefund records a refund of amount on o by actor with its ledger
// lines, adding it to o's refunded_cents (the caller saves o). A hosted
// order's refund also gets its payment:refund task, which gives the money
// back to the buyer's card (ReturnToCard).
func addRefund(tx *outbox.Tx, o *models.Order, amount int64, reason, actor string, now time.Time) (models.Refund, error) {
	rf := models.Refund{ID: secret.NewID("rfd_"), OrderID: o.PublicID, AmountCents: amount, Currency: o.Currency,
		Reason: reason, Actor: actor, CreatedAt: now}
	if o.PaymentModel == models.PaymentHosted {
		rf.CardStatus = models.CardRefundPending
	}
	if err := tx.Create(&rf).Error; err != nil {
		return rf, fmt.Errorf("record refund of %s: %w", o.PublicID, err)
	}
	ref, referral := ledgerRef(*o, ledger.KindRefund), referralRef(*o)
	ref.RefundID, referral.RefundID = &rf.ID, &rf.ID
	err := ledger.PostAll(tx.DB, now,
		ledger.Txn{Ref: ref, Lines: ledger.Refund(o.PaymentModel, o.SalePriceCents, o.CommissionCents, o.RefundedCents, amount)},
		ledger.Txn{Ref: referral, Lines: ledger.ReferralRefund(o.SalePriceCents, o.ReferralCents, o.RefundedCents, amount)})
	if err != nil {
		return rf, err
	}
	if rf.CardStatus == models.CardRefundPending {
		tx.Add(tasks.PaymentRefundPayload{RefundID: rf.ID})
	}
	o.RefundedCents += amount
	o.UpdatedAt = now
	return rf, nil
}

func newRefundView(rf models.Refund, o models.Order) RefundView {
	return RefundView{ID: rf.ID, OrderID: o.PublicID, AmountCents: rf.AmountCents, Currency: rf.Currency, Reason: rf.Reason,
		OrderStatus: o.Status, CreatedAt: rf.CreatedAt.UTC()}
}
