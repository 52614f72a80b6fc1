package tasks

import "github.com/hibiken/asynq"

// TypeBulkRun applies the pending items of one bulk domain operation
// (models.BulkOp); a resumed run picks up where the last one stopped.
const TypeBulkRun = "bulk:run"

// BulkRunPayload names the bulk op; its items are in the database.
type BulkRunPayload struct {
	BulkOpID string `json:"bulk_op_id"`
}

// NewBulkRunTask makes the task that runs bulk op id.
func NewBulkRunTask(id string) (*asynq.Task, error) {
	return newTask(TypeBulkRun, BulkRunPayload{BulkOpID: id})
}

// ParseBulkRun decodes the payload of a TypeBulkRun task.
func ParseBulkRun(t *asynq.Task) (BulkRunPayload, error) { return parse[BulkRunPayload](t) }

// TypeToolRun runs one async free-tool job (models.ToolJob).
const TypeToolRun = "tool:run"

// ToolRunPayload names the job; its tool and input are in its row.
type ToolRunPayload struct {
	JobID string `json:"job_id"`
}

// NewToolRunTask makes the task that runs job id.
func NewToolRunTask(id string) (*asynq.Task, error) {
	return newTask(TypeToolRun, ToolRunPayload{JobID: id})
}

// ParseToolRun decodes the payload of a TypeToolRun task.
func ParseToolRun(t *asynq.Task) (ToolRunPayload, error) { return parse[ToolRunPayload](t) }
