package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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
	// retries are the waits before each attempt after the first
	// (LookupRetries; the tests' are short).
	retries []time.Duration
}

// LookupRetries are the waits between a lookup's attempts: 1, 2 and 4 s,
// within its task. Its caller waits for the answer (lookup.Wait), so the
// retries come on time in the task rather than through asynq's retry
// queue, which a worker forwards only every few seconds: a lookup that
// fails both ways is answered as failed about 7 s after it began.
var LookupRetries = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

func (h *lookupRun) Work(ctx context.Context, p tasks.LookupRunPayload) error {
	db := h.db.WithContext(ctx)
	l, pending, err := startLookup(db, p.LookupID)
	if err != nil {
		return err
	}
	if !pending {
		tasks.FoundDone(ctx)
		return h.announce(ctx, l)
	}
	rctx, cancel := resolveContext(ctx)
	defer cancel()
	rec, err := h.resolve(rctx, l)
	switch {
	case err == nil:
		l.State, l.Record = models.LookupDone, rec
	case errors.Is(err, domaininfo.ErrNotFound):
		l.State = models.LookupNotFound
	case ctx.Err() != nil:
		return err // the worker stops: asynq runs the task again
	case rctx.Err() != nil:
		// Run again, the lookup would meet the same slow registries and
		// the same deadline.
		l.State, l.Error = models.LookupFailed, "the registries gave no answer within the lookup's time: "+models.ErrorText(err, 400)
	case errors.Is(err, errNotAttempted):
		return err // the database failed: asynq runs the task again
	default:
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
	if l.State == models.LookupFailed && !p.Background { // a warm-up's failure is its row's alone
		return fmt.Errorf("lookup %s failed for good: %s: %w", l.Domain, l.Error, asynq.SkipRetry)
	}
	return nil
}

// finishMargin is the time a lookup keeps, at the end of its task's, to
// record its outcome and announce it.
const finishMargin = 5 * time.Second

// resolveContext bounds the registries' attempts to the task's time less
// finishMargin: a lookup whose registries do not answer (each attempt may
// take an RDAP and a WHOIS timeout) is failed in its task, where cut off
// by the task's deadline it would stay pending and be run again, and
// again by the rescue, for as long as the registries stay silent.
func resolveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-finishMargin))
}

// errNotAttempted marks a failure to record an attempt (the database's,
// not the registries').
var errNotAttempted = errors.New("lookup attempt not recorded")

// startLookup reads lookup id and, while it is pending, counts its first
// attempt, in one statement: the row is on the path of an API request
// that waits for it. A lookup that ended already is returned with pending
// false; one that does not exist is not_found, not to be retried.
func startLookup(db *gorm.DB, id string) (l models.Lookup, pending bool, err error) {
	var rows []models.Lookup
	err = db.Model(&rows).Clauses(clause.Returning{}).Where("id = ? AND state = ?", id, models.LookupPending).
		Update("attempts", gorm.Expr("attempts + 1")).Error
	if err != nil {
		return l, false, notAttempted(id, err)
	}
	if len(rows) == 1 {
		return rows[0], true, nil
	}
	l, err = loadRow[models.Lookup](db, "lookup", id)
	return l, false, err
}

// resolve asks the registries for l's record, again after each of
// h.retries while they fail; each attempt is counted on the row (the
// first by startLookup). It answers the last attempt's result.
func (h *lookupRun) resolve(ctx context.Context, l models.Lookup) (domaininfo.Record, error) {
	for attempt := 0; ; attempt++ {
		rec, err := h.resolver.Resolve(ctx, l.Domain)
		if err == nil || errors.Is(err, domaininfo.ErrNotFound) || attempt == len(h.retries) {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, err
		case <-time.After(h.retries[attempt]):
		}
		if err := h.db.WithContext(ctx).Model(&l).Update("attempts", gorm.Expr("attempts + 1")).Error; err != nil {
			return domaininfo.Record{}, notAttempted(l.ID, err)
		}
	}
}

// notAttempted is the error of a lookup whose attempt could not be counted.
func notAttempted(id string, err error) error {
	return fmt.Errorf("start lookup %s: %w: %w", id, errNotAttempted, err)
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
