package models_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Marking outbox entries enqueued sets the time on those named, whatever
// their number, and on no other; no names mark nothing.
func TestMarkOutboxEnqueuedMarksThoseNamed(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	entries := make([]*models.OutboxEntry, 1500)
	for i := range entries {
		entries[i] = &models.OutboxEntry{ID: uuid.NewString(), TaskType: "t", Payload: []byte("{}"), Queue: "q"}
	}
	if err := models.InsertOutboxEntries(db, entries); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	marked := map[string]bool{}
	for _, part := range [][]*models.OutboxEntry{entries[:1], entries[10:13], entries[100:1100], entries[1200:1200]} {
		var ids []string
		for _, e := range part {
			ids = append(ids, e.ID)
			marked[e.ID] = true
		}
		if err := models.MarkOutboxEnqueued(db, ids, at); err != nil {
			t.Fatal(err)
		}
	}
	var got []models.OutboxEntry
	if err := db.Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range got {
		switch {
		case marked[e.ID] && (e.EnqueuedAt == nil || !e.EnqueuedAt.Equal(at)):
			t.Errorf("entry %s: enqueued at %v, want %v", e.ID, e.EnqueuedAt, at)
		case !marked[e.ID] && e.EnqueuedAt != nil:
			t.Errorf("entry %s, not named, marked enqueued at %v", e.ID, e.EnqueuedAt)
		case marked[e.ID]:
			n++
		}
	}
	if n != 1004 {
		t.Errorf("%d entries marked, want 1004", n)
	}
}
