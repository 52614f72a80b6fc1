package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func TestKeptIsTheCommissionLessItsShareOfRefunds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ gross, commission, refunded, want int64 }{
		{10_000, 1_000, 0, 1_000},
		{10_000, 1_000, 3_333, 667}, // 333.3 reversed
		{10_000, 1_000, 3_335, 666}, // 333.5 → 334 reversed (half to even)
		{10_000, 1_000, 10_000, 0},
		{0, 0, 0, 0}, // nothing sold, nothing kept
	} {
		if got := Kept(tc.gross, tc.commission, tc.refunded); got != tc.want {
			t.Errorf("Kept(%d, %d, %d) = %d, want %d", tc.gross, tc.commission, tc.refunded, got, tc.want)
		}
	}
}

func TestMulDivRoundsHalfToEven(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b, d, want int64 }{
		{10, 1500, 10_000, 2},   // 1.5 → 2
		{30, 1500, 10_000, 4},   // 4.5 → 4
		{50, 1500, 10_000, 8},   // 7.5 → 8
		{70, 1500, 10_000, 10},  // 10.5 → 10
		{71, 1500, 10_000, 11},  // 10.65 → 11
		{69, 1500, 10_000, 10},  // 10.35 → 10
		{-30, 1500, 10_000, -4}, // −4.5 → −4
		{-50, 1500, 10_000, -8}, // −7.5 → −8
		{12_345, 1, 1, 12_345},
		{math.MaxInt64 / 2, 4, 4, math.MaxInt64 / 2}, // the product passes 64 bits
	} {
		if got := MulDiv(tc.a, tc.b, tc.d); got != tc.want {
			t.Errorf("MulDiv(%d, %d, %d) = %d, want %d", tc.a, tc.b, tc.d, got, tc.want)
		}
	}
	if got := Share(10_000, 1500); got != 1500 {
		t.Errorf("15%% of $100.00 = %d cents", got)
	}
}

func sum(lines []Line) (total int64, by map[string]int64) {
	by = map[string]int64{}
	for _, l := range lines {
		total += l.AmountCents
		by[l.Account] += l.AmountCents
	}
	return total, by
}

// A sale's and a refund's lines balance, and refunds in three parts that
// make the whole sale reverse exactly its commission, for both ways of
// collecting the money.
func TestSalesAndRefundsBalance(t *testing.T) {
	t.Parallel()
	const gross, commission = 10_001, 1_500 // 1500.15 at 15 %, rounded
	for _, model := range []string{models.PaymentPartnerCollected, models.PaymentHosted} {
		all := Sale(model, gross, commission)
		if total, by := sum(all); total != 0 || by[Sales] != -gross || by[Commission] != commission {
			t.Fatalf("%s sale: total %d, by account %v", model, total, by)
		}
		refunded := int64(0)
		for _, part := range []int64{3_333, 3_333, 3_335} {
			lines := Refund(model, gross, commission, refunded, part)
			if total, _ := sum(lines); total != 0 {
				t.Errorf("%s refund of %d: lines sum to %d", model, part, total)
			}
			all = append(all, lines...)
			refunded += part
		}
		if _, by := sum(all); by[Sales] != 0 || by[Commission] != 0 || by[Receivable] != 0 || by[Payable] != 0 {
			t.Errorf("%s sale refunded in full leaves %v", model, by)
		}
	}
	if _, by := sum(Sale(models.PaymentPartnerCollected, gross, commission)); by[Receivable] != gross-commission {
		t.Errorf("a partner-collected sale owes %d, want %d", by[Receivable], gross-commission)
	}
	if _, by := sum(Sale(models.PaymentHosted, gross, commission)); by[Payable] != -commission || by[Cash] != gross {
		t.Errorf("a hosted sale: %v", by)
	}
}

func TestPostRefusesUnbalancedLines(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	ref := Ref{PartnerID: "prt_1", Environment: models.EnvLive, Currency: "USD", Kind: KindSale}
	if err := Post(db, ref, time.Now(), Line{Sales, -100}, Line{Receivable, 99}); err == nil {
		t.Error("posted lines summing to -1")
	}
	if err := Post(db, ref, time.Now(), Sale(models.PaymentPartnerCollected, 100, 15)...); err != nil {
		t.Fatal(err)
	}
	var entries []models.LedgerEntry
	db.Order("id").Find(&entries)
	if len(entries) != 3 || entries[0].TxnID != entries[2].TxnID || entries[0].TxnID == "" {
		t.Errorf("entries = %+v, want the 3 lines of one transaction", entries)
	}
}

// A referral's commission, reversed by refunds in parts, is reversed
// exactly once the parts make the whole sale; what settles is what the
// refunds left.
func TestReferralLinesBalance(t *testing.T) {
	const gross, commission = 10_001, 1_001
	_, accrued := sum(Referral(commission))
	pending := -accrued[ReferralPending]
	var reversed, refunded int64
	for _, part := range []int64{3_333, 3_333, 3_335} {
		total, by := sum(ReferralRefund(gross, commission, refunded, part))
		if total != 0 {
			t.Fatalf("refund lines sum to %d", total)
		}
		reversed -= by[ReferralCommission]
		pending -= by[ReferralPending]
		refunded += part
	}
	if reversed != commission || pending != 0 {
		t.Errorf("refunds of the whole sale reversed %d of %d, leaving %d pending", reversed, commission, pending)
	}
	total, settled := sum(ReferralSettled(gross, commission, 3_333))
	if left := -settled[Payable]; total != 0 || left != 667 {
		t.Errorf("settled after a refund of a third: %d payable (lines sum to %d), want 667", left, total)
	}
}
