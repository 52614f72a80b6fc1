package order

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// The transfer.* events: the steps of a push of a sold domain to the
// buyer's registrar (SPEC §6.2's family).
const (
	EventTransferRequested = "transfer.requested"
	EventTransferCompleted = "transfer.completed"
	EventTransferFailed    = "transfer.failed"
)

var recipientPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkRecipient validates the registrar a start-transfer pushes to.
func checkRecipient(recipient string) error {
	if !recipientPattern.MatchString(recipient) {
		return fault.Invalid("recipient", "must be the receiving registrar's handle at the registry: 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return nil
}

// pushInFlight returns the push of the order's latest start-transfer (the
// id of its step, as tasks.TransferPushPayload.Push) when that push has
// not failed: it is queued, under way or done, so the name may be at the
// buyer's registrar already and the order may be neither refunded nor
// cancelled, nor pushed again. An order no push was ever asked for has
// none. Callers hold the order's row lock, which start-transfer takes
// too, so the answer stands until they commit.
func pushInFlight(tx *gorm.DB, orderID string) (push int64, inFlight bool, err error) {
	var start models.OrderStep
	res := tx.Select("id").Where("order_id = ? AND event = ?", orderID, EventTransferStart).Order("id DESC").Limit(1).Find(&start)
	if res.Error != nil || res.RowsAffected == 0 {
		return 0, false, res.Error
	}
	var failed int64
	if err := tx.Model(&models.OrderStep{}).Where("push_id = ? AND event = ?", start.ID, EventTransferFailed).Count(&failed).Error; err != nil {
		return 0, false, fmt.Errorf("read push %d of %s: %w", start.ID, orderID, err)
	}
	return start.ID, failed == 0, nil
}

// errPushInFlight is the conflict of a refund, cancel or second push of
// an order whose push has not failed (pushInFlight).
func errPushInFlight(o models.Order, push int64, what string) error {
	return fault.New(fault.Conflict, "order %s has a transfer in flight (push %d to the buyer's registrar): %s is possible only after transfer.failed", o.PublicID, push, what)
}

// pushStep is a step of push p, found again by its PushID when the task
// is resumed.
func pushStep(p tasks.TransferPushPayload, event, text string) models.OrderStep {
	return models.OrderStep{Actor: ActorRegistry, Event: event, Note: fmt.Sprintf("push %d: %s", p.Push, text), PushID: &p.Push}
}

// Push runs the transfer:push task p with reg: it records
// transfer.requested, asks the registry, and records transfer.completed,
// which is delivery: the order becomes TRANSFER_COMPLETED with
// order.transfer_completed in the same transaction (unless ops confirmed
// a delivery by hand meanwhile). When the registry refuses, or the last
// attempt fails, it records transfer.failed with the reason, leaving the
// order in TRANSFER_IN_PROGRESS for ops to retry or cancel. A push run
// again after a crash repeats nothing it recorded (the registry is given
// the same change id), and one that had asked before its order moved on
// (ops confirmed a delivery by hand) still learns and records the
// registry's answer, so that the push ends. A push that finds its order
// moved on before it asked the registry is not made, and says so in the
// timeline, without an event. An error is for asynq to retry.
func (s *Service) Push(ctx context.Context, p tasks.TransferPushPayload, reg registry.Provider, final bool) error {
	var o models.Order
	var requested, settled, ask bool
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var err error
		if o, err = find(models.ForUpdate(tx.DB), p.OrderID); err != nil {
			return err
		}
		var steps []models.OrderStep
		if err := tx.Where("order_id = ? AND push_id = ?", o.PublicID, p.Push).Find(&steps).Error; err != nil {
			return fmt.Errorf("read the push's steps: %w", err)
		}
		for _, st := range steps {
			requested = requested || st.Event == EventTransferRequested
			settled = settled || st.Event != EventTransferRequested // completed, failed, or not made
		}
		switch {
		case settled:
			tasks.FoundDone(ctx)
			return nil
		case requested: // asked before a crash: ask again, under the same change id
			ask = true
			return nil
		case o.Status != models.OrderTransferInProgress: // delivered by hand (or refunded) before it ran
			_, err = s.recordStep(tx, o, pushStep(p, "", "not made: the order is "+o.Status), nil)
			return err
		}
		ask = true
		_, err = s.recordStep(tx, o, pushStep(p, EventTransferRequested, "to "+p.Recipient), transferData(p, ""))
		return err
	})
	if err != nil || !ask {
		return err
	}
	change := fmt.Sprintf("%s-push-%d", o.PublicID, p.Push)
	pushErr := reg.PushDomain(ctx, o.Domain, p.Recipient, change)
	if pushErr != nil && errors.Is(pushErr, registry.ErrTransient) && !final {
		return fmt.Errorf("push %s: %w", o.Domain, pushErr)
	}
	event, text, reason := EventTransferCompleted, "pushed to "+p.Recipient, ""
	if pushErr != nil {
		event, text, reason = EventTransferFailed, pushErr.Error(), pushErr.Error()
	}
	return s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB), p.OrderID)
		if err != nil {
			return err
		}
		var ended int64
		if err := tx.Model(&models.OrderStep{}).Where("push_id = ? AND event IN ?", p.Push, []string{EventTransferCompleted, EventTransferFailed}).
			Count(&ended).Error; err != nil {
			return fmt.Errorf("read the push's steps: %w", err)
		}
		if ended > 0 { // another run of the task recorded it first
			return nil
		}
		if _, err := s.recordStep(tx, o, pushStep(p, event, text), transferData(p, reason)); err != nil {
			return err
		}
		if pushErr != nil || o.Status != models.OrderTransferInProgress {
			return nil
		}
		return s.deliver(tx, o, ActorRegistry, "delivered: the registry confirmed the push to "+p.Recipient)
	})
}

// deliver moves o, locked in tx, from TRANSFER_IN_PROGRESS to
// TRANSFER_COMPLETED with a step of actor and order.transfer_completed:
// the settlement clock starts.
func (s *Service) deliver(tx *outbox.Tx, o models.Order, actor, note string) error {
	now := s.now().UTC()
	o.Status, o.TransferCompletedAt, o.UpdatedAt = models.OrderTransferCompleted, &now, now
	if err := tx.Model(&models.Order{PublicID: o.PublicID}).Select("status", "transfer_completed_at", "updated_at").Updates(&o).Error; err != nil {
		return fmt.Errorf("complete the transfer of %s: %w", o.PublicID, err)
	}
	return s.record(tx, o, actor, EventTransferDone, note, nil)
}

// transferData is the transfer block of a transfer.* event.
func transferData(p tasks.TransferPushPayload, reason string) map[string]any {
	t := map[string]any{"push": p.Push, "recipient": p.Recipient}
	if reason != "" {
		t["reason"] = reason
	}
	return map[string]any{"transfer": t}
}
