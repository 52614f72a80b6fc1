package payout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The payouts walk page by page each once, newest period first, for ops
// (all of them, or of one status) and for a partner; and a page in the
// middle reads about its own rows, not a whole period of every partner's
// payouts nor the payouts of another status first.
func TestPayoutPagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t) // payouts alone, without the ledger lines they would pay
	s := New(db, []byte("test-secret-key-0123456789abcdef"), func() time.Time { return settled })
	const periods, partners = 20, 300
	var payouts []models.Payout
	for p := range periods {
		start := week.Start.AddDate(0, 0, 7*(p-periods+1))
		for i := range partners {
			// The last two periods' are pending, and some older ones not
			// paid yet.
			status := models.PayoutPaid
			if p >= periods-2 || i%25 == 3 {
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
	status := func(s string) func(models.Payout) bool { return func(p models.Payout) bool { return p.Status == s } }
	for _, l := range []struct {
		name   string
		filter Filter
		keep   func(models.Payout) bool
		read   float64 // the most rows a page in the middle may read: the page and the next one's first
	}{
		{"every payout", Filter{Limit: 100}, func(models.Payout) bool { return true }, 101},
		// Most are paid: a walk of every payout that skips the few pending
		// may read them as well as the status's index.
		{"the paid payouts", Filter{Status: models.PayoutPaid, Limit: 100}, status(models.PayoutPaid), 110},
		{"the pending payouts", Filter{Status: models.PayoutPending, Limit: 100}, status(models.PayoutPending), 101},
		{"a partner's", Filter{PartnerID: "prt_007", Environment: models.EnvLive, Limit: 5}, func(p models.Payout) bool { return p.PartnerID == "prt_007" }, 6},
	} {
		pagecursortest.Check(t, db, "payouts", pagecursortest.List[models.Payout]{
			Name: l.name, Want: newestFirst(l.keep), Read: l.read, ID: func(p models.Payout) string { return p.ID },
			Page: func(cursor string) ([]models.Payout, string, error) {
				f := l.filter
				f.Cursor = cursor
				return s.List(ctx, f)
			}})
	}
}
