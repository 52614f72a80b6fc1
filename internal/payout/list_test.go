package payout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The payouts walk page by page each once, newest period first, for ops
// (all of them, or of one status) and for a partner; and a page in the
// middle reads about its own rows, not a whole period of every partner's
// payouts nor every newer payout first.
func TestPayoutPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t) // payouts alone, without the ledger lines they would pay
	s := New(db, []byte("test-secret-key-0123456789abcdef"), func() time.Time { return settled })
	const periods, partners = 20, 300
	var payouts []models.Payout
	for p := range periods {
		start := week.Start.AddDate(0, 0, 7*(p-periods+1))
		for i := range partners {
			status := models.PayoutPaid
			if p >= periods-2 {
				status = models.PayoutPending
			}
			payouts = append(payouts, models.Payout{ID: fmt.Sprintf("po_%02d_%03d", p, i), PartnerID: fmt.Sprintf("prt_%03d", i),
				Environment: models.EnvLive, Currency: "USD", PeriodStart: start, PeriodEnd: start.AddDate(0, 0, 7),
				AmountCents: 1000, Status: status, CreatedAt: start.AddDate(0, 0, 7)})
		}
	}
	if err := db.CreateInBatches(payouts, 500).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// walk returns the ids of f's pages in their order and the cursors of
	// the pages after the first.
	walk := func(f Filter) (ids, cursors []string) {
		for {
			page, next, err := s.List(ctx, f)
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
	// The newest period first, and in a period the greatest id first: the
	// ids, po_<period>_<partner>, sort that way.
	newestFirst := func(keep func(models.Payout) bool) []string {
		var want []string
		for _, p := range payouts {
			if keep(p) {
				want = append(want, p.ID)
			}
		}
		slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })
		return want
	}
	filters := []struct {
		name   string
		filter Filter
		keep   func(models.Payout) bool
		read   float64 // the most rows a page in the middle may read
	}{
		// A page and the next one's first.
		{"every payout", Filter{Limit: 100}, func(models.Payout) bool { return true }, 101},
		{"the paid payouts", Filter{Status: models.PayoutPaid, Limit: 100}, func(p models.Payout) bool { return p.Status == models.PayoutPaid }, 101},
		{"the pending payouts", Filter{Status: models.PayoutPending, Limit: 100}, func(p models.Payout) bool { return p.Status == models.PayoutPending }, 101},
		{"a partner's", Filter{PartnerID: "prt_007", Environment: models.EnvLive, Limit: 5}, func(p models.Payout) bool { return p.PartnerID == "prt_007" }, 6},
	}
	cursors := make([][]string, len(filters))
	for i, f := range filters {
		var ids []string
		ids, cursors[i] = walk(f.filter)
		if want := newestFirst(f.keep); !slices.Equal(ids, want) {
			t.Errorf("walking %s gave %d payouts, want %d, each once, newest period first", f.name, len(ids), len(want))
		}
	}
	if !models.IsPostgres(db) {
		return // the plans are Postgres's
	}
	if err := db.Exec("ANALYZE payouts").Error; err != nil {
		t.Fatal(err)
	}
	for i, f := range filters {
		f.filter.Cursor = cursors[i][len(cursors[i])/2]
		read := modelstest.RowsReadBy(t, db, `FROM "payouts"`, func() error {
			_, _, err := s.List(ctx, f.filter)
			return err
		})
		if read > f.read {
			t.Errorf("a page of %d in the middle of %s read %v rows; want at most %v", f.filter.Limit, f.name, read, f.read)
		}
	}
}
