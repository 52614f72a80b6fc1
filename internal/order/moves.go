package order

import (
	"context"
	"fmt"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Action is something ops do to an order.
type Action string

// The ops actions (POST /api/ops/orders/{public_id}/{action}).
const (
	ClearReview     Action = "clear-review"
	StartTransfer   Action = "start-transfer"
	ConfirmDelivery Action = "confirm-delivery"
	// FailTransfer records transfer.failed for a push the registry left
	// unconfirmed, once ops found at the registry that it was not made.
	FailTransfer Action = "fail-transfer"
	Cancel       Action = "cancel"
)

// AllActions are the actions, in the order of an order's life.
var AllActions = []Action{ClearReview, StartTransfer, ConfirmDelivery, FailTransfer, Cancel}

// move is where an action takes an order, and the event it emits.
type move struct {
	to    string
	event string
}

// Moves is every move an order can make: status × action → status and
// event. A pair not listed is refused as a conflict naming the status.
// Beside the table, manual review: clear-review needs a held order, and
// start-transfer one that is not held; start-transfer and cancel from
// TRANSFER_IN_PROGRESS need the push to have failed (lastPush.inFlight):
// a push that succeeds completes the transfer itself, and
// confirm-delivery is for transfers done by hand, or found done at the
// registry; and fail-transfer needs a push left unconfirmed.
var Moves = map[string]map[Action]move{
	models.OrderExternallyPaid: {
		ClearReview:   {models.OrderExternallyPaid, EventReviewCleared},
		StartTransfer: {models.OrderTransferInProgress, EventTransferStart},
		Cancel:        {models.OrderCancelled, EventRefunded},
	},
	models.OrderPaid: {
		ClearReview:   {models.OrderPaid, EventReviewCleared},
		StartTransfer: {models.OrderTransferInProgress, EventTransferStart},
		Cancel:        {models.OrderCancelled, EventRefunded},
	},
	models.OrderTransferInProgress: {
		StartTransfer:   {models.OrderTransferInProgress, EventTransferStart}, // again, after a failed push
		ConfirmDelivery: {models.OrderTransferCompleted, EventTransferDone},
		FailTransfer:    {models.OrderTransferInProgress, EventTransferFailed},
		Cancel:          {models.OrderCancelled, EventRefunded},
	},
}

// MoveInput is what an action takes besides the order.
type MoveInput struct {
	// Recipient is the registrar start-transfer pushes the domain to.
	Recipient string `json:"recipient"`
}

// Move applies action to the order as ops, writing the order, its step and
// its event together. A cancel refunds what is left of the order (a refund
// by ops) and puts the name back on sale; start-transfer queues the push
// of the domain to in.Recipient (transfer:push, in the same transaction).
// While a push is in flight, a cancel or another start-transfer is a
// conflict naming it; fail-transfer is taken only for a push the registry
// left unconfirmed (transfer.unconfirmed), and ends it as failed.
func (s *Service) Move(ctx context.Context, publicID string, action Action, in MoveInput) (View, error) {
	if action == StartTransfer {
		if err := checkRecipient(in.Recipient); err != nil {
			return View{}, err
		}
	}
	var v View
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB), publicID)
		if err != nil {
			return err
		}
		var push lastPush
		m, ok := Moves[o.Status][action]
		switch {
		case !ok:
			return fault.New(fault.Conflict, "order %s is %s: %s is not allowed from there", o.PublicID, o.Status, action)
		case action == ClearReview && o.Review != models.ReviewPending:
			return fault.New(fault.Conflict, "order %s is not held for review", o.PublicID)
		case action == StartTransfer && o.Review == models.ReviewPending:
			return fault.New(fault.Conflict, "order %s is held for manual review: clear-review first", o.PublicID)
		case o.Status == models.OrderTransferInProgress && action != ConfirmDelivery:
			if push, err = findLastPush(tx.DB, o.PublicID); err != nil {
				return err
			}
			if err := pushAllows(o, push, action); err != nil {
				return err
			}
		}
		now := s.now().UTC()
		o.Status, o.UpdatedAt = m.to, now
		step := models.OrderStep{Actor: ActorOps, Event: m.event, Note: string(action)}
		var extra map[string]any
		switch action {
		case ClearReview:
			o.Review = models.ReviewCleared
		case StartTransfer:
			step.Recipient = in.Recipient
			extra = map[string]any{"transfer": map[string]any{"recipient": in.Recipient}}
		case FailTransfer:
			p := tasks.TransferPushPayload{OrderID: o.PublicID, Push: push.id, Recipient: push.recipient}
			const reason = "ops found at the registry that the push was not made"
			step = pushStep(p, m.event, reason)
			step.Actor = ActorOps
			extra = transferData(p, reason)
		case ConfirmDelivery:
			o.TransferCompletedAt = &now
		case Cancel: // the rest of the money goes back, and the name on sale
			if left := o.SalePriceCents - o.RefundedCents; left > 0 {
				rf, err := addRefund(tx, &o, left, "order cancelled by ops", ActorOps, now)
				if err != nil {
					return err
				}
				extra = map[string]any{"refund": newRefundView(rf, o)}
			}
			if err := putBackOnSale(tx.DB, o.Environment, o.ListingID); err != nil {
				return fmt.Errorf("put %s back on sale: %w", o.Domain, err)
			}
		}
		if err := tx.Model(&models.Order{PublicID: o.PublicID}).
			Select("status", "review", "refunded_cents", "transfer_completed_at", "updated_at").Updates(&o).Error; err != nil {
			return fmt.Errorf("move order %s: %w", o.PublicID, err)
		}
		stepID, err := s.recordStep(tx, o, step, extra)
		if err != nil {
			return err
		}
		if action == StartTransfer {
			tx.Add(tasks.TransferPushPayload{OrderID: o.PublicID, Push: stepID, Recipient: in.Recipient})
		}
		// Read in the transaction: a move that cannot answer is not made,
		// so a retry of it is the only one.
		v, err = withTimeline(tx.DB, newView(o))
		return err
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// pushAllows refuses action on o, in TRANSFER_IN_PROGRESS with its last
// push p, unless p allows it: start-transfer and cancel need p failed,
// fail-transfer needs p unconfirmed and not failed yet.
func pushAllows(o models.Order, p lastPush, action Action) error {
	switch {
	case action == FailTransfer && p.failed:
		return fault.New(fault.Conflict, "order %s: push %d has failed already", o.PublicID, p.id)
	case action == FailTransfer && !p.unconfirmed:
		return fault.New(fault.Conflict, "order %s has no push the registry left unconfirmed: fail-transfer is only for one", o.PublicID)
	case action != FailTransfer && p.inFlight():
		return errPushInFlight(o, p, string(action))
	case action == StartTransfer && p.id == 0:
		return fault.New(fault.Conflict, "order %s is %s without a push of ours: confirm-delivery or cancel it", o.PublicID, o.Status)
	}
	return nil
}

// Actions lists what ops may try on an order in status with review, in
// the order of an order's life; fail-transfer only when its latest push
// is unconfirmed (Service.Unconfirmed). Start-transfer and cancel on a
// transfer in progress are listed, and refused while its push is in
// flight.
func Actions(status, review string, unconfirmed bool) []Action {
	var out []Action
	for _, a := range AllActions {
		if _, ok := Moves[status][a]; !ok || (a == FailTransfer && !unconfirmed) ||
			(a == ClearReview && review != models.ReviewPending) || (a == StartTransfer && review == models.ReviewPending) {
			continue
		}
		out = append(out, a)
	}
	return out
}
