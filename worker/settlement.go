package worker

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/scheduler"
	"github.com/domaind/domaind/tasks"
)

// settlementRun carries out a settlement run; its last failed attempt
// marks the run failed, for finance to see and ask for again.
type settlementRun struct{ settlements *settlement.Service }

func (h *settlementRun) Work(ctx context.Context, p tasks.SettlementRunPayload) error {
	err := h.settlements.Run(ctx, p.RunID)
	if err != nil && lastAttempt(ctx) {
		if ferr := h.settlements.Fail(context.WithoutCancel(ctx), p.RunID, err); ferr != nil {
			return ferr
		}
	}
	return err
}

// settlementSchedule asks for the run of the period that had closed last
// when its scheduler's slot began (the slot is in the task's id; a task
// made otherwise asks for the period closed last now): a run that exists
// already is left as it is.
type settlementSchedule struct{ settlements *settlement.Service }

func (h *settlementSchedule) Work(ctx context.Context, _ tasks.SettlementSchedulePayload) error {
	at := time.Now()
	if id, ok := asynq.GetTaskID(ctx); ok {
		if slot, ok := scheduler.SlotOf(id); ok {
			at = slot
		}
	}
	_, err := h.settlements.RequestClosed(ctx, at)
	return err
}

// ledgerRollup rolls the ledger's closed days up (the scheduler's hourly
// slot task).
type ledgerRollup struct{ settlements *settlement.Service }

func (h *ledgerRollup) Work(ctx context.Context, _ tasks.LedgerRollupPayload) error {
	_, err := h.settlements.RollUp(ctx)
	return err
}
