package order

import (
	"context"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// Filter selects orders, newest first. An empty PartnerID or Environment
// means every partner or environment (ops).
type Filter struct {
	PartnerID, Environment string
	Status, Domain         string
	From, To               *time.Time // on created_at: From ≤ t < To
	Limit                  int
	Cursor                 string
}

// Statuses are the order statuses, in the order of an order's life.
var Statuses = []string{
	models.OrderExternallyPaid, models.OrderPaid, models.OrderTransferInProgress, models.OrderTransferCompleted,
	models.OrderSettled, models.OrderRefunded, models.OrderCancelled,
}

// orderPages pages the order lists.
var orderPages = pagecursor.Newest[models.Order]{Name: "orders/v1", KeyCol: "created_at", IDCol: "public_id",
	Key: func(o models.Order) (time.Time, string) { return o.CreatedAt, o.PublicID }}

// List returns a page of the orders f selects and the cursor of the next
// page ("" after the last).
func (s *Service) List(ctx context.Context, f Filter) ([]View, string, error) {
	q := s.db.WithContext(ctx).Model(&models.Order{})
	q = models.Equal(q, "partner_id", f.PartnerID, "environment", f.Environment, "domain", f.Domain)
	if f.Status != "" {
		status, ok := models.OrdersIn(f.Status)
		if !ok {
			return nil, "", fault.Invalid("status", "is not an order status (%s)", strings.Join(Statuses, ", "))
		}
		q = q.Where(status)
	}
	if f.From != nil {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	orders, next, err := orderPages.Page(q, s.secretKey, f.Cursor, f.Limit,
		f.PartnerID, f.Environment, f.Status, f.Domain, pagecursor.TimeKey(f.From), pagecursor.TimeKey(f.To))
	if err != nil {
		return nil, "", err
	}
	out := make([]View, len(orders))
	for i, o := range orders {
		out[i] = newView(o)
	}
	return out, next, nil
}
