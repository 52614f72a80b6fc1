package models

import "time"

// OutboxEntry is a task waiting to reach the queue. It is written in the same
// transaction as the rows the task works on, so a task exists exactly when its
// rows do; EnqueuedAt is set once asynq holds the task.
type OutboxEntry struct {
	ID         string     `gorm:"primaryKey;type:uuid"`
	TaskType   string     `gorm:"size:64;not null"`
	Payload    []byte     `gorm:"not null"`
	Queue      string     `gorm:"size:32;not null"`
	RequestID  string     `gorm:"size:64"`
	CreatedAt  time.Time  `gorm:"index:idx_outbox_pending,where:enqueued_at IS NULL"`
	EnqueuedAt *time.Time `gorm:"index:idx_outbox_enqueued,where:enqueued_at IS NOT NULL"`
	Attempts   int        `gorm:"not null;default:0"`
	LastError  string     `gorm:"size:500"`
}
