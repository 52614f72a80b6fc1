package models

import (
	"encoding/json"
	"time"
)

// Tool job states (SPEC §3.2): queued until a worker starts it, running,
// then done or failed, which are terminal.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// ToolJob is one run of an async free tool: its input, progress and
// outcome, as the task recorded them. Jobs are kept until ExpiresAt.
type ToolJob struct {
	ID       string          `gorm:"primaryKey;size:40"`
	Tool     string          `gorm:"size:32;not null"`
	Input    json.RawMessage `gorm:"not null"`
	State    string          `gorm:"size:16;not null"`
	Done     int             `gorm:"not null;default:0"`
	Planned  int             `gorm:"not null;default:0"`
	Result   json.RawMessage
	Error    string `gorm:"size:500"`
	Attempts int    `gorm:"not null;default:0"`
	// RequestID is the request that created the job, for the logs.
	RequestID  string    `gorm:"size:64"`
	CreatedAt  time.Time `gorm:"not null"`
	StartedAt  *time.Time
	FinishedAt *time.Time
	// RescuedAt is when the rescue last gave the job a new task.
	RescuedAt *time.Time
	ExpiresAt time.Time `gorm:"not null;index"`
}

// Terminal reports whether the job has its final state.
func (j ToolJob) Terminal() bool { return j.State == JobDone || j.State == JobFailed }
