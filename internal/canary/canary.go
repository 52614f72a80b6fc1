// Package canary sends a canary through the whole pipeline for ops: a
// row and its task written together through the outbox (API → outbox →
// queue), a worker writing its steps one by one (worker → database), and
// its status read back from the rows it wrote.
package canary

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Bounds of a canary, and its defaults.
const (
	MaxSteps      = 1000
	MaxStepMillis = 10_000
	DefaultSteps  = 3
	DefaultStepMS = 100
)

// Service is the canaries of one database.
type Service struct {
	db     *gorm.DB
	outbox *outbox.Outbox
}

// New returns the canaries of db, queued through ob.
func New(db *gorm.DB, ob *outbox.Outbox) *Service { return &Service{db: db, outbox: ob} }

// Create writes a canary of steps steps of stepMS each and its task in
// one transaction; steps outside 1..MaxSteps or stepMS outside
// 0..MaxStepMillis are validation errors.
func (s *Service) Create(ctx context.Context, steps, stepMS int) (models.Canary, error) {
	if steps < 1 || steps > MaxSteps {
		return models.Canary{}, fault.New(fault.Validation, "steps must be between 1 and %d", MaxSteps)
	}
	if stepMS < 0 || stepMS > MaxStepMillis {
		return models.Canary{}, fault.New(fault.Validation, "step_ms must be between 0 and %d", MaxStepMillis)
	}
	c := models.Canary{ID: models.NewID(), RequestID: requestid.From(ctx), Steps: steps, StepMillis: stepMS}
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if err := tx.Create(&c).Error; err != nil {
			return err
		}
		tx.Add(tasks.CanaryRunPayload{CanaryID: c.ID})
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("create canary: %w", err)
	}
	return c, nil
}

// Get returns canary id and how many of its steps are written: not_found
// for an unknown id.
func (s *Service) Get(ctx context.Context, id string) (models.Canary, int64, error) {
	db := s.db.WithContext(ctx)
	var c models.Canary
	if err := models.FoundOr(db.Take(&c, "id = ?", id).Error, "canary", "no canary with this id"); err != nil {
		return c, 0, err
	}
	var done int64
	if err := db.Model(&models.CanaryStep{}).Where("canary_id = ?", c.ID).Count(&done).Error; err != nil {
		return c, 0, fmt.Errorf("count the steps of canary %s: %w", c.ID, err)
	}
	return c, done, nil
}

// Run writes canary c's steps one by one, each after its pause. Each step
// is a row with a unique key, written only if missing, so a run resumed
// after a crash writes exactly the steps that are not there yet.
func (s *Service) Run(ctx context.Context, c models.Canary) error {
	if c.CompletedAt != nil {
		return nil
	}
	db := s.db.WithContext(ctx)
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
	for _, step := range done {
		have[step] = true
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
