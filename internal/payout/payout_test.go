package payout

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

var (
	week    = period.Period{Start: time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}
	settled = time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
)

// books is a database with the ledger lines of a period's sales.
type books struct {
	s  *Service
	db *gorm.DB
}

func newBooks(t *testing.T) *books {
	t.Helper()
	db := modelstest.NewDB(t)
	ledgertest.CheckAtEnd(t, db)
	return &books{s: New(db, []byte("test-secret-key-0123456789abcdef"), func() time.Time { return settled }), db: db}
}

// sale records a hosted sale of partnerID settled in the period starting
// at start (nil: not settled) with its ledger lines.
func (b *books) sale(t *testing.T, partnerID, currency string, gross, commission int64, start *time.Time) {
	t.Helper()
	id := fmt.Sprintf("ord_%s_%d_%d", partnerID, gross, commission)
	o := models.Order{PublicID: id, PartnerID: partnerID, Environment: models.EnvLive, ListingID: id, Domain: id + ".com",
		Status: models.OrderSettled, Review: models.ReviewNone, SalePriceCents: gross, CommissionCents: commission, Currency: currency,
		PaymentModel: models.PaymentHosted, BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "ch",
		SettledPeriod: start, CreatedAt: week.Start, UpdatedAt: week.Start}
	if err := b.db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	ref := ledger.Ref{PartnerID: partnerID, Environment: models.EnvLive, Currency: currency, Kind: ledger.KindSale, OrderID: &o.PublicID}
	if err := ledger.Post(b.db, ref, week.Start.Add(time.Hour), ledger.Sale(models.PaymentHosted, gross, commission)...); err != nil {
		t.Fatal(err)
	}
}

func (b *books) payouts(t *testing.T) map[string]int64 {
	t.Helper()
	var ps []models.Payout
	if err := b.db.Find(&ps).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range ps {
		out[p.PartnerID+" "+p.Currency+" "+p.Status] = p.AmountCents
	}
	return out
}

// A period's run opens one payout per partner and currency its settled
// hosted sales leave owed, once however often it runs; sales of another
// period, or not settled, are not in it.
func TestOpenPaysWhatTheSettledSalesOwe(t *testing.T) {
	t.Parallel()
	b := newBooks(t)
	start, other := week.Start, week.Start.AddDate(0, 0, -7)
	b.sale(t, "prt_a", "USD", 10_000, 1_500, &start)
	b.sale(t, "prt_a", "USD", 20_000, 3_000, &start)
	b.sale(t, "prt_a", "EUR", 5_000, 500, &start)
	b.sale(t, "prt_b", "USD", 8_000, 800, &other)
	b.sale(t, "prt_c", "USD", 9_000, 900, nil)
	for range 2 {
		if err := Open(b.db, week, settled); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"prt_a USD pending": 4_500, "prt_a EUR pending": 500}
	if got := b.payouts(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("payouts = %v, want %v", got, want)
	}
}

// Marking a payout paid posts it to the ledger once: again with the same
// reference changes nothing, with another is a conflict, and five at once
// make one posting. Bad references and unknown payouts change nothing.
func TestMarkPaidPostsOnce(t *testing.T) {
	t.Parallel()
	b := newBooks(t)
	ctx := context.Background()
	start := week.Start
	b.sale(t, "prt_a", "USD", 10_000, 1_500, &start)
	if err := Open(b.db, week, settled); err != nil {
		t.Fatal(err)
	}
	var p models.Payout
	b.db.Take(&p)
	for _, tc := range []struct{ name, ref string }{
		{"empty", "  "}, {"too long", strings.Repeat("x", models.MaxReference+1)}, {"control character", "SEPA\n42"},
	} {
		_, err := b.s.MarkPaid(ctx, p.ID, tc.ref)
		if e, ok := fault.As(err); !ok || e.Code != fault.Validation || e.Field != "reference" {
			t.Errorf("%s reference: %v, want a validation error of reference", tc.name, err)
		}
	}
	if _, err := b.s.MarkPaid(ctx, "po_nosuch", "SEPA-1"); !isCode(err, fault.NotFound) {
		t.Errorf("an unknown payout: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.s.MarkPaid(ctx, p.ID, " SEPA-1 ") })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("marking paid at once: %v", err)
		}
	}
	if _, err := b.s.MarkPaid(ctx, p.ID, "SEPA-2"); !isCode(err, fault.Conflict) {
		t.Errorf("another reference: %v, want a conflict", err)
	}
	var paid models.Payout
	b.db.Take(&paid, "id = ?", p.ID)
	var postings, cash int64
	b.db.Model(&models.LedgerEntry{}).Where("payout_id = ? AND account = ?", p.ID, ledger.Payable).Count(&postings)
	b.db.Model(&models.LedgerEntry{}).Where("payout_id = ? AND account = ?", p.ID, ledger.Cash).Select("SUM(amount_cents)").Scan(&cash)
	if paid.Status != models.PayoutPaid || paid.Reference != "SEPA-1" || paid.PaidAt == nil || postings != 1 || cash != -1_500 {
		t.Errorf("after marking paid: %+v, %d payable postings, cash %d", paid, postings, cash)
	}
}

func isCode(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}

// Lists are newest period first, filtered and paged; totals add up paid
// and pending by currency.
func TestListAndTotals(t *testing.T) {
	t.Parallel()
	b := newBooks(t)
	ctx := context.Background()
	for i := range 3 {
		start := week.Start.AddDate(0, 0, -7*i)
		b.sale(t, "prt_a", "USD", int64(10_000*(i+1)), int64(1_000*(i+1)), &start)
		if err := Open(b.db, period.Period{Start: start, End: start.AddDate(0, 0, 7)}, settled); err != nil {
			t.Fatal(err)
		}
	}
	var oldest models.Payout
	b.db.Order("period_start").Take(&oldest)
	if _, err := b.s.MarkPaid(ctx, oldest.ID, "SEPA-old"); err != nil {
		t.Fatal(err)
	}
	page, next, err := b.s.List(ctx, Filter{PartnerID: "prt_a", Limit: 2})
	if err != nil || len(page) != 2 || next == "" || !page[0].PeriodStart.Equal(week.Start) || !page[0].PeriodStart.After(page[1].PeriodStart) {
		t.Fatalf("first page = %+v, %q, %v", page, next, err)
	}
	rest, last, err := b.s.List(ctx, Filter{PartnerID: "prt_a", Limit: 2, Cursor: next})
	if err != nil || len(rest) != 1 || last != "" || rest[0].ID != oldest.ID {
		t.Errorf("second page = %+v, %q, %v", rest, last, err)
	}
	if paid, _, err := b.s.List(ctx, Filter{Status: models.PayoutPaid}); err != nil || len(paid) != 1 {
		t.Errorf("paid payouts = %+v, %v", paid, err)
	}
	if _, _, err := b.s.List(ctx, Filter{Status: "settled"}); !isCode(err, fault.Validation) {
		t.Errorf("a status that is not one: %v", err)
	}
	if _, _, err := b.s.List(ctx, Filter{Status: models.PayoutPaid, Cursor: next}); !isCode(err, fault.InvalidCursor) {
		t.Errorf("a cursor of other filters: %v", err)
	}
	totals, err := b.s.Totals(ctx, "prt_a", models.EnvLive)
	if err != nil || len(totals) != 1 || totals[0] != (Total{Currency: "USD", PaidCents: 3_000, PendingCents: 3_000}) {
		t.Errorf("totals = %+v, %v", totals, err)
	}
}
