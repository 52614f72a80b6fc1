package tasks

// TypeSettlementRun runs the settlement of one period
// (models.SettlementRun): it settles the period's completed orders in
// batches, and is resumed where it stopped when run again.
const TypeSettlementRun = "settlement:run"

// SettlementRunPayload names the run.
type SettlementRunPayload struct {
	RunID string `json:"run_id"`
}

// TaskType implements Payload.
func (SettlementRunPayload) TaskType() string { return TypeSettlementRun }

// TypeSettlementSchedule asks for the run of the settlement period that
// closed last; the scheduler enqueues it shortly after each period ends.
const TypeSettlementSchedule = "settlement:schedule"

// SettlementSchedulePayload is the scheduler's settlement task's: it has
// no fields.
type SettlementSchedulePayload struct{}

// TaskType implements Payload.
func (SettlementSchedulePayload) TaskType() string { return TypeSettlementSchedule }

// TypeLedgerRollup adds up the ledger's sales and refunds of each closed
// day not rolled up yet, so that transaction totals over long spans read a
// row a day; the scheduler enqueues it every hour.
const TypeLedgerRollup = "ledger:rollup"

// LedgerRollupPayload is the roll-up's: it has no fields.
type LedgerRollupPayload struct{}

// TaskType implements Payload.
func (LedgerRollupPayload) TaskType() string { return TypeLedgerRollup }
