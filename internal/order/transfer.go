package order

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

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
	// EventTransferUnconfirmed ends a push whose outcome the registry
	// left unknown: it may have been made by an earlier request. The
	// push stays in flight until ops, having looked at the registry,
	// record fail-transfer or confirm-delivery.
	EventTransferUnconfirmed = "transfer.unconfirmed"
)

// pushEnds are the events that end a push's task.
var pushEnds = []string{EventTransferCompleted, EventTransferFailed, EventTransferUnconfirmed}

var recipientPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkRecipient validates the registrar a start-transfer pushes to.
func checkRecipient(recipient string) error {
	if !recipientPattern.MatchString(recipient) {
		return fault.Invalid("recipient", "must be the receiving registrar's handle at the registry: 1 to 64 letters, digits, '.', '_' or '-'")
	}
	return nil
}

// lastPush is the push of an order's latest start-transfer.
type lastPush struct {
	// id is the id of its step (tasks.TransferPushPayload.Push); 0 when
	// no push was ever asked for.
	id int64
	// recipient is the registrar it goes to ("" for a push asked for
	// before steps kept it).
	recipient string
	// failed says transfer.failed was recorded, by the registry's refusal
	// or by ops; unconfirmed that the registry left its outcome unknown.
	failed, unconfirmed bool
}

// inFlight says the push has not failed: it is queued, under way, done
// or unconfirmed, so the name may be at the buyer's registrar already
// and the order may be neither refunded nor cancelled, nor pushed again.
func (p lastPush) inFlight() bool { return p.id != 0 && !p.failed }

// findLastPush reads the order's latest push. Callers hold the order's
// row lock, which start-transfer takes too, so the answer stands until
// they commit.
func findLastPush(tx *gorm.DB, orderID string) (lastPush, error) {
	var start models.OrderStep
	res := tx.Select("id", "recipient").Where("order_id = ? AND event = ?", orderID, EventTransferStart).Order("id DESC").Limit(1).Find(&start)
	if res.Error != nil || res.RowsAffected == 0 {
		return lastPush{}, res.Error
	}
	var ends []string
	if err := tx.Model(&models.OrderStep{}).Where("push_id = ? AND event IN ?", start.ID, []string{EventTransferFailed, EventTransferUnconfirmed}).
		Pluck("event", &ends).Error; err != nil {
		return lastPush{}, fmt.Errorf("read push %d of %s: %w", start.ID, orderID, err)
	}
	return lastPush{id: start.ID, recipient: start.Recipient,
		failed: slices.Contains(ends, EventTransferFailed), unconfirmed: slices.Contains(ends, EventTransferUnconfirmed)}, nil
}

// UnconfirmedPushes scopes db to the orders waiting for ops to look at
// the registry: still TRANSFER_IN_PROGRESS (few, found by the index of
// the unsettled orders by status: the status is written into the SQL, so
// that a plan made once for any values, as a scrape's prepared statement
// gets, still proves the index's predicate), with a latest push the
// registry left unconfirmed and ops have not failed yet. That push's
// unconfirmed end is joined as "unconfirmed" (one step: a push's end is
// recorded once, under the order's lock).
func UnconfirmedPushes(db *gorm.DB) *gorm.DB {
	return db.Model(&models.Order{}).
		Joins(`JOIN order_steps unconfirmed ON unconfirmed.order_id = orders.public_id AND unconfirmed.event = ?
			AND unconfirmed.push_id = (SELECT max(s.id) FROM order_steps s WHERE s.order_id = orders.public_id AND s.event = ?)`,
			EventTransferUnconfirmed, EventTransferStart).
		Where("orders.status = '"+models.OrderTransferInProgress+"'").
		Where("NOT EXISTS (SELECT 1 FROM order_steps f WHERE f.push_id = unconfirmed.push_id AND f.event = ?)", EventTransferFailed)
}

// Unconfirmed returns which of the orders ids are waiting for ops to look
// at the registry (UnconfirmedPushes).
func (s *Service) Unconfirmed(ctx context.Context, ids []string) (map[string]bool, error) {
	var found []string
	if err := UnconfirmedPushes(s.db.WithContext(ctx)).Where("orders.public_id IN ?", ids).Pluck("orders.public_id", &found).Error; err != nil {
		return nil, fmt.Errorf("find unconfirmed pushes: %w", err)
	}
	out := make(map[string]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// errPushInFlight is the conflict of a refund, cancel or second push of
// an order whose push has not failed (lastPush.inFlight).
func errPushInFlight(o models.Order, p lastPush, what string) error {
	if p.unconfirmed {
		return fault.New(fault.Conflict, "order %s has a transfer whose outcome the registry left unknown (push %d): %s is possible only after ops check the registry and record fail-transfer", o.PublicID, p.id, what)
	}
	return fault.New(fault.Conflict, "order %s has a transfer in flight (push %d to the buyer's registrar): %s is possible only after transfer.failed", o.PublicID, p.id, what)
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
// a delivery by hand meanwhile). When the registry refuses the first
// request, it records transfer.failed with the reason, leaving the order
// in TRANSFER_IN_PROGRESS for ops to retry or cancel. When the answer
// leaves open whether the push was made (pushOutcome), it records
// transfer.unconfirmed instead, and the push stays in flight for ops.
// A push run again after a crash repeats nothing it recorded (the
// registry is given the same change id), and one that had asked before
// its order moved on (ops confirmed a delivery by hand) still learns and
// records the registry's answer, so that the push ends. A push that
// finds its order moved on before it asked the registry is not made,
// and says so in the timeline, without an event. An error is for asynq
// to retry.
func (s *Service) Push(ctx context.Context, p tasks.TransferPushPayload, reg registry.Provider, final bool) error {
	var o models.Order
	var requested, settled, ask, again bool
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
			settled = settled || st.Event != EventTransferRequested // completed, failed, unconfirmed, or not made
		}
		switch {
		case settled:
			tasks.FoundDone(ctx)
			return nil
		case requested: // asked before a crash or a failure: ask again, under the same change id
			ask, again = true, true
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
	event, reason := pushOutcome(pushErr, again, final)
	if event == "" {
		return fmt.Errorf("push %s: %w", o.Domain, pushErr)
	}
	text := reason
	if event == EventTransferCompleted {
		text = "pushed to " + p.Recipient
	}
	return s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		o, err := find(models.ForUpdate(tx.DB), p.OrderID)
		if err != nil {
			return err
		}
		var ends []string
		if err := tx.Model(&models.OrderStep{}).Where("push_id = ? AND event IN ?", p.Push, pushEnds).Pluck("event", &ends).Error; err != nil {
			return fmt.Errorf("read the push's steps: %w", err)
		}
		// Another run of the task recorded its end first. Only a success
		// is news after an unconfirmed end (a run that overlapped this
		// one was refused the repeat of this run's push): it delivers.
		if len(ends) > 0 && (event != EventTransferCompleted || !slices.Equal(ends, []string{EventTransferUnconfirmed})) {
			return nil
		}
		if _, err := s.recordStep(tx, o, pushStep(p, event, text), transferData(p, reason)); err != nil {
			return err
		}
		if event != EventTransferCompleted || o.Status != models.OrderTransferInProgress {
			return nil
		}
		return s.deliver(tx, o, ActorRegistry, "delivered: the registry confirmed the push to "+p.Recipient)
	})
}

// pushOutcome is the event that ends a push the registry answered with
// err, and the reason of a push that did not complete; no event when the
// task should try again (a failure a retry may fix, before the last
// attempt). again says an earlier run had asked already. Only the
// registry's refusal of the first request is transfer.failed. Any other
// end leaves the outcome unknown, transfer.unconfirmed for ops: the
// registry does not push a domain twice, and refuses the repeat of a
// push it made, so a refusal after an earlier request may be that
// repeat; and a request that got no answer, or an answer the provider
// could not make sense of, may have made the push.
func pushOutcome(err error, again, final bool) (event, reason string) {
	const check = ": ops check the registry, then record fail-transfer or confirm-delivery"
	transient, refused := errors.Is(err, registry.ErrTransient), errors.Is(err, registry.ErrPushRefused)
	switch {
	case err == nil:
		return EventTransferCompleted, ""
	case refused && !again:
		return EventTransferFailed, err.Error()
	case transient && !final:
		return "", ""
	case refused:
		return EventTransferUnconfirmed, "refused (" + err.Error() + "), but an earlier request of this push may have made it" + check
	case transient:
		return EventTransferUnconfirmed, "no answer by the last attempt (" + err.Error() + "), and a request may have made the push" + check
	}
	return EventTransferUnconfirmed, "the push may have been made (" + err.Error() + ")" + check
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
	t := map[string]any{"push": p.Push}
	if p.Recipient != "" {
		t["recipient"] = p.Recipient
	}
	if reason != "" {
		t["reason"] = reason
	}
	return map[string]any{"transfer": t}
}
