package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

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
