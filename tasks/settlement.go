package tasks

import "github.com/hibiken/asynq"

// TypeSettlementRun runs the settlement of one period
// (models.SettlementRun): it settles the period's completed orders in
// batches, and is resumed where it stopped when run again.
const TypeSettlementRun = "settlement:run"

// SettlementRunPayload names the run.
type SettlementRunPayload struct {
	RunID string `json:"run_id"`
}

// NewSettlementRunTask makes the task of run id.
func NewSettlementRunTask(id string) (*asynq.Task, error) {
	return newTask(TypeSettlementRun, SettlementRunPayload{RunID: id})
}

// ParseSettlementRun decodes the payload of a TypeSettlementRun task.
func ParseSettlementRun(t *asynq.Task) (SettlementRunPayload, error) {
	return parse[SettlementRunPayload](t)
}

// TypeSettlementSchedule asks for the run of the settlement period that
// closed last; the scheduler enqueues it shortly after each period ends.
const TypeSettlementSchedule = "settlement:schedule"

// NewSettlementScheduleTask makes the scheduler's settlement task.
func NewSettlementScheduleTask() *asynq.Task { return asynq.NewTask(TypeSettlementSchedule, nil) }

// TypeLedgerRollup adds up the ledger's sales and refunds of each closed
// day not rolled up yet, so that transaction totals over long spans read a
// row a day; the scheduler enqueues it every hour.
const TypeLedgerRollup = "ledger:rollup"

// NewLedgerRollupTask makes the scheduler's roll-up task.
func NewLedgerRollupTask() *asynq.Task { return asynq.NewTask(TypeLedgerRollup, nil) }
