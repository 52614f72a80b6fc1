package tasks

import "github.com/hibiken/asynq"

// TypeCanaryRun runs an ops canary (models.Canary) through the worker.
const TypeCanaryRun = "canary:run"

// CanaryRunPayload names the canary to run; its shape lives in its row.
type CanaryRunPayload struct {
	CanaryID string `json:"canary_id"`
}

// NewCanaryRunTask makes the task that runs canary id.
func NewCanaryRunTask(id string) (*asynq.Task, error) {
	return newTask(TypeCanaryRun, CanaryRunPayload{CanaryID: id})
}

// ParseCanaryRun decodes the payload of a TypeCanaryRun task.
func ParseCanaryRun(t *asynq.Task) (CanaryRunPayload, error) {
	return parse[CanaryRunPayload](t)
}
