package tasks

import "github.com/hibiken/asynq"

// Maintenance task types, enqueued by the scheduler.
const (
	// TypeOutboxSweep enqueues outbox entries whose fast-path enqueue did not happen.
	TypeOutboxSweep = "outbox:sweep"
	// TypeMaintenanceCleanup deletes rows past their retention.
	TypeMaintenanceCleanup = "maintenance:cleanup"
	// TypeJobsRescue gives stalled bulk ops and tool jobs a new task.
	TypeJobsRescue = "jobs:rescue"
)

// NewOutboxSweepTask makes the periodic outbox sweep. It has no payload.
func NewOutboxSweepTask() *asynq.Task { return asynq.NewTask(TypeOutboxSweep, nil) }

// NewMaintenanceCleanupTask makes the periodic cleanup. It has no payload.
func NewMaintenanceCleanupTask() *asynq.Task { return asynq.NewTask(TypeMaintenanceCleanup, nil) }

// NewJobsRescueTask makes the periodic rescue of stalled work. It has no payload.
func NewJobsRescueTask() *asynq.Task { return asynq.NewTask(TypeJobsRescue, nil) }
