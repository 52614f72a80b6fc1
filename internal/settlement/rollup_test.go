package settlement

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
)

// Totals read from the daily roll-ups are the totals of the lines, for
// spans of whole days, part days, days not rolled up yet, and every
// filter; a day is rolled up once, and only once it is over.
func TestRollupsGiveTheTotalsOfTheLines(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.day23(t) // sales on the 23rd (and a refund) and on the 24th
	w.now = nextDay.Add(2*oneDay + 9*time.Hour)
	w.sell(t, "prt_a", "after-the-rollup.com", 4_000, true) // on the 26th, not rolled up

	at := func(d time.Duration) *time.Time { t := day.Add(d); return &t }
	filters := map[string]TransactionFilter{
		"all":               {},
		"hosted":            {PaymentModel: models.PaymentHosted},
		"partner collected": {PaymentModel: models.PaymentPartnerCollected},
		"whole days":        {From: at(0), To: at(2 * oneDay)},
		"part days":         {From: at(8 * time.Hour), To: at(oneDay + 11*time.Hour)},
		"from a part day":   {From: at(9*time.Hour + time.Second)},
		"to a part day":     {To: at(3*oneDay + 10*time.Hour)},
		"an order status":   {OrderStatus: models.OrderTransferCompleted},
	}
	before := map[string][]TransactionTotals{}
	for name, f := range filters {
		f.PartnerID, f.Environment = "prt_a", models.EnvSandbox
		_, _, totals, err := w.s.Transactions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = totals
	}
	if before["all"][0].Count != 7 || before["whole days"][0].Count != 6 || before["part days"][0].Count != 6 || before["from a part day"][0].Count != 2 {
		t.Fatalf("the lines' totals are not the test's: %+v", before)
	}

	days, err := w.s.RollUp(ctx)
	if err != nil || days != 3 { // the 23rd, 24th and 25th; the 26th is not over
		t.Fatalf("RollUp = %d days, %v; want 3", days, err)
	}
	if again, err := w.s.RollUp(ctx); err != nil || again != 0 {
		t.Errorf("RollUp again = %d, %v; want nothing to do", again, err)
	}
	var rows []models.LedgerDay
	w.db.Where("partner_id = ?", "prt_a").Order("day, payment_model").Find(&rows)
	if len(rows) != 3 || !rows[0].Day.Equal(day) || rows[0].PaymentModel != models.PaymentHosted || rows[0].GMVCents != 5_000 ||
		rows[1].PaymentModel != models.PaymentPartnerCollected || rows[1].Count != 4 || rows[1].GMVCents != 137_000 || !rows[2].Day.Equal(nextDay) {
		t.Errorf("prt_a's days = %+v", rows)
	}
	for name, f := range filters {
		f.PartnerID, f.Environment = "prt_a", models.EnvSandbox
		_, _, totals, err := w.s.Transactions(ctx, f)
		if err != nil || !slices.Equal(totals, before[name]) {
			t.Errorf("%s: totals after the roll-up = %+v, %v; want %+v", name, totals, err, before[name])
		}
	}
	// The roll-ups are read: a day's row changed (as no line ever is)
	// changes the totals of a span holding the whole day.
	w.db.Model(&models.LedgerDay{}).Where("partner_id = ? AND day = ?", "prt_a", nextDay).Update("count", 100)
	if _, _, totals, _ := w.s.Transactions(ctx, TransactionFilter{PartnerID: "prt_a", Environment: models.EnvSandbox}); totals[0].Count != 106 {
		t.Errorf("totals with a changed roll-up = %+v: the roll-up was not read", totals)
	}
}
