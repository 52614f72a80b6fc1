// Package outbox creates tasks atomically with the rows they work on. A task
// is first an OutboxEntry written in the caller's transaction; after commit it
// is enqueued at once (fast path), and a periodic sweep enqueues whatever the
// fast path missed (Redis down, process killed between commit and enqueue).
// The asynq TaskID is the entry id, so a task is never in the queue twice.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Retention is how long asynq keeps a finished task, and so how long a second
// enqueue of the same entry is refused as a duplicate.
const Retention = 24 * time.Hour

// publishTimeout bounds the fast path, so a request never hangs on a Redis
// that is down: the entry stays pending and the sweep takes it.
const publishTimeout = 2 * time.Second

// Outbox writes entries and publishes them to asynq.
type Outbox struct {
	db     *gorm.DB
	client *asynq.Client
	log    *slog.Logger
}

// New returns an Outbox on db that enqueues through client.
func New(db *gorm.DB, client *asynq.Client, log *slog.Logger) *Outbox {
	return &Outbox{db: db, client: client, log: log}
}

// Tx is a database transaction that can also add tasks.
type Tx struct {
	*gorm.DB
	requestID string
	entries   []*models.OutboxEntry
}

// Add records t to be enqueued when the transaction commits. Its queue and
// retry policy come from tasks.Specs.
func (tx *Tx) Add(t *asynq.Task) error {
	if _, ok := tasks.Specs[t.Type()]; !ok {
		return fmt.Errorf("outbox: task type %q has no tasks.Spec", t.Type())
	}
	payload := t.Payload()
	if payload == nil {
		payload = []byte{} // the column is NOT NULL
	}
	e := &models.OutboxEntry{
		ID: models.NewID(), TaskType: t.Type(), Payload: payload,
		Queue: tasks.Specs[t.Type()].Queue, RequestID: tx.requestID,
	}
	if err := tx.Create(e).Error; err != nil {
		return fmt.Errorf("outbox: add %s: %w", t.Type(), err)
	}
	tx.entries = append(tx.entries, e)
	return nil
}

// Transaction runs fn in one database transaction. Tasks fn adds are
// enqueued after the commit; a failed enqueue is left to the sweep, so the
// only error returned is the transaction's own.
func (o *Outbox) Transaction(ctx context.Context, fn func(tx *Tx) error) error {
	tx := &Tx{requestID: requestid.From(ctx)}
	err := o.db.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		tx.DB = g
		return fn(tx)
	})
	if err != nil {
		return err
	}
	if len(tx.entries) > 0 {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
		defer cancel()
		o.publish(pctx, o.db.WithContext(pctx), tx.entries)
	}
	return nil
}

// Sweep enqueues up to limit entries that are older than grace and not yet
// enqueued, and returns how many it enqueued. On Postgres the entries are
// locked with SKIP LOCKED, so concurrent sweepers split the work; where they
// do overlap, the TaskID keeps the queue free of duplicates.
func (o *Outbox) Sweep(ctx context.Context, grace time.Duration, limit int) (int, error) {
	n := 0
	err := o.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Where("enqueued_at IS NULL AND created_at < ?", time.Now().UTC().Add(-grace)).
			Order("created_at").Limit(limit)
		if models.IsPostgres(tx) {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		var pending []*models.OutboxEntry
		if err := q.Find(&pending).Error; err != nil {
			return fmt.Errorf("list pending outbox entries: %w", err)
		}
		n = o.publish(ctx, tx, pending)
		return nil
	})
	return n, err
}

// publish enqueues entries concurrently, then, through db, marks the ones
// asynq accepted (or already had) as enqueued and records the failures. It
// returns how many were marked.
func (o *Outbox) publish(ctx context.Context, db *gorm.DB, entries []*models.OutboxEntry) int {
	const parallel = 8
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i, e := range entries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = o.enqueue(ctx, e)
		})
	}
	wg.Wait()

	var done []string
	for i, e := range entries {
		if errs[i] == nil {
			done = append(done, e.ID)
			continue
		}
		o.log.WarnContext(ctx, "outbox enqueue failed; the sweep will retry", "entry", e.ID, "task_type", e.TaskType, "err", errs[i])
		db.Model(&models.OutboxEntry{}).Where("id = ?", e.ID).
			Updates(map[string]any{"attempts": gorm.Expr("attempts + 1"), "last_error": truncate(errs[i].Error(), 500)})
	}
	if len(done) == 0 {
		return 0
	}
	if err := db.Model(&models.OutboxEntry{}).Where("id IN ?", done).Update("enqueued_at", time.Now().UTC()).Error; err != nil {
		// The tasks are queued; a later sweep meets them as TaskID conflicts and marks them then.
		o.log.WarnContext(ctx, "outbox mark enqueued failed", "entries", len(done), "err", err)
		return 0
	}
	return len(done)
}

func (o *Outbox) enqueue(ctx context.Context, e *models.OutboxEntry) error {
	var headers map[string]string
	if e.RequestID != "" {
		headers = map[string]string{tasks.HeaderRequestID: e.RequestID}
	}
	t := asynq.NewTaskWithHeaders(e.TaskType, e.Payload, headers)
	opts := append(tasks.Options(e.TaskType), asynq.TaskID(e.ID), asynq.Retention(Retention))
	_, err := o.client.EnqueueContext(ctx, t, opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
