package worker

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// canaryRun writes a canary's steps one by one. Each step is a row with a
// unique key, written only if missing, so a run resumed after a crash writes
// exactly the steps that are not there yet.
type canaryRun struct{ db *gorm.DB }

func (h *canaryRun) Work(ctx context.Context, p tasks.CanaryRunPayload) error {
	db := h.db.WithContext(ctx)
	c, err := loadRow[models.Canary](db, "canary", p.CanaryID)
	if err != nil {
		return err
	}
	if c.CompletedAt != nil {
		return nil
	}
	now := time.Now().UTC()
	attempt := c.Attempts + 1
	if err := db.Model(&c).Updates(map[string]any{
		"attempts": attempt, "started_at": gorm.Expr("COALESCE(started_at, ?)", now),
	}).Error; err != nil {
		return fmt.Errorf("start canary %s: %w", c.ID, err)
	}
	var done []int
	if err := db.Model(&models.CanaryStep{}).Where("canary_id = ?", c.ID).Pluck("step", &done).Error; err != nil {
		return fmt.Errorf("load canary steps: %w", err)
	}
	have := make(map[int]bool, len(done))
	for _, s := range done {
		have[s] = true
	}
	for step := range c.Steps {
		if have[step] {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(c.StepMillis) * time.Millisecond):
		}
		row := models.CanaryStep{CanaryID: c.ID, Step: step, Attempt: attempt}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return fmt.Errorf("write canary step %d: %w", step, err)
		}
	}
	return db.Model(&models.Canary{}).Where("id = ? AND completed_at IS NULL", c.ID).
		Update("completed_at", time.Now().UTC()).Error
}
