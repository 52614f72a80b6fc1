package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// countingRegistry counts the updates that reach the sandbox, per change.
type countingRegistry struct {
	registry.Provider
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingRegistry) UpdateDomain(ctx context.Context, name string, u registry.Update, change string) error {
	c.mu.Lock()
	c.calls[change]++
	c.mu.Unlock()
	return c.Provider.UpdateDomain(ctx, name, u, change)
}

// newLockOp gives a user n demo domains and queues a lock of all of them.
func newLockOp(t *testing.T, db *gorm.DB, n int) (models.BulkOp, []models.BulkItem) {
	t.Helper()
	u := models.User{ID: models.NewID(), Email: "owner@example.com", PasswordHash: "-"}
	db.Create(&u)
	if _, err := demo.Domains(context.Background(), db, u.ID, n, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	var names []string
	db.Model(&models.Domain{}).Where("user_id = ?", u.ID).Order("name").Pluck("name", &names)
	locked := true
	op := models.BulkOp{ID: "bop_000000000000000000000001", UserID: u.ID, Op: "lock", Update: registry.Update{Locked: &locked},
		SkipOnError: true, Total: n, State: models.BulkQueued, CreatedAt: time.Now()}
	items := make([]models.BulkItem, n)
	for i, name := range names {
		items[i] = models.BulkItem{ID: fmt.Sprintf("%s-%04d", op.ID, i), BulkOpID: op.ID, Seq: i, Domain: name, State: models.ItemPending}
	}
	if err := db.Create(&op).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&items).Error; err != nil {
		t.Fatal(err)
	}
	return op, items
}

func TestBulkRunResumesWithoutApplyingAnItemTwice(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ctx := context.Background()
	op, items := newLockOp(t, db, 50)
	sb := sandbox.New(db, 0)
	// A first run was killed: it recorded items 0-9, and the registry had
	// applied 10-14 when it died, before their outcomes were written.
	for i, it := range items[:15] {
		if err := sb.UpdateDomain(ctx, it.Domain, op.Update, it.ID); err != nil {
			t.Fatal(err)
		}
		if i < 10 {
			db.Model(&it).Updates(map[string]any{"state": models.ItemDone})
		}
	}
	db.Model(&op).Updates(map[string]any{"state": models.BulkRunning, "attempts": 1})

	reg := &countingRegistry{Provider: sb, calls: map[string]int{}}
	h := &bulkRun{db: db, registry: reg, concurrency: 8, backoff: time.Millisecond}
	task := tasks.New(tasks.BulkRunPayload{BulkOpID: op.ID})
	// The resumed task, delivered twice at once (a lease that expired
	// while the first delivery still ran).
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = run(ctx, h, task) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("runs = %v", errs)
	}
	for _, it := range items[:10] {
		if reg.calls[it.ID] != 0 {
			t.Errorf("recorded item %s sent again", it.ID)
		}
	}
	var changes, locked, done int64
	db.Model(&models.SandboxChange{}).Count(&changes)
	db.Model(&models.SandboxName{}).Where("name IN (?) AND locked", db.Model(&models.BulkItem{}).Select("domain")).Count(&locked)
	db.Model(&models.BulkItem{}).Where("state = ?", models.ItemDone).Count(&done)
	if changes != 50 || locked != 50 || done != 50 {
		t.Errorf("%d registry changes, %d locked at the registry, %d items done; want 50 of each", changes, locked, done)
	}
	var got models.BulkOp
	db.First(&got, "id = ?", op.ID)
	if got.State != models.BulkDone || got.FinishedAt == nil || got.StartedAt == nil {
		t.Errorf("op = %+v, want done", got)
	}
	if err := run(ctx, h, task); err != nil { // a late redelivery changes nothing
		t.Errorf("run of a done op = %v", err)
	}
	db.Model(&models.SandboxChange{}).Count(&changes)
	if changes != 50 {
		t.Errorf("a late redelivery reached the registry: %d changes", changes)
	}
}

func TestBulkRunLeavesItemsPendingWhenStopped(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	op, _ := newLockOp(t, db, 40)
	h := &bulkRun{db: db, registry: sandbox.New(db, 50*time.Millisecond), concurrency: 4, backoff: time.Millisecond}
	task := tasks.New(tasks.BulkRunPayload{BulkOpID: op.ID})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // the worker shuts down while the op runs
		for {
			var done int64
			db.Model(&models.BulkItem{}).Where("state = ?", models.ItemDone).Count(&done)
			if done >= 8 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if err := run(ctx, h, task); err == nil {
		t.Fatal("a stopped run reported success")
	}
	var pending int64
	db.Model(&models.BulkItem{}).Where("state = ?", models.ItemPending).Count(&pending)
	var got models.BulkOp
	db.First(&got, "id = ?", op.ID)
	if pending == 0 || got.State != models.BulkRunning {
		t.Fatalf("after the stop: %d pending, op %s; want items left for the retry", pending, got.State)
	}
	h.registry = sandbox.New(db, 0)
	if err := run(context.Background(), h, task); err != nil {
		t.Fatal(err)
	}
	var done, changes int64
	db.Model(&models.BulkItem{}).Where("state = ?", models.ItemDone).Count(&done)
	db.Model(&models.SandboxChange{}).Count(&changes)
	if done != 40 || changes != 40 {
		t.Errorf("after the retry %d done and %d registry changes, want 40 and 40", done, changes)
	}
}

// lostAnswerRegistry applies changes at the sandbox, but its answer to
// the change lost never comes back: it applies it, then waits until the
// run stops (as when the worker died, or its database failed, after the
// registry had the change). applied is closed once the lost change is
// applied. The change refused is refused for good, once the lost one is
// applied.
type lostAnswerRegistry struct {
	registry.Provider
	lost, refused string
	applied       chan struct{}
}

func (r *lostAnswerRegistry) UpdateDomain(ctx context.Context, name string, u registry.Update, change string) error {
	if change == r.refused {
		select {
		case <-r.applied:
			return errors.New("registry: contact handle unknown")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := r.Provider.UpdateDomain(ctx, name, u, change); err != nil || change != r.lost {
		return err
	}
	close(r.applied)
	<-ctx.Done()
	return ctx.Err()
}

// runUntilLost runs op's task through reg until reg has applied its lost
// change, and until ready says the run has gone far enough, then stops
// the run (its worker is killed) and returns its items.
func runUntilLost(t *testing.T, db *gorm.DB, h *bulkRun, reg *lostAnswerRegistry, op models.BulkOp, ready func() bool) []models.BulkItem {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.registry = reg
	ran := make(chan error, 1)
	go func() { ran <- run(ctx, h, tasks.New(tasks.BulkRunPayload{BulkOpID: op.ID})) }()
	select {
	case <-reg.applied:
	case err := <-ran:
		t.Fatalf("the run ended (%v) before the registry applied %s", err, reg.lost)
	case <-time.After(30 * time.Second):
		t.Fatalf("the registry never applied %s", reg.lost)
	}
	for deadline := time.Now().Add(30 * time.Second); !ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run did not get far enough")
		}
	}
	cancel()
	if err := <-ran; err == nil {
		t.Fatal("a stopped run reported success")
	}
	var items []models.BulkItem
	db.Where("bulk_op_id = ?", op.ID).Order("seq").Find(&items)
	return items
}

// wantStates fails t unless items are in the states want, and the item
// lost is failed saying its change may have been applied.
func wantStates(t *testing.T, db *gorm.DB, op models.BulkOp, lost int, want []string) {
	t.Helper()
	var items []models.BulkItem
	db.Where("bulk_op_id = ?", op.ID).Order("seq").Find(&items)
	for i, it := range items {
		if it.State != want[i] {
			t.Errorf("item %d (%s) is %s %q, want %s", i, it.Domain, it.State, it.Error, want[i])
		}
	}
	if it := items[lost]; !strings.Contains(it.Error, "may have been applied") || it.FinishedAt == nil {
		t.Errorf("item %d, whose change the registry applied, is %s with error %q, finished %v; want failed saying it may have been applied",
			lost, it.State, it.Error, it.FinishedAt)
	}
	var locked bool
	db.Model(&models.SandboxName{}).Where("name = ?", items[lost].Domain).Pluck("locked", &locked)
	if !locked {
		t.Errorf("%s is not locked at the registry: the test's premise failed", items[lost].Domain)
	}
	var got models.BulkOp
	db.First(&got, "id = ?", op.ID)
	if got.State != models.BulkFailed || got.FinishedAt == nil {
		t.Errorf("op %s, finished %v; want failed", got.State, got.FinishedAt)
	}
}

// An op given up by the rescue, after its task stopped 30 times, fails
// the item whose change the registry had when the last run died, rather
// than saying it was skipped: it may have been applied. Items never sent
// are skipped.
func TestBulkGiveUpFailsItemsSentToTheRegistry(t *testing.T) {
	t.Parallel()
	db, r, ob := newRescueDeps(t)
	op, items := newLockOp(t, db, 6)
	h := &bulkRun{db: db, concurrency: 1, backoff: time.Millisecond}
	reg := &lostAnswerRegistry{Provider: sandbox.New(db, 0), lost: items[2].ID, applied: make(chan struct{})}
	items = runUntilLost(t, db, h, reg, op, func() bool { return true })
	for i, want := range []string{models.ItemDone, models.ItemDone, models.ItemPending, models.ItemPending} {
		if items[i].State != want {
			t.Fatalf("after the run item %d is %s, want %s", i, items[i].State, want)
		}
	}
	// Nothing moved since, and the op used its runs up.
	hourAgo := time.Now().UTC().Add(-time.Hour)
	db.Model(&models.BulkItem{}).Where("bulk_op_id = ? AND finished_at IS NOT NULL", op.ID).Update("finished_at", hourAgo)
	db.Model(&op).Updates(map[string]any{"started_at": hourAgo, "attempts": maxBulkAttempts})
	rescuer := &rescue{db: db, outbox: ob, inspector: asynq.NewInspectorFromRedisClient(r.Client), log: quiet}
	if err := run(context.Background(), rescuer, tasks.New(tasks.JobsRescuePayload{})); err != nil {
		t.Fatal(err)
	}
	wantStates(t, db, op, 2, []string{models.ItemDone, models.ItemDone, models.ItemFailed, models.ItemSkipped, models.ItemSkipped, models.ItemSkipped})
}

// An op that stops at a failure (skip_on_error off) when its task runs
// again fails the item whose change the registry had when the run before
// died, rather than saying it was skipped.
func TestBulkStopFailsItemsSentToTheRegistry(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	op, items := newLockOp(t, db, 6)
	db.Model(&op).Update("skip_on_error", false)
	op.SkipOnError = false
	h := &bulkRun{db: db, concurrency: 2, backoff: time.Millisecond}
	reg := &lostAnswerRegistry{Provider: sandbox.New(db, 0), lost: items[0].ID, refused: items[1].ID, applied: make(chan struct{})}
	items = runUntilLost(t, db, h, reg, op, func() bool {
		var it models.BulkItem
		db.First(&it, "id = ?", items[1].ID)
		return it.State == models.ItemFailed
	})
	if items[0].State != models.ItemPending || items[2].State != models.ItemPending {
		t.Fatalf("after the run items are %s, %s, %s; want pending, failed, pending", items[0].State, items[1].State, items[2].State)
	}
	h.registry = sandbox.New(db, 0)
	if err := run(context.Background(), h, tasks.New(tasks.BulkRunPayload{BulkOpID: op.ID})); err != nil {
		t.Fatal(err)
	}
	wantStates(t, db, op, 0, []string{models.ItemFailed, models.ItemFailed, models.ItemSkipped, models.ItemSkipped, models.ItemSkipped, models.ItemSkipped})
}

// An item failed as sent but not answered, by a run that ended the op
// while another run of it had the item in flight, takes that run's
// outcome when it comes: the truer one. An item the registry refused
// keeps its failure.
func TestBulkOutcomeReplacesAFailureAsSentButNotAnswered(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	op, items := newLockOp(t, db, 2)
	db.Model(&models.Domain{}).Where("user_id = ?", op.UserID).Update("locked", false)
	ctx := context.Background()
	record := func(o ...outcome) {
		t.Helper()
		rec := &recorder{db: db, plan: bulkop.FromRow(op), userID: op.UserID}
		for _, o := range o {
			rec.add(o)
		}
		rec.flush(ctx)
		if err := rec.failure(); err != nil {
			t.Fatal(err)
		}
	}
	// Both sent; the registry refused the second, and the op ended with
	// the first's answer not recorded.
	rec := &recorder{db: db}
	for _, it := range items {
		if !rec.markSent(ctx, it) {
			t.Fatal(rec.failure())
		}
	}
	record(outcome{id: items[1].ID, domain: items[1].Domain, state: models.ItemFailed, err: "registry refused the change: no", attempts: 1})
	if err := finishBulk(db, op.ID, models.BulkFailed, "given up", time.Now()); err != nil {
		t.Fatal(err)
	}
	var ended models.BulkItem
	if db.First(&ended, "id = ?", items[0].ID); ended.State != models.ItemFailed || ended.Error != sentNotRecorded {
		t.Fatalf("the item in flight when the op ended is %s %q, want failed as sent", ended.State, ended.Error)
	}
	// The other run's answers come.
	record(outcome{id: items[0].ID, domain: items[0].Domain, state: models.ItemDone, attempts: 1},
		outcome{id: items[1].ID, domain: items[1].Domain, state: models.ItemDone, attempts: 1})
	want := []string{models.ItemDone, models.ItemFailed}
	for i, it := range items {
		var got models.BulkItem
		db.First(&got, "id = ?", it.ID)
		var d models.Domain
		db.First(&d, "name = ?", it.Domain)
		if got.State != want[i] || d.Locked != (want[i] == models.ItemDone) {
			t.Errorf("item %d is %s %q, its domain locked %v; want %s", i, got.State, got.Error, d.Locked, want[i])
		}
	}
}

// An item whose mark as sent cannot be written is not sent: the run fails,
// leaving it pending for the retry.
func TestBulkRunSendsNoItemItCouldNotMarkSent(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	op, items := newLockOp(t, db, 4)
	down := errors.New("database down")
	err := db.Callback().Update().Before("gorm:update").Register("test:fail_marks", func(tx *gorm.DB) {
		if m, ok := tx.Statement.Dest.(map[string]any); ok && m["sent_at"] != nil {
			tx.AddError(down)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := &countingRegistry{Provider: sandbox.New(db, 0), calls: map[string]int{}}
	h := &bulkRun{db: db, registry: reg, concurrency: 2, backoff: time.Millisecond}
	if err := run(context.Background(), h, tasks.New(tasks.BulkRunPayload{BulkOpID: op.ID})); !errors.Is(err, down) {
		t.Errorf("run = %v, want the mark's failure", err)
	}
	var pending int64
	db.Model(&models.BulkItem{}).Where("bulk_op_id = ? AND state = ?", op.ID, models.ItemPending).Count(&pending)
	if len(reg.calls) != 0 || pending != int64(len(items)) {
		t.Errorf("%d changes sent, %d of %d items pending; want none sent, all pending", len(reg.calls), pending, len(items))
	}
}
