package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
// its task run twice) applies no item twice. An item is marked sent before
// its first registry call, so that an op that ends with it still pending
// says it may have been applied (finishBulk).
type bulkRun struct {
	db          *gorm.DB
	registry    registry.Provider
	concurrency int
	backoff     time.Duration
}

func (h *bulkRun) Work(ctx context.Context, p tasks.BulkRunPayload) error {
	db := h.db.WithContext(ctx)
	op, err := loadRow[models.BulkOp](db, "bulk op", p.BulkOpID)
	if err != nil {
		return err
	}
	if op.Terminal() {
		tasks.FoundDone(ctx)
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

	rec := &recorder{db: h.db, plan: plan, userID: op.UserID}
	recCtx, stopRecording := context.WithCancel(ctx)
	var recording sync.WaitGroup
	recording.Go(func() { rec.loop(recCtx) })
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range min(h.concurrency, len(pending)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pending) || stop.Load() != nil || ctx.Err() != nil || rec.failure() != nil {
					return
				}
				it := pending[i]
				o, ok := h.applyItem(ctx, plan, rec, it)
				if !ok {
					return
				}
				rec.add(o)
				if o.state == models.ItemFailed && !plan.SkipOnError {
					why := stopReason(models.BulkItem{Domain: it.Domain, Error: o.err})
					stop.CompareAndSwap(nil, &why)
				}
			}
		})
	}
	wg.Wait()
	stopRecording()
	recording.Wait()
	// What was applied is recorded even when the task is stopping: the
	// retry then has that much less to send again.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	rec.flush(fctx)
	if err := rec.failure(); err != nil {
		return "", err
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

// outcome is an applied item's result, waiting to be recorded.
type outcome struct {
	id, domain, state, err string
	attempts               int
}

// applyItem applies one item at the registry, once rec has marked it sent.
// It reports false when the task is stopping before the outcome is known,
// or the mark failed: the item then stays pending.
func (h *bulkRun) applyItem(ctx context.Context, plan bulkop.Plan, rec *recorder, it models.BulkItem) (outcome, bool) {
	var applyErr error
	attempts := 0
	if plan.NeedsRegistry() {
		if !rec.markSent(ctx, it) {
			return outcome{}, false
		}
		for attempts < itemAttempts {
			attempts++
			applyErr = h.registry.UpdateDomain(ctx, it.Domain, plan.Update, it.ID)
			if applyErr == nil || !errors.Is(applyErr, registry.ErrTransient) || attempts == itemAttempts {
				break
			}
			if sleep(ctx, h.backoff<<(attempts-1)) != nil {
				return outcome{}, false
			}
		}
	}
	if ctx.Err() != nil {
		return outcome{}, false
	}
	o := outcome{id: it.ID, domain: it.Domain, state: models.ItemDone, attempts: attempts}
	if applyErr != nil {
		o.state, o.err = models.ItemFailed, itemError(applyErr, attempts)
	}
	return o, true
}

// recordEvery is how often a running op's outcomes are written: one
// transaction per batch instead of one per item, which with 32 items in
// flight was most of the database's work, and often enough for the
// progress to be seen rising.
const recordEvery = 50 * time.Millisecond

// recorder writes the outcomes of an op's items in batches, and marks each
// item sent before its registry call (markSent). An outcome is written
// only while its item is pending, and only then mirrored on the domain's
// row; an outcome not written (the worker died, or the write failed)
// leaves its item pending, and the retry sends it to the registry again
// under the same change id, which applies nothing twice.
type recorder struct {
	db     *gorm.DB
	plan   bulkop.Plan
	userID string

	mu    sync.Mutex
	batch []outcome
	err   error // the first failed write
}

func (r *recorder) add(o outcome) {
	r.mu.Lock()
	r.batch = append(r.batch, o)
	r.mu.Unlock()
}

// failure is the first failed write, which stops the run.
func (r *recorder) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// fail records err as the run's failure, unless one is recorded already.
func (r *recorder) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// markSent writes that it is sent, before its first registry call: should
// the op end before its outcome is written, finishBulk fails it as maybe
// applied rather than skipping it. It reports false when it must not be
// sent: the task is stopping, or the mark was not written (the run's
// failure). A mark written as the task stops, the call then not made,
// says no more than that the change may have been applied.
func (r *recorder) markSent(ctx context.Context, it models.BulkItem) bool {
	if it.SentAt != nil {
		return true
	}
	err := r.db.WithContext(ctx).Model(&models.BulkItem{}).Where("id = ? AND sent_at IS NULL", it.ID).
		Update("sent_at", time.Now().UTC()).Error
	if err != nil && ctx.Err() == nil {
		r.fail(fmt.Errorf("mark item %s sent: %w", it.ID, err))
	}
	return err == nil
}

// loop writes the outcomes every recordEvery until ctx ends. A write under
// way when ctx ends is finished, not cancelled: its outcomes are taken out
// of the batch already, and were applied at the registry.
func (r *recorder) loop(ctx context.Context) {
	t := time.NewTicker(recordEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.flush(context.WithoutCancel(ctx))
		}
	}
}

// flush writes the outcomes added so far in one transaction.
func (r *recorder) flush(ctx context.Context) {
	r.mu.Lock()
	batch := r.batch
	r.batch = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return r.write(tx, batch) })
	if err != nil {
		r.fail(fmt.Errorf("record %d item outcomes: %w", len(batch), err))
	}
}

// write records batch: the items' outcomes, one statement per kind of
// outcome, and the change on the rows of the domains done.
func (r *recorder) write(tx *gorm.DB, batch []outcome) error {
	now := time.Now().UTC()
	type kind struct {
		state, err string
		attempts   int
	}
	ids := map[kind][]string{}
	var kinds []kind
	for _, o := range batch {
		k := kind{o.state, o.err, o.attempts}
		if ids[k] == nil {
			kinds = append(kinds, k)
		}
		ids[k] = append(ids[k], o.id)
	}
	var done []string
	for _, k := range kinds {
		// A skipped item, or one failed as sent and not answered (sent, and
		// no attempt recorded: a recorded outcome counts at least one), was
		// ended so by a concurrent run of the same op that stopped; what
		// this run did at the registry is the truer outcome.
		var recorded []models.BulkItem
		res := tx.Model(&recorded).Clauses(clause.Returning{Columns: []clause.Column{{Name: "domain"}}}).
			Where("id IN ? AND (state IN ? OR (state = ? AND sent_at IS NOT NULL AND attempts = 0))", ids[k], []string{models.ItemPending, models.ItemSkipped}, models.ItemFailed).
			Updates(map[string]any{"state": k.state, "error": k.err, "finished_at": now, "attempts": gorm.Expr("attempts + ?", k.attempts)})
		if res.Error != nil {
			return res.Error
		}
		if k.state == models.ItemDone {
			for _, it := range recorded {
				done = append(done, it.Domain)
			}
		}
	}
	return r.mirror(tx, done, now)
}

// mirror writes the change on the rows of domains (those still the
// owner's), only the op's column: ops on the same domain may run at once.
// Contacts merge into a row's, so each such row is read, locked, first.
func (r *recorder) mirror(tx *gorm.DB, domains []string, now time.Time) error {
	if len(domains) == 0 {
		return nil
	}
	if r.plan.Op != bulkop.SetContacts {
		d := models.Domain{UpdatedAt: now}
		r.plan.Apply(&d)
		return tx.Model(&models.Domain{}).Where("name IN ? AND user_id = ?", domains, r.userID).
			Select(r.plan.Column(), "updated_at").Updates(&d).Error
	}
	for _, name := range domains {
		q := tx
		if models.IsPostgres(tx) {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		d := models.Domain{}
		err := q.First(&d, "name = ? AND user_id = ?", name, r.userID).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		d.UpdatedAt = now
		r.plan.Apply(&d)
		if err := tx.Model(&models.Domain{}).Where("name = ? AND user_id = ?", name, r.userID).
			Select(r.plan.Column(), "updated_at").Updates(&d).Error; err != nil {
			return err
		}
	}
	return nil
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

// sentNotRecorded is the error of an item whose change a run sent to the
// registry, its answer lost with the run (a worker killed, a database
// that failed), when the op ended.
const sentNotRecorded = "the change was sent to the registry, but the op ended before its answer was recorded, " +
	"so it may have been applied: check the domain, or send the op again for it, which sets the same values"

// finishBulk gives an unfinished op its terminal state. Of the items still
// pending (after a stop, or when the op is given up), those a run sent to
// the registry may have been applied: they are failed, saying so; the
// others are skipped.
func finishBulk(tx *gorm.DB, id, state, why string, now time.Time) error {
	if err := tx.Model(&models.BulkItem{}).Where("bulk_op_id = ? AND state = ? AND sent_at IS NOT NULL", id, models.ItemPending).
		Updates(map[string]any{"state": models.ItemFailed, "error": sentNotRecorded, "finished_at": now}).Error; err != nil {
		return fmt.Errorf("fail the items of %s sent to the registry: %w", id, err)
	}
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
