package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// TestEndToEndSettlementRunKilledMidway SIGKILLs the worker while a
// settlement run is half-way through last week's 5,000 completed orders:
// a new worker resumes the run (once asynq gives the task back), every
// order is settled exactly once, the statement has the totals of all of
// them, and every order's order.settled event reaches the partner's
// receiver, through the batches' fan-out tasks.
func TestEndToEndSettlementRunKilledMidway(t *testing.T) {
	c := newCluster(t)
	c.run("migrate")
	const n, price = 5_000, 12_345 // 15 %: 1,851.75 → 1,852 commission each (half to even)
	week := period.Week.Closed(time.Now())
	partnerID := "prt_e2e_settlement"
	if err := c.db.Create(&models.Partner{ID: partnerID, Name: "Settled Ltd", ContactEmail: "f@settled.example", Status: models.PartnerApproved,
		CommissionBPS: 1500, CreatedAt: week.Start}).Error; err != nil {
		t.Fatal(err)
	}
	var seenMu sync.Mutex
	seen := map[string]bool{} // the order.settled events the receiver got
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		var ev webhook.Envelope
		if json.NewDecoder(req.Body).Decode(&ev) == nil && ev.Type == order.EventSettled {
			seenMu.Lock()
			seen[ev.ID] = true
			seenMu.Unlock()
		}
	}))
	t.Cleanup(receiver.Close)
	hooks := webhook.New(c.db, []byte(c.getenv("DOMAIND_SECRET_KEY")), []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, time.Now)
	if _, err := hooks.Register(context.Background(), partnerID, models.EnvLive, receiver.URL+"/hook", "whsec-e2e-settlement-receiver"); err != nil {
		t.Fatal(err)
	}
	completed := week.Start.Add(time.Hour)
	var orders []models.Order
	var lines []models.LedgerEntry
	for i := range n {
		o := models.Order{PublicID: fmt.Sprintf("ord_e2e_%05d", i), PartnerID: partnerID, Environment: models.EnvLive,
			ListingID: models.NewID(), Domain: fmt.Sprintf("settled-%05d.com", i), Status: models.OrderTransferCompleted,
			Review: models.ReviewNone, SalePriceCents: price, Currency: "USD", PaymentModel: models.PaymentPartnerCollected,
			BuyerEmail: "b@example.com", BuyerName: "B", BuyerCountry: "NL", ExternalPaymentRef: "x", CommissionBPS: 1500,
			CommissionCents: ledger.Share(price, 1500), TransferCompletedAt: &completed, CreatedAt: week.Start, UpdatedAt: completed}
		orders = append(orders, o)
		for _, l := range ledger.Sale(o.PaymentModel, o.SalePriceCents, o.CommissionCents) {
			lines = append(lines, models.LedgerEntry{TxnID: "txn_" + o.PublicID, Account: l.Account, PartnerID: partnerID,
				Environment: models.EnvLive, Currency: "USD", AmountCents: l.AmountCents, Kind: ledger.KindSale, OrderID: &orders[i].PublicID, CreatedAt: week.Start})
		}
	}
	if err := c.db.CreateInBatches(orders, 1000).Error; err != nil {
		t.Fatal(err)
	}
	if err := c.db.CreateInBatches(lines, 1000).Error; err != nil {
		t.Fatal(err)
	}

	api := c.start("api")
	worker := c.start("worker")
	// The kill can fall between a batch's commit and the enqueue of its
	// fan-out; the scheduler's outbox sweep enqueues it then, as in a
	// deployment. (Its weekly settlement:schedule may make the week's run
	// first; the request below then answers with that run, and the test
	// follows it the same way.)
	c.start("scheduler")
	code, body := opsDo(t, "POST", "http://"+api.addr+"/api/ops/settlements/runs",
		`{"period_start":"`+week.Start.Format(time.RFC3339)+`"}`, "ops", "e2e-ops-password")
	var run struct{ ID string }
	if code != 202 || json.Unmarshal(body, &run) != nil {
		t.Fatalf("request the run = %d %s", code, body)
	}
	settled := func() int64 {
		var k int64
		c.db.Model(&models.Order{}).Where("status = ?", models.OrderSettled).Count(&k)
		return k
	}
	c.waitFor("the run to settle its first batch", time.Minute, func() bool { return settled() > 0 })
	c.kill(worker)
	if k := settled(); k == 0 || k == n {
		t.Fatalf("at the kill %d of %d orders were settled; the test needs the run half-way", k, n)
	}

	// asynq gives the task back once its lease has expired: a minute or two.
	c.start("worker")
	c.waitFor("the run done by the new worker", 4*time.Minute, func() bool {
		code, body := opsDo(t, "GET", "http://"+api.addr+"/api/ops/settlements/runs/"+run.ID, "", "ops", "e2e-ops-password")
		var got struct{ Run struct{ Status string } }
		return code == 200 && json.Unmarshal(body, &got) == nil && got.Run.Status == models.RunDone
	})
	var steps []struct {
		OrderID string
		N       int
	}
	c.db.Model(&models.OrderStep{}).Select("order_id, count(*) AS n").Where("event = ?", order.EventSettled).Group("order_id").Having("count(*) <> 1").Scan(&steps)
	if k := settled(); k != n || len(steps) != 0 {
		t.Errorf("%d of %d orders settled; orders with other than one order.settled step: %v", k, n, steps)
	}
	reached := func() int {
		seenMu.Lock()
		defer seenMu.Unlock()
		return len(seen)
	}
	// Not waitFor: a wait that runs out goes on to the check below, which
	// says how far the deliveries got.
	for deadline := time.Now().Add(2 * time.Minute); reached() < n && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	var fanOuts, ownTasks int64
	c.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeWebhookFanOut).Count(&fanOuts)
	c.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeWebhookDeliver).Count(&ownTasks)
	var states []struct {
		State string
		N     int64
	}
	c.db.Model(&models.WebhookDelivery{}).Select("state, count(*) AS n").Group("state").Order("state").Scan(&states)
	if got := reached(); got != n || fanOuts < n/settlement.Batch || ownTasks != 0 {
		t.Errorf("%d order.settled events reached the receiver (deliveries by state: %v), through %d fan-outs and %d tasks of their own; want %d, through fan-outs alone",
			got, states, fanOuts, ownTasks, n)
	}
	_, body = opsDo(t, "GET", "http://"+api.addr+"/api/ops/settlements/runs/"+run.ID, "", "ops", "e2e-ops-password")
	var got struct {
		Totals []settlement.Total `json:"totals"`
	}
	json.Unmarshal(body, &got)
	commission := ledger.Share(price, 1500)
	if len(got.Totals) != 1 || got.Totals[0].Orders != n || got.Totals[0].GrossCents != n*price ||
		got.Totals[0].CommissionCents != n*commission || got.Totals[0].AmountOwedCents != n*(price-commission) {
		t.Errorf("totals = %s; want %d orders, gross %d, commission %d, owed %d", body, n, n*price, n*commission, n*(price-commission))
	}
}
