package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// lookupRun resolves a lookup and writes its terminal state once: a lookup
// that already has one is answered from its row, so a task that runs twice
// (a worker killed after the write) changes nothing and announces again.
type lookupRun struct {
	db       *gorm.DB
	resolver *lookup.Resolver
	cache    *lookup.Cache
}

func (h *lookupRun) Work(ctx context.Context, p tasks.LookupRunPayload) error {
	db := h.db.WithContext(ctx)
	l, err := loadRow[models.Lookup](db, "lookup", p.LookupID)
	if err != nil {
		return err
	}
	if l.Terminal() {
		return h.announce(ctx, l)
	}
	if err := db.Model(&l).Update("attempts", gorm.Expr("attempts + 1")).Error; err != nil {
		return fmt.Errorf("start lookup %s: %w", l.ID, err)
	}

	rec, err := h.resolver.Resolve(ctx, l.Domain)
	switch {
	case err == nil:
		l.State, l.Record = models.LookupDone, rec
	case errors.Is(err, domaininfo.ErrNotFound):
		l.State = models.LookupNotFound
	default:
		if !lastAttempt(ctx) {
			return err
		}
		l.State, l.Error = models.LookupFailed, models.ErrorText(err, 500)
	}
	now := time.Now().UTC()
	l.CompletedAt = &now
	res := db.Model(&models.Lookup{ID: l.ID}).Where("state = ?", models.LookupPending).
		Select("state", "record", "error", "completed_at").Updates(&l)
	if res.Error != nil {
		return fmt.Errorf("finish lookup %s: %w", l.ID, res.Error)
	}
	if res.RowsAffected == 0 { // another run finished first; answer from its row
		if err := db.First(&l, "id = ?", l.ID).Error; err != nil {
			return fmt.Errorf("reload lookup %s: %w", l.ID, err)
		}
	}
	if err := h.announce(ctx, l); err != nil {
		return err
	}
	if l.State == models.LookupFailed {
		return fmt.Errorf("lookup %s failed for good: %s: %w", l.Domain, l.Error, asynq.SkipRetry)
	}
	return nil
}

// lastAttempt reports whether the running task has no retry left, so its
// failure is final. Outside a served task it is false.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}

// announce caches a terminal lookup and wakes the API request waiting on it.
func (h *lookupRun) announce(ctx context.Context, l models.Lookup) error {
	if l.State == models.LookupFailed {
		return h.cache.Announce(ctx, l.ID)
	}
	return h.cache.Finish(ctx, lookup.Answer{
		LookupID: l.ID, Domain: l.Domain, Found: l.State == models.LookupDone,
		Record: l.Record, CreatedAt: l.CreatedAt.UTC(),
	})
}
