package order

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// A batch among orders mostly settled before settles the unsettled ones
// in id order, and its statement finds them by their own index even in a
// plan Postgres made once for any values (a cached plan), reading no
// settled order.
func TestSettleBatchReadsOnlyTheUnsettled(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 7)
	s, db := newBareService(t, func() time.Time { return end.Add(time.Hour) })
	completed, earlier := start.Add(time.Hour), start.AddDate(0, 0, -7)
	var unsettled []string
	seedOrders(t, db, 3000, func(i int, o *models.Order) {
		o.Status, o.TransferCompletedAt, o.SettledPeriod, o.CreatedAt = models.OrderSettled, &completed, &earlier, start
		if i%30 == 7 {
			o.Status, o.SettledPeriod = models.OrderTransferCompleted, nil
			unsettled = append(unsettled, o.PublicID)
		}
	})

	statements := modelstest.CaptureStatements(t, db, "UPDATE orders")
	n, last, err := s.SettleBatch(context.Background(), start, end, IDRange{}, 60)
	if err != nil || n != 60 || last != unsettled[59] {
		t.Fatalf("settled %d up to %s, %v; want 60 up to %s", n, last, err, unsettled[59])
	}
	var settled int64
	db.Model(&models.Order{}).Where("status = ? AND settled_period = ?", models.OrderSettled, start).Count(&settled)
	if settled != 60 {
		t.Errorf("%d orders settled in the period, want 60", settled)
	}
	if !models.IsPostgres(db) {
		return // the plan is Postgres's
	}
	if err := db.Exec("ANALYZE orders").Error; err != nil {
		t.Fatal(err)
	}

	// The same statement for the next batch (after last), from a plan
	// made for any values.
	if len(statements()) != 1 {
		t.Fatalf("the batch made %d statements updating the orders, want 1", len(statements()))
	}
	st := statements()[0]
	st.Vars[len(st.Vars)-2] = last // the batch's values end with After and the limit (no Upto here)
	root, plan := modelstest.ExplainGeneric(t, db, st)
	byIndex := false
	root.Walk(func(n modelstest.PlanNode) {
		if n.Index == "idx_orders_unsettled" {
			byIndex = true
		}
		if strings.HasSuffix(n.Type, "Scan") && n.ActualRows+n.RemovedByFilter > 40 {
			t.Errorf("a %s on %q read %v rows; want the 40 orders left unsettled at most\n%s",
				n.Type, n.Index, n.ActualRows+n.RemovedByFilter, plan)
		}
	})
	if !byIndex {
		t.Errorf("the batch's generic plan does not read idx_orders_unsettled\n%s", plan)
	}
}
