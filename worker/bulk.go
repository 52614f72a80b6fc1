package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Bulk op tuning: items applied at once per op, and the retries of an item
// on a temporary registry failure (200 ms, 400 ms, 800 ms apart).
const (
	BulkConcurrency = 32
	itemAttempts    = 4
	itemBackoff     = 200 * time.Millisecond
)

// bulkRun applies a bulk op's pending items through the registry, a
// bounded number at a time, and records each outcome. An item's outcome is
// written only while it is pending, and the registry sees the item's id as
// the change id, so a run that is retried or resumed (its worker killed,
// its task run twice) applies no item twice.
type bulkRun struct {
	db          *gorm.DB
	registry    registry.Provider
	concurrency int
	backoff     time.Duration
}

func (h *bulkRun) ProcessTask(ctx context.Context, t *asynq.Task) error {
	p, err := tasks.ParseBulkRun(t)
	if err != nil {
		return err
	}
	db := h.db.WithContext(ctx)
	op, err := loadRow[models.BulkOp](db, "bulk op", p.BulkOpID)
	if err != nil {
		return err
	}
	if op.Terminal() {
		return nil
	}
	now := time.Now().UTC()
	err = db.Model(&models.BulkOp{}).Where("id = ? AND state IN ?", op.ID, []string{models.BulkQueued, models.BulkRunning}).
		Updates(map[string]any{"state": models.BulkRunning, "started_at": gorm.Expr("COALESCE(started_at, ?)", now), "attempts": gorm.Expr("attempts + 1")}).Error
	if err != nil {
		return fmt.Errorf("start bulk op %s: %w", op.ID, err)
	}

	stopped, err := h.applyPending(ctx, op)
	if err != nil {
		if lastAttempt(ctx) {
			return h.finish(context.WithoutCancel(ctx), op, models.BulkFailed, "gave up after repeated failures: "+models.ErrorText(err, 400))
		}
		return err
	}
	if stopped != "" {
		return h.finish(ctx, op, models.BulkFailed, stopped)
	}
	return h.finish(ctx, op, models.BulkDone, "")
}

// applyPending applies the op's pending items. It returns why the op
// stopped early (a failure with skip_on_error off), or an error that
// leaves the remaining items pending for the task's retry.
func (h *bulkRun) applyPending(ctx context.Context, op models.BulkOp) (stopped string, err error) {
	plan := bulkop.FromRow(op)
	var items []models.BulkItem
	if err := h.db.WithContext(ctx).Where("bulk_op_id = ?", op.ID).Order("seq").Find(&items).Error; err != nil {
		return "", fmt.Errorf("load items of %s: %w", op.ID, err)
	}
	var stop atomic.Pointer[string]
	var pending []models.BulkItem
	for _, it := range items {
		switch {
		case it.State == models.ItemFailed && !plan.SkipOnError:
			why := stopReason(it)
			stop.Store(&why)
		case it.State == models.ItemPending:
			pending = append(pending, it)
		}
	}

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
	)
	for range min(h.concurrency, len(pending)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pending) || stop.Load() != nil || ctx.Err() != nil {
					return
				}
				it := pending[i]
				outcome, err := h.applyItem(ctx, plan, op.UserID, &it)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if outcome == models.ItemFailed && !plan.SkipOnError {
					why := stopReason(it)
					stop.CompareAndSwap(nil, &why)
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return "", firstErr
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if s := stop.Load(); s != nil {
		return *s, nil
	}
	return "", nil
}

func stopReason(it models.BulkItem) string {
	return models.Cut(fmt.Sprintf("stopped at the first failure (skip_on_error is off): %s: %s", it.Domain, it.Error), 500)
}

// applyItem applies one item and records its outcome. It returns an error
// only when the outcome could not be recorded (or the task is stopping):
// the item then stays pending.
func (h *bulkRun) applyItem(ctx context.Context, plan bulkop.Plan, userID string, it *models.BulkItem) (string, error) {
	var applyErr error
	attempts := 0
	if plan.NeedsRegistry() {
		for attempts < itemAttempts {
			attempts++
			applyErr = h.registry.UpdateDomain(ctx, it.Domain, plan.Update, it.ID)
			if applyErr == nil || !errors.Is(applyErr, registry.ErrTransient) || attempts == itemAttempts {
				break
			}
			if err := sleep(ctx, h.backoff<<(attempts-1)); err != nil {
				return "", err
			}
		}
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	it.State, it.Error = models.ItemDone, ""
	if applyErr != nil {
		it.State, it.Error = models.ItemFailed, itemError(applyErr, attempts)
	}
	now := time.Now().UTC()
	it.FinishedAt = &now
	err := h.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// A skipped item was skipped by a concurrent run of the same op that
		// stopped; what this run did at the registry is the truer outcome.
		res := tx.Model(&models.BulkItem{}).Where("id = ? AND state IN ?", it.ID, []string{models.ItemPending, models.ItemSkipped}).
			Updates(map[string]any{"state": it.State, "error": it.Error, "finished_at": now, "attempts": gorm.Expr("attempts + ?", attempts)})
		if res.Error != nil || res.RowsAffected == 0 || it.State != models.ItemDone {
			return res.Error // another run recorded it first, or there is nothing to mirror
		}
		// Mirror the change on the domain's row (if still the owner's),
		// writing only the op's column: ops on the same domain may run at
		// once. Contacts merge into the row's, so it is read, locked, first.
		d := models.Domain{UpdatedAt: now}
		if plan.Op == bulkop.SetContacts {
			q := tx
			if models.IsPostgres(tx) {
				q = q.Clauses(clause.Locking{Strength: "UPDATE"})
			}
			err := q.First(&d, "name = ? AND user_id = ?", it.Domain, userID).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		plan.Apply(&d)
		return tx.Model(&models.Domain{}).Where("name = ? AND user_id = ?", it.Domain, userID).
			Select(plan.Column(), "updated_at").Updates(&d).Error
	})
	if err != nil {
		return "", fmt.Errorf("record item %s: %w", it.ID, err)
	}
	return it.State, nil
}

// itemError is an item's failure as its owner reads it.
func itemError(err error, attempts int) string {
	switch {
	case errors.Is(err, registry.ErrDomainNotHeld):
		return "the registry does not hold this domain for the account"
	case errors.Is(err, registry.ErrTransient):
		return fmt.Sprintf("registry unavailable after %d attempts: %s", attempts, models.ErrorText(err, 300))
	}
	return "registry refused the change: " + models.ErrorText(err, 400)
}

// finish gives the op its terminal state (finishBulk).
func (h *bulkRun) finish(ctx context.Context, op models.BulkOp, state, why string) error {
	return h.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return finishBulk(tx, op.ID, state, why, time.Now().UTC())
	})
}

// finishBulk gives an unfinished op its terminal state; items still
// pending (after a stop, or when the op is given up) are skipped.
func finishBulk(tx *gorm.DB, id, state, why string, now time.Time) error {
	if err := tx.Model(&models.BulkItem{}).Where("bulk_op_id = ? AND state = ?", id, models.ItemPending).
		Updates(map[string]any{"state": models.ItemSkipped, "finished_at": now}).Error; err != nil {
		return fmt.Errorf("skip the rest of %s: %w", id, err)
	}
	return tx.Model(&models.BulkOp{}).Where("id = ? AND state IN ?", id, []string{models.BulkQueued, models.BulkRunning}).
		Updates(map[string]any{"state": state, "error": why, "finished_at": now}).Error
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
