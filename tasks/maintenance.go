package tasks

// Maintenance task types, enqueued by the scheduler.
const (
	// TypeOutboxSweep enqueues outbox entries whose fast-path enqueue did not happen.
	TypeOutboxSweep = "outbox:sweep"
	// TypeMaintenanceCleanup deletes rows past their retention.
	TypeMaintenanceCleanup = "maintenance:cleanup"
	// TypeJobsRescue gives stalled bulk ops and tool jobs a new task.
	TypeJobsRescue = "jobs:rescue"
)

// OutboxSweepPayload is the periodic outbox sweep's: it has no fields.
type OutboxSweepPayload struct{}

// TaskType implements Payload.
func (OutboxSweepPayload) TaskType() string { return TypeOutboxSweep }

// MaintenanceCleanupPayload is the periodic cleanup's: it has no fields.
type MaintenanceCleanupPayload struct{}

// TaskType implements Payload.
func (MaintenanceCleanupPayload) TaskType() string { return TypeMaintenanceCleanup }

// JobsRescuePayload is the periodic rescue of stalled work's: it has no
// fields.
type JobsRescuePayload struct{}

// TaskType implements Payload.
func (JobsRescuePayload) TaskType() string { return TypeJobsRescue }
