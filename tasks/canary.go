package tasks

// TypeCanaryRun runs an ops canary (models.Canary) through the worker.
const TypeCanaryRun = "canary:run"

// CanaryRunPayload names the canary to run; its shape lives in its row.
type CanaryRunPayload struct {
	CanaryID string `json:"canary_id"`
}

// TaskType implements Payload.
func (CanaryRunPayload) TaskType() string { return TypeCanaryRun }
