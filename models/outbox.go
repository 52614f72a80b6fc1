package models

import (
	"time"

	"gorm.io/gorm"
)

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

// MarkOutboxEnqueued sets the enqueued_at of the outbox entries ids to
// at. On Postgres the ids are one array: the statement is the same
// whatever their number, where a list of parameters is a new statement,
// and a new prepared statement on each connection, for each count (the
// fast path marks what a tenth of a second enqueued).
func MarkOutboxEnqueued(db *gorm.DB, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if !IsPostgres(db) {
		return db.Model(&OutboxEntry{}).Where("id IN ?", ids).Update("enqueued_at", at).Error
	}
	_, err := db.Statement.ConnPool.ExecContext(db.Statement.Context,
		"UPDATE outbox_entries SET enqueued_at = $1 WHERE id = ANY($2::uuid[])", at, ids)
	return translate(db, err)
}
