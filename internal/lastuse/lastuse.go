// Package lastuse records when a key was last used (a developer key, a
// partner credential) without a database write per request: a key's use
// is written at most once a minute, by each process.
package lastuse

import (
	"context"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Every is how stale a recorded last use may be.
const Every = time.Minute

// Recorder writes the last_used_at column of one table's keys.
type Recorder struct {
	db *gorm.DB
	// model is the table's model; idColumn names its key column.
	model    any
	idColumn string
	now      func() time.Time
	// touched is when this process last wrote each key's use.
	touched sync.Map // key id → time.Time
}

// New returns a Recorder of model's table (its key in idColumn) on db;
// now is its clock.
func New(db *gorm.DB, model any, idColumn string, now func() time.Time) *Recorder {
	return &Recorder{db: db, model: model, idColumn: idColumn, now: now}
}

// Touch records that key id was used now, unless this process or another
// recorded a use in the last minute.
func (r *Recorder) Touch(ctx context.Context, id string) error {
	now := r.now().UTC()
	if last, ok := r.touched.Load(id); ok && now.Sub(last.(time.Time)) < Every {
		return nil
	}
	err := r.db.WithContext(ctx).Model(r.model).
		Where(r.idColumn+" = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, now.Add(-Every)).
		Update("last_used_at", now).Error
	if err != nil {
		return fmt.Errorf("record the use of %s: %w", id, err)
	}
	r.touched.Store(id, now)
	return nil
}
