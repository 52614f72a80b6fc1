package payment

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Finance's list of payments walks page by page each payment once, newest
// first, whole or of one status; and a page in the middle reads about its
// own rows, by the index of the payments' creation or of their status,
// not every newer payment first.
func TestPaymentPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
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
	if err := bk.db.CreateInBatches(payments, 500).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// walk returns the ids of f's pages in their order and the cursors of
	// the pages after the first.
	walk := func(f Filter) (ids, cursors []string) {
		for {
			page, next, err := bk.b.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page {
				ids = append(ids, p.ID)
			}
			if f.Cursor = next; next == "" {
				return ids, cursors
			}
			cursors = append(cursors, next)
		}
	}
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
	all, cursors := walk(Filter{Limit: 100})
	failed, failedCursors := walk(Filter{Status: models.PaymentFailed, Limit: 30})
	for _, w := range []struct {
		what      string
		got, want []string
	}{{"every payment", all, newestFirst("")}, {"the failed payments", failed, newestFirst(models.PaymentFailed)}} {
		if !slices.Equal(w.got, w.want) {
			t.Errorf("walking %s gave %d payments, want %d, each once, newest first", w.what, len(w.got), len(w.want))
		}
	}
	if !models.IsPostgres(bk.db) {
		return // the plans are Postgres's
	}
	if err := bk.db.Exec("ANALYZE payments").Error; err != nil {
		t.Fatal(err)
	}
	// A page and the next one's first.
	read := modelstest.RowsReadBy(t, bk.db, `FROM "payments"`, func() error {
		_, _, err := bk.b.List(ctx, Filter{Limit: 100, Cursor: cursors[len(cursors)/2]})
		return err
	})
	if read > 101 {
		t.Errorf("a page of 100 in the middle of every payment read %v rows; want at most 101", read)
	}
	read = modelstest.RowsReadBy(t, bk.db, `FROM "payments"`, func() error {
		_, _, err := bk.b.List(ctx, Filter{Status: models.PaymentFailed, Limit: 30, Cursor: failedCursors[len(failedCursors)/2]})
		return err
	})
	if read > 31 {
		t.Errorf("a page of 30 in the middle of the failed payments read %v rows; want at most 31", read)
	}
}
