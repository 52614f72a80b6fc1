package order

import (
	"context"
	"errors"
	"fmt"
	"regexp"

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

// lastTransferStep is the order's latest transfer.* step, if any.
func lastTransferStep(tx *outbox.Tx, orderID string) (models.OrderStep, bool, error) {
	var st models.OrderStep
	res := tx.Where("order_id = ? AND event IN ?", orderID, []string{EventTransferRequested, EventTransferCompleted, EventTransferFailed}).
		Order("id DESC").Limit(1).Find(&st)
	return st, res.RowsAffected == 1, res.Error
}

// pushStep is a step of push p, found again by its PushID when the task
// is resumed.
func pushStep(p tasks.TransferPushPayload, event, text string) models.OrderStep {
	return models.OrderStep{Actor: ActorRegistry, Event: event, Note: fmt.Sprintf("push %d: %s", p.Push, text), PushID: &p.Push}
}

// Push runs the transfer:push task p with reg: it records
// transfer.requested, asks the registry, and records transfer.completed
// or, when the registry refuses or the last attempt fails,
// transfer.failed with the reason, leaving the order in
// TRANSFER_IN_PROGRESS for ops to retry. A push run again after a crash
// repeats nothing it recorded (the registry is given the same change id).
// An error is for asynq to retry.
func (s *Service) Push(ctx context.Context, p tasks.TransferPushPayload, reg registry.Provider, final bool) error {
	var o models.Order
	var requested, settled bool
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
			settled = settled || st.Event == EventTransferCompleted || st.Event == EventTransferFailed
		}
		if settled || requested || o.Status != models.OrderTransferInProgress {
			return nil
		}
		_, err = s.recordStep(tx, o, pushStep(p, EventTransferRequested, "to "+p.Recipient), transferData(p, ""))
		return err
	})
	if err != nil || settled || o.Status != models.OrderTransferInProgress {
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
		_, err := s.recordStep(tx, o, pushStep(p, event, text), transferData(p, reason))
		return err
	})
}

// transferData is the transfer block of a transfer.* event.
func transferData(p tasks.TransferPushPayload, reason string) map[string]any {
	t := map[string]any{"push": p.Push, "recipient": p.Recipient}
	if reason != "" {
		t["reason"] = reason
	}
	return map[string]any{"transfer": t}
}
