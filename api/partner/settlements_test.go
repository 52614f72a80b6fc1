package partner_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
)

// A partner lists its statements of settled weeks, in its environment
// only; another partner sees none of them.
func TestPartnerListsItsSettlements(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ledgertest.CheckAtEnd(t, e.db)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "buy")
	c := e.client(cred, 0)
	e.addSandbox("weekly-sale.com", 20_000)
	var o orderAnswer
	post(t, c, "/api/partner/v1/orders", orderBody("weekly-sale.com", 20_000, ""), "k1", &o)
	orders := order.New(e.db, e.outbox, testSecretKey, order.Options{QuoteTTL: time.Minute, ReviewThresholdCents: 10_000_000}, e.clock)
	for _, a := range []order.Action{order.StartTransfer, order.ConfirmDelivery} {
		if _, err := orders.Move(ctx, o.PublicID, a, order.MoveInput{Recipient: "buyer-registrar"}); err != nil {
			t.Fatal(err)
		}
	}
	week := period.Week.Of(e.now)
	later := func() time.Time { return week.End.Add(time.Hour) }
	settlements := settlement.New(e.db, e.outbox, orders, period.Week, testSecretKey, later)
	run, err := settlements.Request(ctx, week.Start, settlement.TriggerOps)
	if err != nil {
		t.Fatal(err)
	}
	if err := settlements.Run(ctx, run.ID); err != nil {
		t.Fatal(err)
	}

	var got struct {
		Settlements []settlement.Statement `json:"settlements"`
		NextCursor  *string                `json:"next_cursor"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/settlements", nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Settlements) != 1 || got.NextCursor != nil {
		t.Fatalf("settlements = %+v", got)
	}
	st := got.Settlements[0]
	if !st.PeriodStart.Equal(week.Start) || !st.PeriodEnd.Equal(week.End) || st.Orders != 1 || st.GrossCents != 20_000 ||
		st.CommissionCents != 3_000 || st.AmountOwedCents != 17_000 || st.Environment != models.EnvSandbox || st.Status != "final" {
		t.Errorf("statement = %+v", st)
	}
	reportCred, err := e.partners.IssueCredential(ctx, e.partnerOf(cred), models.EnvSandbox, []string{"report"})
	if err != nil {
		t.Fatal(err)
	}
	reporter := e.client(reportCred, 0)
	var txns struct {
		Transactions []settlement.Transaction       `json:"transactions"`
		Totals       []settlement.TransactionTotals `json:"totals"`
	}
	if err := reporter.GetJSON(ctx, "/api/partner/v1/transactions", url.Values{"status": {"SETTLED"}}, &txns); err != nil {
		t.Fatal(err)
	}
	if len(txns.Transactions) != 1 || txns.Transactions[0].AmountCents != 20_000 || txns.Transactions[0].CommissionCents != 3_000 ||
		len(txns.Totals) != 1 || txns.Totals[0].GMVCents != 20_000 || txns.Totals[0].Count != 1 {
		t.Errorf("transactions = %+v", txns)
	}
	if res, body, err := reporter.Do(ctx, "GET", "/api/partner/v1/transactions", url.Values{"status": {"LOST"}}, nil); err != nil || res.StatusCode != 400 ||
		!strings.Contains(string(body), `"field":"status"`) {
		t.Errorf("an unknown status = %v %s", err, body)
	}
	other := e.client(e.credential(models.EnvSandbox, "buy"), 0)
	if err := other.GetJSON(ctx, "/api/partner/v1/settlements", nil, &got); err != nil || len(got.Settlements) != 0 {
		t.Errorf("another partner's settlements = %+v, %v; want none", got, err)
	}
}

// A partner lists its payouts in its credential's environment, filtered
// by status; others' and the other environment's stay out.
func TestPartnerListsItsPayouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cred := e.credential(models.EnvSandbox, "report")
	mine := e.partnerOf(cred)
	other := e.partnerOf(e.credential(models.EnvSandbox, "report"))
	week := period.Week.Of(e.now)
	paidAt := week.End.Add(time.Hour)
	for i, p := range []models.Payout{
		{PartnerID: mine, Environment: models.EnvSandbox, AmountCents: 750, Status: models.PayoutPaid, Reference: "wire-1", PaidAt: &paidAt},
		{PartnerID: mine, Environment: models.EnvSandbox, AmountCents: 1_200, Status: models.PayoutPending, PeriodStart: week.End},
		{PartnerID: mine, Environment: models.EnvLive, AmountCents: 9_999, Status: models.PayoutPending},
		{PartnerID: other, Environment: models.EnvSandbox, AmountCents: 8_888, Status: models.PayoutPending},
	} {
		p.ID, p.Currency, p.CreatedAt = fmt.Sprintf("po_test%d", i), "USD", e.now
		if p.PeriodStart.IsZero() {
			p.PeriodStart = week.Start
		}
		p.PeriodEnd = p.PeriodStart.AddDate(0, 0, 7)
		if err := e.db.Create(&p).Error; err != nil {
			t.Fatal(err)
		}
	}
	c := e.client(cred, 0)
	var got struct {
		Payouts    []payout.View `json:"payouts"`
		NextCursor *string       `json:"next_cursor"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/payouts", nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Payouts) != 2 || got.NextCursor != nil || got.Payouts[0].AmountCents != 1_200 || got.Payouts[0].Reference != nil ||
		got.Payouts[1].AmountCents != 750 || got.Payouts[1].Status != models.PayoutPaid || *got.Payouts[1].Reference != "wire-1" ||
		!got.Payouts[1].PaidAt.Equal(paidAt) || !got.Payouts[1].Period.Start.Equal(week.Start) {
		t.Errorf("payouts = %+v", got)
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/payouts", url.Values{"status": {"paid"}, "limit": {"1"}}, &got); err != nil ||
		len(got.Payouts) != 1 || got.Payouts[0].ID != "po_test0" || got.NextCursor != nil {
		t.Errorf("paid payouts = %+v, %v", got, err)
	}
	if res, body, err := c.Do(ctx, "GET", "/api/partner/v1/payouts", url.Values{"status": {"sent"}}, nil); err != nil || res.StatusCode != 400 ||
		!strings.Contains(string(body), `"field":"status"`) {
		t.Errorf("an unknown status = %v %s", err, body)
	}
}
