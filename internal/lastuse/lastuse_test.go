package lastuse

import (
	"context"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// A key's use is written at most once a minute: within the minute after
// it asked, a process does not query at all, and a row written by another
// process in the last minute is not written again.
func TestTouchWritesAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if err := db.Create(&models.APIKey{ID: "dk_1", UserID: "u1", Name: "k", SecretHash: "h", CreatedAt: start}).Error; err != nil {
		t.Fatal(err)
	}
	now := start
	clock := func() time.Time { return now }
	here, there := New(db, &models.APIKey{}, "id", clock), New(db, &models.APIKey{}, "id", clock)
	lastUsed := func() time.Time {
		var k models.APIKey
		db.Take(&k, "id = ?", "dk_1")
		if k.LastUsedAt == nil {
			return time.Time{}
		}
		return k.LastUsedAt.UTC()
	}
	ctx := context.Background()
	for _, step := range []struct {
		after time.Duration
		r     *Recorder
		want  time.Time
	}{
		{0, here, start},
		{30 * time.Second, here, start},                          // asked within the minute: no query
		{40 * time.Second, there, start},                         // another process: the row says it is recent
		{101 * time.Second, there, start.Add(101 * time.Second)}, // a minute after it asked
		{130 * time.Second, here, start.Add(101 * time.Second)},  // the row is recent again
		{200 * time.Second, here, start.Add(200 * time.Second)},
	} {
		now = start.Add(step.after)
		if err := step.r.Touch(ctx, "dk_1"); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); !got.Equal(step.want) {
			t.Errorf("after %s: last used %s, want %s", step.after, got, step.want)
		}
	}
}
