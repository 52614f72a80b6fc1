package order

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

// Page sizes of order lists.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// List returns a page of the orders f selects and the cursor of the next
// page ("" after the last).
func (s *Service) List(ctx context.Context, f Filter) ([]View, string, error) {
	var err error
	if f.Limit, err = pagecursor.Limit(f.Limit, DefaultLimit, MaxLimit); err != nil {
		return nil, "", err
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", fault.Invalid("status", "is not an order status (EXTERNALLY_PAID, PAID, TRANSFER_IN_PROGRESS, TRANSFER_COMPLETED, SETTLED, REFUNDED, CANCELLED)")
	}
	fingerprint := pagecursor.Fingerprint("orders/v1", f.PartnerID, f.Environment, f.Status, f.Domain, timeKey(f.From), timeKey(f.To))
	q := s.db.WithContext(ctx).Model(&models.Order{})
	if f.PartnerID != "" {
		q = q.Where("partner_id = ?", f.PartnerID)
	}
	if f.Environment != "" {
		q = q.Where("environment = ?", f.Environment)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Domain != "" {
		q = q.Where("domain = ?", f.Domain)
	}
	if f.From != nil {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	if q, err = pagecursor.Older(q, s.secretKey, f.Cursor, fingerprint, "created_at", "public_id"); err != nil {
		return nil, "", err
	}
	var orders []models.Order
	if err := q.Order("created_at DESC, public_id DESC").Limit(f.Limit + 1).Find(&orders).Error; err != nil {
		return nil, "", fmt.Errorf("list orders: %w", err)
	}
	orders, next := pagecursor.Trim(s.secretKey, fingerprint, orders, f.Limit, func(o models.Order) (int64, string) {
		return o.CreatedAt.UnixNano(), o.PublicID
	})
	out := make([]View, len(orders))
	for i, o := range orders {
		out[i] = newView(o)
	}
	return out, next, nil
}

func timeKey(t *time.Time) string {
	if t == nil {
		return ""
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}
