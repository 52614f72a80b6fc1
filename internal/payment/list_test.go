package payment

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Finance's list of payments walks page by page each payment once, newest
// first, whole or of one status; and a page in the middle reads about its
// own rows, by the index of the payments' creation or of their status,
// not every newer payment first.
func TestPaymentPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	b := NewBook(db, nil, nil, []byte("test-secret-key-0123456789abcdef"), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 3000
	var payments []models.Payment
	for i := range n {
		status := models.PaymentSucceeded
		if i%10 == 3 {
			status = models.PaymentFailed
		}
		payments = append(payments, models.Payment{ID: fmt.Sprintf("pay_%05d", i), Provider: SandboxName, SessionID: fmt.Sprintf("sess_%05d", i),
			PartnerID: fmt.Sprintf("prt_%d", i%7), Environment: models.EnvSandbox, Domain: fmt.Sprintf("paid%05d.com", i),
			IdempotencyKey: fmt.Sprintf("key_%05d", i), AmountCents: 900, Currency: "USD", Status: status,
			CreatedAt: start.Add(time.Duration(i/2) * time.Second), UpdatedAt: start})
	}
	if err := db.CreateInBatches(payments, 500).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The newest first: the later of two made in the same second is the
	// one whose id sorts last, as pay_%05d numbers them.
	newestFirst := func(status string) []string {
		var want []string
		for i := n - 1; i >= 0; i-- {
			if status == "" || payments[i].Status == status {
				want = append(want, payments[i].ID)
			}
		}
		return want
	}
	for _, l := range []struct {
		name   string
		filter Filter
		read   float64 // the most rows a page in the middle may read: the page and the next one's first
	}{
		{"every payment", Filter{Limit: 100}, 101},
		{"the failed payments", Filter{Status: models.PaymentFailed, Limit: 30}, 31},
	} {
		pagecursortest.Check(t, db, "payments", pagecursortest.List[View]{
			Name: l.name, Want: newestFirst(l.filter.Status), Read: l.read, ID: func(v View) string { return v.ID },
			Page: func(cursor string) ([]View, string, error) {
				f := l.filter
				f.Cursor = cursor
				return b.List(ctx, f)
			}})
	}
}
