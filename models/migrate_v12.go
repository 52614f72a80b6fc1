package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 12 builds what the models gained without a step of their own, after
// the step that made their table: before the steps were frozen only the
// databases whose steps auto-migrated the newer models had it.
//
//   - outbox_entries.id became a uuid and idx_outbox_pending moved to the
//     pending rows' created_at (ede6516, after step 1);
//   - bulk_ops and tool_jobs got rescued_at (5d86be5, after step 11);
//   - bulk_items.change became text (84c37c2, after step 11).
//
// Each part looks before it changes anything, so a database that has them
// already passes unchanged; only idx_outbox_pending is dropped and made
// again either way (the outbox keeps a week of rows).

// outboxEntryV12 is the outbox table as step 12 leaves it.
type outboxEntryV12 struct {
	ID         string    `gorm:"primaryKey;type:uuid"`
	TaskType   string    `gorm:"size:64;not null"`
	Payload    []byte    `gorm:"not null"`
	Queue      string    `gorm:"size:32;not null"`
	RequestID  string    `gorm:"size:64"`
	CreatedAt  time.Time `gorm:"index:idx_outbox_pending,where:enqueued_at IS NULL"`
	EnqueuedAt *time.Time
	Attempts   int    `gorm:"not null;default:0"`
	LastError  string `gorm:"size:500"`
}

func (outboxEntryV12) TableName() string { return "outbox_entries" }

// bulkItemV12 is the bulk_items table as step 12 leaves it.
type bulkItemV12 struct {
	ID         string `gorm:"primaryKey;size:48"`
	BulkOpID   string `gorm:"size:40;not null;index:idx_bulk_items_op_seq,priority:1"`
	Seq        int    `gorm:"not null;index:idx_bulk_items_op_seq,priority:2"`
	Domain     string `gorm:"size:253;not null"`
	State      string `gorm:"size:16;not null"`
	Change     string `gorm:"type:text"`
	Error      string `gorm:"size:500"`
	Attempts   int    `gorm:"not null;default:0"`
	FinishedAt *time.Time
}

func (bulkItemV12) TableName() string { return "bulk_items" }

// bulkOpV12 holds the column step 12 adds to the bulk_ops of step 11.
type bulkOpV12 struct {
	RescuedAt *time.Time
}

func (bulkOpV12) TableName() string { return "bulk_ops" }

// toolJobV12 holds the column step 12 adds to the tool_jobs of step 11.
type toolJobV12 struct {
	RescuedAt *time.Time
}

func (toolJobV12) TableName() string { return "tool_jobs" }

func migrateV12(tx *gorm.DB) error {
	if err := changeColumnType(tx, &outboxEntryV12{}, "id", "uuid", `ALTER TABLE outbox_entries ALTER COLUMN id TYPE uuid USING id::uuid`); err != nil {
		return err
	}
	if err := tx.Exec(`DROP INDEX IF EXISTS idx_outbox_pending`).Error; err != nil {
		return err
	}
	if err := tx.Migrator().CreateIndex(&outboxEntryV12{}, "idx_outbox_pending"); err != nil {
		return err
	}
	if err := changeColumnType(tx, &bulkItemV12{}, "change", "text", `ALTER TABLE bulk_items ALTER COLUMN change TYPE text`); err != nil {
		return err
	}
	if err := addColumns(tx, &bulkOpV12{}, "RescuedAt"); err != nil {
		return err
	}
	return addColumns(tx, &toolJobV12{}, "RescuedAt")
}
