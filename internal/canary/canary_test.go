package canary

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

func TestCanaryCreateRunAndResume(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ob := outbox.New(db, platformtest.NewRedis(t).Client, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { ob.Close() })
	s := New(db, ob)
	ctx := context.Background()
	for _, bad := range [][2]int{{0, 10}, {MaxSteps + 1, 10}, {3, -1}, {3, MaxStepMillis + 1}} {
		if _, err := s.Create(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("a canary of %d steps of %d ms was made", bad[0], bad[1])
		}
	}
	c, err := s.Create(ctx, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	var queued int64
	db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeCanaryRun).Count(&queued)
	if queued != 1 {
		t.Errorf("%d canary:run tasks, want 1", queued)
	}
	// A run killed after two steps: the next writes the other two, once.
	for step := range 2 {
		db.Create(&models.CanaryStep{CanaryID: c.ID, Step: step, Attempt: 1})
	}
	db.Model(&c).Update("attempts", 1)
	c.Attempts = 1
	if err := s.Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, done, err := s.Get(ctx, c.ID)
	if err != nil || done != 4 || got.CompletedAt == nil || got.Attempts != 2 {
		t.Errorf("after the resumed run: %+v, %d steps, %v", got, done, err)
	}
	var second int64
	db.Model(&models.CanaryStep{}).Where("canary_id = ? AND attempt = 2", c.ID).Count(&second)
	if second != 2 {
		t.Errorf("the second attempt wrote %d steps, want the two missing", second)
	}
	if _, _, err := s.Get(ctx, "nosuch"); err == nil {
		t.Error("an unknown canary was found")
	} else if e, _ := fault.As(err); e == nil || e.Code != fault.NotFound {
		t.Errorf("an unknown canary: %v", err)
	}
}
