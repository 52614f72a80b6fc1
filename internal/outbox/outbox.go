// Package outbox creates tasks atomically with the rows they work on. A task
// is first an OutboxEntry written in the caller's transaction; after commit it
// is enqueued at once (fast path), and a periodic sweep enqueues whatever the
// fast path missed (Redis down, process killed between commit and enqueue).
// The asynq TaskID is the entry id, so a task is never in the queue twice
// (tasks enqueued with Enqueue, outside any entry, take their row's id).
//
// The fast path marks entries as enqueued in batches, a few times a second,
// so a busy API does not pay a second commit per request. The mark is what
// keeps the sweep from enqueueing a task again: while the task is in asynq
// (pending, running, retrying) a second enqueue is a TaskID conflict, and
// once done it is refused only if its type keeps finished tasks
// (tasks.Spec.Retention). A mark lost in a crash (at most markEvery of
// them) can therefore run a finished task a second time, which handlers
// allow: they are idempotent.
//
// Retention is per type, not for all: keeping a finished task costs Redis a
// sorted-set insert and a hash write per task (about a quarter more script
// time than deleting it, measured), for an answer only a few types need.
//
// The enqueues of a publish leave for Redis in pipelines of up to 128
// (see pipelined): a transaction that makes 500 tasks costs four round
// trips, not 500.
//
// Every publish announces the queues it enqueued to (package queuewake),
// once per queue and batch, so idle workers pick the tasks up at once
// instead of at their next poll.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/queuewake"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// publishTimeout bounds the fast path, so a request does not hang on a
// Redis that is down: the entry stays pending and the sweep takes it. (A
// Redis that accepts and never answers is bounded by the client's read
// timeout instead, which go-redis applies whatever the context says.)
const publishTimeout = 2 * time.Second

// markEvery is how often fast-path marks are written; markBatch caps one statement.
const (
	markEvery = 100 * time.Millisecond
	markBatch = 1000
)

// Outbox writes entries and publishes them to asynq.
type Outbox struct {
	db     *gorm.DB
	rdb    redis.UniversalClient
	client *asynq.Client
	log    *slog.Logger

	mu    sync.Mutex
	marks []string // entries the fast path enqueued, not yet marked
	stop  chan struct{}
	wg    sync.WaitGroup
}

// New returns an Outbox on db that enqueues to the asynq queues on rdb.
// Close it to write the last marks.
func New(db *gorm.DB, rdb redis.UniversalClient, log *slog.Logger) *Outbox {
	o := &Outbox{db: db, rdb: rdb, client: asynq.NewClientFromRedisClient(pipelined{rdb}), log: log, stop: make(chan struct{})}
	o.wg.Go(o.markLoop)
	return o
}

// Close writes the pending marks and stops the background marker.
func (o *Outbox) Close() error {
	close(o.stop)
	o.wg.Wait()
	return nil
}

// Tx is a database transaction that can also add tasks.
type Tx struct {
	*gorm.DB
	requestID string
	entries   []*models.OutboxEntry
}

// Add records the task of p to be enqueued when the transaction commits.
// Its queue and retry policy come from tasks.Specs (every payload type has
// one: TestEveryPayloadHasASpec). The entries of one transaction are
// written in one statement when fn returns.
func (tx *Tx) Add(p tasks.Payload) {
	t := tasks.New(p)
	tx.entries = append(tx.entries, &models.OutboxEntry{
		ID: newEntryID(), TaskType: t.Type(), Payload: t.Payload(), Queue: tasks.SpecOf(t.Type()).Queue, RequestID: tx.requestID,
	})
}

// newEntryID is a new entry's id: a UUID of version 7, which begins with
// the time it was made, so that the entries' primary key grows at its
// right edge instead of in a random page of the index each.
func newEntryID() string { return uuid.Must(uuid.NewV7()).String() }

// Transaction runs fn in one database transaction. Tasks fn adds are
// enqueued after the commit; a failed enqueue is left to the sweep, so the
// only error returned is the transaction's own.
func (o *Outbox) Transaction(ctx context.Context, fn func(tx *Tx) error) error {
	tx := &Tx{requestID: requestid.From(ctx)}
	err := o.db.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		tx.DB = g
		if err := fn(tx); err != nil {
			return err
		}
		if len(tx.entries) == 0 {
			return nil
		}
		if err := models.InsertOutboxEntries(g, tx.entries); err != nil {
			return fmt.Errorf("outbox: write %d entries: %w", len(tx.entries), err)
		}
		return nil
	})
	if err != nil || len(tx.entries) == 0 {
		return err
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	ok := o.publish(pctx, o.db, tx.entries)
	o.mu.Lock()
	o.marks = append(o.marks, ok...)
	o.mu.Unlock()
	return nil
}

// Sweep enqueues up to limit entries that are older than grace and not yet
// enqueued, marks them, and returns how many it enqueued. On Postgres the
// entries are locked with SKIP LOCKED, so concurrent sweepers split the
// work; where they do overlap, the TaskID keeps the queue free of duplicates.
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
		ok := o.publish(ctx, tx, pending)
		if err := models.MarkOutboxEnqueued(tx, ok, time.Now().UTC()); err != nil {
			return err
		}
		n = len(ok)
		return nil
	})
	return n, err
}

// publish enqueues entries, announces their queues and returns the ids
// asynq accepted (or already had). Failures are logged and counted on
// their entries through db.
func (o *Outbox) publish(ctx context.Context, db *gorm.DB, entries []*models.OutboxEntry) []string {
	errs := o.enqueueAll(ctx, entries)
	// Failures are written with a deadline of their own: the enqueues may
	// have used up ctx's (a Redis that accepts and never answers).
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	var ok []string
	for i, e := range entries {
		if errs[i] == nil {
			ok = append(ok, e.ID)
			continue
		}
		o.log.WarnContext(ctx, "outbox enqueue failed; the sweep will retry", "entry", e.ID, "task_type", e.TaskType, "err", errs[i])
		db.WithContext(wctx).Model(&models.OutboxEntry{}).Where("id = ?", e.ID).
			Updates(map[string]any{"attempts": gorm.Expr("attempts + 1"), "last_error": models.ErrorText(errs[i], 500)})
	}
	return ok
}

// Keyed is a task to enqueue under an id of its own (Enqueue).
type Keyed struct {
	// ID is the task's id: the key of the row its work is recorded in.
	ID      string
	Payload tasks.Payload
}

// Enqueue enqueues ts now, outside any transaction, each under its own
// id; a task asynq has under that id already, in any state, counts as
// enqueued. It is for the tasks of a fan-out: its own entry is what makes
// them durable, and the fan-out, retried, enqueues them until all are in.
// It returns an error when any failed, with the first failure.
func (o *Outbox) Enqueue(ctx context.Context, ts []Keyed) error {
	entries := make([]*models.OutboxEntry, len(ts))
	for i, k := range ts {
		t := tasks.New(k.Payload)
		entries[i] = &models.OutboxEntry{ID: k.ID, TaskType: t.Type(), Payload: t.Payload(), Queue: tasks.SpecOf(t.Type()).Queue,
			RequestID: requestid.From(ctx)}
	}
	var first error
	failed := 0
	for i, err := range o.enqueueAll(ctx, entries) {
		if err == nil {
			continue
		}
		if failed++; first == nil {
			first = fmt.Errorf("%s: %w", entries[i].ID, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("outbox: %d of %d tasks not enqueued, the first %w", failed, len(ts), first)
	}
	return nil
}

// enqueueAll enqueues entries concurrently, announces the queues of those
// asynq took, and returns each entry's error.
func (o *Outbox) enqueueAll(ctx context.Context, entries []*models.OutboxEntry) []error {
	// The enqueues of a chunk leave in one pipeline (see pipelined); a
	// chunk bounds the goroutines that wait for it.
	const chunk = 128
	errs := make([]error, len(entries))
	for from := 0; from < len(entries); from += chunk {
		part := entries[from:min(from+chunk, len(entries))]
		gather(ctx, o.rdb, len(part), func(ctx context.Context, i int) {
			errs[from+i] = o.enqueue(ctx, part[i])
		})
	}
	var queues []string
	for i, e := range entries {
		if errs[i] == nil && !slices.Contains(queues, e.Queue) {
			queues = append(queues, e.Queue)
		}
	}
	if len(queues) > 0 {
		// A lost announcement delays the tasks to the workers' next recheck.
		if err := queuewake.Notify(ctx, o.rdb, queues...); err != nil {
			o.log.WarnContext(ctx, "outbox could not announce enqueued tasks; idle workers find them at their next recheck", "queues", queues, "err", err)
		}
	}
	return errs
}

func (o *Outbox) enqueue(ctx context.Context, e *models.OutboxEntry) error {
	if _, known := tasks.Specs[e.TaskType]; !known {
		// An entry a newer version wrote (a rolling deploy), or of a type
		// since removed: it waits for the sweep of a process that knows it.
		return fmt.Errorf("task type %q is unknown to this version of domaind", e.TaskType)
	}
	var headers map[string]string
	if e.RequestID != "" {
		headers = map[string]string{tasks.HeaderRequestID: e.RequestID}
	}
	t := asynq.NewTaskWithHeaders(e.TaskType, e.Payload, headers)
	opts := append(tasks.Options(e.TaskType), asynq.TaskID(e.ID))
	_, err := o.client.EnqueueContext(ctx, t, opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// markLoop writes the fast path's marks every markEvery, and once more at Close.
func (o *Outbox) markLoop() {
	t := time.NewTicker(markEvery)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			o.flushMarks()
			return
		case <-t.C:
			o.flushMarks()
		}
	}
}

func (o *Outbox) flushMarks() {
	o.mu.Lock()
	ids := o.marks
	o.marks = nil
	o.mu.Unlock()
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), markBatch)]
		ids = ids[len(chunk):]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := o.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if models.IsPostgres(tx) {
				// A lost mark is harmless (see the package doc): do not wait for the disk.
				if err := tx.Exec("SET LOCAL synchronous_commit TO OFF").Error; err != nil {
					return err
				}
			}
			return models.MarkOutboxEnqueued(tx, chunk, time.Now().UTC())
		})
		cancel()
		if err != nil {
			o.log.Warn("outbox mark enqueued failed; the sweep will meet these tasks again", "entries", len(chunk), "err", err)
		}
	}
}
