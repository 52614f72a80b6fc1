package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
)

// Retention of rows that only matter for a while.
const (
	outboxRetention = 7 * 24 * time.Hour
	canaryRetention = 7 * 24 * time.Hour
	// lookupRetention keeps lookups for audits and support questions
	// ("what did WHOIS say about x last week?"); answers are served from the
	// one-hour cache, never from old rows.
	lookupRetention = 30 * 24 * time.Hour
)

// cleanup deletes rows past their retention. Deleting is idempotent, so a
// re-run after a crash is harmless.
type cleanup struct {
	db  *gorm.DB
	log *slog.Logger
}

func (h *cleanup) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	now := time.Now().UTC()
	db := h.db.WithContext(ctx)
	steps := []struct {
		what string
		run  func() *gorm.DB
	}{
		{"outbox entries", func() *gorm.DB {
			return db.Where("enqueued_at < ?", now.Add(-outboxRetention)).Delete(&models.OutboxEntry{})
		}},
		{"canary steps", func() *gorm.DB {
			old := db.Model(&models.Canary{}).Select("id").Where("created_at < ?", now.Add(-canaryRetention))
			return db.Where("canary_id IN (?)", old).Delete(&models.CanaryStep{})
		}},
		{"canaries", func() *gorm.DB {
			return db.Where("created_at < ?", now.Add(-canaryRetention)).Delete(&models.Canary{})
		}},
		{"lookups", func() *gorm.DB {
			return db.Where("created_at < ?", now.Add(-lookupRetention)).Delete(&models.Lookup{})
		}},
		{"sessions", func() *gorm.DB {
			return db.Where("expires_at < ?", now).Delete(&models.Session{})
		}},
	}
	for _, s := range steps {
		res := s.run()
		if res.Error != nil {
			return fmt.Errorf("delete expired %s: %w", s.what, res.Error)
		}
		if res.RowsAffected > 0 {
			h.log.InfoContext(ctx, "deleted expired rows", "what", s.what, "rows", res.RowsAffected)
		}
	}
	return nil
}
