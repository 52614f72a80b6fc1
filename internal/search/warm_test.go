package search

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
	"github.com/hibiken/asynq"
)

func TestWarmupsNeverWaitAndCloseWaits(t *testing.T) {
	running := make(chan string)
	var returned atomic.Int32
	w := newWarmups(func(ctx context.Context, _, domain string) {
		running <- domain
		<-ctx.Done() // only close ends a warm-up here
		returned.Add(1)
	})
	ctx := context.Background()
	for i := range warmWorkers {
		if !w.add(ctx, "client", fmt.Sprintf("run%d.com", i)) {
			t.Fatalf("warm-up %d not queued", i)
		}
		<-running
	}
	for i := range warmQueue { // the workers are busy: these wait in the queue
		if !w.add(ctx, "client", fmt.Sprintf("queued%d.com", i)) {
			t.Fatalf("queued warm-up %d refused", i)
		}
	}
	if w.add(ctx, "client", "overflow.com") {
		t.Error("a warm-up beyond the full queue was queued, not dropped")
	}
	w.close()
	if n := returned.Load(); n != warmWorkers {
		t.Errorf("close returned when %d of %d running warm-ups had", n, warmWorkers)
	}
	if w.add(ctx, "client", "late.com") {
		t.Error("a warm-up was queued after close")
	}
}

// Searches start lookups nobody asked for by name: they are bounded per
// client address and, for all clients together, per TLD.
func TestWarmupsAreBoundedPerClientAndPerTLD(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	r := platformtest.NewRedis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ob := outbox.New(db, r.Client, log)
	t.Cleanup(func() { ob.Close() })
	cache := lookup.NewCache(r.Client, log)
	t.Cleanup(cache.Close)
	s := New(Deps{Lookups: cache, Whois: lookup.NewQueue(db, ob, cache), Limiter: ratelimit.New(r.Client, time.Now), Log: log})
	t.Cleanup(s.Close)
	ctx := context.Background()
	lookups := func(like string) int64 {
		var n int64
		db.Model(&models.Lookup{}).Where("domain LIKE ?", like).Count(&n)
		return n
	}
	tlds := []string{"com", "net", "org"} // under the TLD budget each
	for i := range warmupClientLimit.Limit + 20 {
		s.Warm(ctx, "198.51.100.1", fmt.Sprintf("greedy%d.%s", i, tlds[i%len(tlds)]))
	}
	if n := lookups("greedy%"); n != int64(warmupClientLimit.Limit) {
		t.Errorf("one client's searches started %d lookups, want its budget of %d", n, warmupClientLimit.Limit)
	}
	for i := range warmupTLDLimit.Limit + 10 { // many clients, one TLD
		s.Warm(ctx, fmt.Sprintf("203.0.113.%d", i%200), fmt.Sprintf("crowd%d.io", i))
	}
	if n := lookups("crowd%"); n != int64(warmupTLDLimit.Limit) {
		t.Errorf("all clients together started %d lookups of .io names, want the TLD's budget of %d", n, warmupTLDLimit.Limit)
	}
	s.Warm(ctx, "203.0.113.250", "fresh.net")
	if n := lookups("fresh.net"); n != 1 {
		t.Errorf("a new client's warm-up of another TLD started %d lookups, want 1 (a refused TLD gives the client's unit back)", n)
	}
	var entries []models.OutboxEntry
	db.Where("task_type = ?", tasks.TypeLookupRun).Find(&entries)
	for _, e := range entries {
		if p, err := tasks.Decode[tasks.LookupRunPayload](asynq.NewTask(e.TaskType, e.Payload)); err != nil || !p.Background {
			t.Fatalf("a warm-up's task %s = %+v, %v; want it marked background", e.Payload, p, err)
		}
	}
}
