package tasks

// TypeBulkRun applies the pending items of one bulk domain operation
// (models.BulkOp); a resumed run picks up where the last one stopped.
const TypeBulkRun = "bulk:run"

// BulkRunPayload names the bulk op; its items are in the database.
type BulkRunPayload struct {
	BulkOpID string `json:"bulk_op_id"`
}

// TaskType implements Payload.
func (BulkRunPayload) TaskType() string { return TypeBulkRun }

// TypeToolRun runs one async free-tool job (models.ToolJob).
const TypeToolRun = "tool:run"

// ToolRunPayload names the job; its tool and input are in its row.
type ToolRunPayload struct {
	JobID string `json:"job_id"`
}

// TaskType implements Payload.
func (ToolRunPayload) TaskType() string { return TypeToolRun }
