package settlement

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
)

// A finished run opens a payout for each partner the service owes the
// commission of hosted sales; finance marks it paid once, which moves the
// partner's payable to cash in the ledger.
func TestRunOpensPayoutsThatFinancePays(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.day23(t)
	w.now = day.Add(10 * time.Hour)
	b2 := w.sell(t, "prt_b", "hosted-for-b.com", 20_001, true) // 10 % of 200.01 → 2,000 cents (half to even)
	w.deliver(t, b2)
	w.now = nextDay.Add(2 * time.Hour)
	run, err := w.s.Request(ctx, day, TriggerOps)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second delivery of the task opens nothing more
		if err := w.s.Run(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	payouts := payout.New(w.db, []byte("test-secret-key-0123456789abcdef"), func() time.Time { return w.now })
	all, next, err := payouts.List(ctx, payout.Filter{})
	if err != nil || next != "" || len(all) != 2 {
		t.Fatalf("payouts = %+v, %q, %v; want two", all, next, err)
	}
	owed := map[string]int64{}
	for _, p := range all {
		if p.Status != models.PayoutPending || p.Currency != "USD" || !p.PeriodStart.Equal(day) || !p.PeriodEnd.Equal(nextDay) || p.PaidAt != nil {
			t.Errorf("payout %+v, want pending USD of the day", p)
		}
		owed[p.PartnerID] = p.AmountCents
	}
	if owed["prt_a"] != 750 || owed["prt_b"] != 2_000 {
		t.Errorf("owed %v, want prt_a 750 and prt_b 2000", owed)
	}

	page, next, err := payouts.List(ctx, payout.Filter{Limit: 1})
	if err != nil || len(page) != 1 || next == "" {
		t.Fatalf("a page of one = %+v, %q, %v", page, next, err)
	}
	rest, last, err := payouts.List(ctx, payout.Filter{Limit: 1, Cursor: next})
	if err != nil || len(rest) != 1 || rest[0].ID == page[0].ID || last != "" {
		t.Errorf("the next page = %+v, %q, %v", rest, last, err)
	}
	if _, _, err := payouts.List(ctx, payout.Filter{Limit: 1, Status: models.PayoutPaid, Cursor: next}); !isCode(err, fault.InvalidCursor) {
		t.Errorf("a cursor of another filter = %v, want invalid_cursor", err)
	}
	if _, _, err := payouts.List(ctx, payout.Filter{Status: "sent"}); !isCode(err, fault.Validation) {
		t.Errorf("status sent = %v, want validation_failed", err)
	}

	var a models.Payout
	for _, p := range all {
		if p.PartnerID == "prt_a" {
			a = p
		}
	}
	for _, ref := range []string{"", "  ", "wire\n1", string(make([]byte, models.MaxReference+1))} {
		if _, err := payouts.MarkPaid(ctx, a.ID, ref); !isCode(err, fault.Validation) {
			t.Errorf("reference %q = %v, want validation_failed", ref, err)
		}
	}
	if _, err := payouts.MarkPaid(ctx, "po_nothing", "wire-1"); !isCode(err, fault.NotFound) {
		t.Errorf("an unknown payout = %v, want not_found", err)
	}
	w.wantPayable(t, "prt_a", -750)
	paid, err := payouts.MarkPaid(ctx, a.ID, " wire-1 ")
	if err != nil || paid.Status != models.PayoutPaid || paid.Reference != "wire-1" || paid.PaidAt == nil || !paid.PaidAt.Equal(w.now) {
		t.Fatalf("mark paid = %+v, %v", paid, err)
	}
	w.wantPayable(t, "prt_a", 0)
	if again, err := payouts.MarkPaid(ctx, a.ID, "wire-1"); err != nil || again.Status != models.PayoutPaid {
		t.Errorf("marking it paid again = %+v, %v", again, err)
	}
	if _, err := payouts.MarkPaid(ctx, a.ID, "wire-2"); !isCode(err, fault.Conflict) {
		t.Errorf("paid again with another reference = %v, want conflict", err)
	}
	w.wantPayable(t, "prt_a", 0) // posted once
	if pending, _, err := payouts.List(ctx, payout.Filter{Status: models.PayoutPending}); err != nil || len(pending) != 1 || pending[0].PartnerID != "prt_b" {
		t.Errorf("pending after = %+v, %v; want prt_b's", pending, err)
	}
	var lines []models.LedgerEntry
	w.db.Where("payout_id = ?", a.ID).Order("account").Find(&lines)
	if len(lines) != 2 || lines[0].Account != ledger.Cash || lines[0].AmountCents != -750 || lines[1].Account != ledger.Payable ||
		lines[1].AmountCents != 750 || lines[0].Kind != ledger.KindPayout {
		t.Errorf("the payout's ledger lines = %+v", lines)
	}
}

// wantPayable fails unless the ledger's partner_payable balance of
// partnerID is cents (negative: owed to the partner).
func (w *world) wantPayable(t *testing.T, partnerID string, cents int64) {
	t.Helper()
	var sum int64
	w.db.Model(&models.LedgerEntry{}).Where("partner_id = ? AND account = ?", partnerID, ledger.Payable).
		Select("COALESCE(SUM(amount_cents), 0)").Scan(&sum)
	if sum != cents {
		t.Errorf("%s's payable balance is %d cents, want %d", partnerID, sum, cents)
	}
}

// A run's payouts add the partner's commission of the brokered deals
// closed in the period to that of its hosted sales settled in it; a deal
// closed after the period's end waits for the next.
func TestRunPaysBrokerageCommission(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	ob := outbox.New(w.db, platformtest.NewRedis(t).Client, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { ob.Close() })
	brokered := brokerage.New(w.db, ob, nil, nil, brokerage.Options{BaseURL: "http://api.test", SecretKey: []byte("test-secret-key-0123456789abcdef")},
		func() time.Time { return w.now })
	deal := func(partnerID, domain string, price int64) {
		t.Helper()
		c := models.BrokerageCase{ID: "bc_" + domain, PartnerID: partnerID, Environment: models.EnvSandbox, Domain: domain, Tier: models.TierSelfServe,
			BuyerEmail: "ada@example.com", BudgetCents: price, Currency: "USD", Status: models.CaseNegotiating, CreatedAt: w.now, UpdatedAt: w.now}
		if err := w.db.Create(&c).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := brokered.Move(ctx, c.ID, brokerage.CloseDeal, brokerage.MoveInput{PriceCents: price}); err != nil {
			t.Fatal(err)
		}
	}
	w.now = day.Add(10 * time.Hour)
	hosted := w.sell(t, "prt_a", "hosted-and-brokered.com", 5_000, true) // commission 750
	w.deliver(t, hosted)
	deal("prt_a", "brokered.com", 2_500_000) // fee 8 %: 200,000; prt_a's 15 %: 30,000
	deal("prt_b", "brokered-b.com", 12_345)  // fee 987.6 → 988; prt_b's 10 %: 98.8 → 99
	w.now = nextDay.Add(time.Hour)
	deal("prt_b", "brokered-late.com", 1_000_000) // the next period's
	w.now = nextDay.Add(2 * time.Hour)
	run, err := w.s.Request(ctx, day, TriggerOps)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.s.Run(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	var payouts []models.Payout
	w.db.Where("period_start = ?", day).Find(&payouts)
	owed := map[string]int64{}
	for _, p := range payouts {
		owed[p.PartnerID] = p.AmountCents
	}
	if len(payouts) != 2 || owed["prt_a"] != 30_750 || owed["prt_b"] != 99 {
		t.Errorf("payouts %v, want prt_a 30750 and prt_b 99", owed)
	}
}
