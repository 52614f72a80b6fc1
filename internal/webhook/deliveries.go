package webhook

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// DeliveryStates are what a delivery can be, for filters.
var DeliveryStates = []string{models.DeliveryPending, models.DeliveryDelivered, models.DeliveryFailed}

// DeliveryView is a delivery as ops look into it: its event, its endpoint
// and how it went.
type DeliveryView struct {
	ID, PartnerID, Environment, URL string
	EventID, EventType              string
	State                           string
	Attempts, LastStatus            int
	LastError                       string
	CreatedAt                       time.Time
	DeliveredAt, FinishedAt         *time.Time
}

// Latency is how long the event took to reach the receiver, zero when it
// has not.
func (d DeliveryView) Latency() time.Duration {
	if d.DeliveredAt == nil {
		return 0
	}
	return d.DeliveredAt.Sub(d.CreatedAt)
}

// DeliveryFilter picks deliveries; empty fields pick all.
type DeliveryFilter struct {
	PartnerID, Environment, State string
	// Limit is the page's size (1 to pagecursor.MaxLimit); Cursor the page's
	// start, the next cursor of the page before.
	Limit  int
	Cursor string
}

var deliveryPages = pagecursor.Newest[DeliveryView]{Name: "deliveries/v1", KeyCol: "d.created_at", IDCol: "d.id",
	Key: func(d DeliveryView) (time.Time, string) { return d.CreatedAt, d.ID }}

// Deliveries returns a page of the deliveries f picks, newest first, and
// the next page's cursor ("" after the last).
func (s *Service) Deliveries(ctx context.Context, f DeliveryFilter) ([]DeliveryView, string, error) {
	inState, ok := models.DeliveriesIn(f.State)
	if f.State != "" && !ok {
		return nil, "", fault.Invalid("state", "must be one of pending, delivered, failed")
	}
	if err := models.CheckEnvironmentFilter(f.Environment); err != nil {
		return nil, "", err
	}
	filters := []string{f.PartnerID, f.Environment, f.State}
	db := s.db.WithContext(ctx)
	// withEvents is the deliveries with their events' id and type; one
	// whose event is gone is not listed.
	withEvents := func() *gorm.DB {
		return db.Table("webhook_deliveries d").Joins("JOIN events ev ON ev.seq = d.event_seq").
			Select(`d.id, d.endpoint_id, d.state, d.attempts, d.last_status, d.last_error, d.created_at, d.delivered_at,
				d.finished_at, ev.id AS event_id, ev.type AS event_type`)
	}
	var q *gorm.DB
	if f.PartnerID != "" && models.IsPostgres(db) {
		// A partner's deliveries are one range of the endpoints' index
		// per endpoint: each range is read for the page alone (all of
		// the page's conditions within it, so that it yields the page's
		// rows), and the page made of theirs. Joined, every delivery of
		// the partner was read and sorted for each page. (SQLite has no
		// LATERAL; its databases are small.)
		each := withEvents().Where("d.endpoint_id = e.id")
		if f.State != "" {
			each = each.Where("d." + inState)
		}
		each, err := deliveryPages.Head(each, s.secretKey, f.Cursor, f.Limit, filters...)
		if err != nil {
			return nil, "", err
		}
		q = db.Table("webhook_endpoints e").Joins("CROSS JOIN LATERAL (?) d", each)
	} else {
		q = db.Table("(?) d", withEvents()).Joins("JOIN webhook_endpoints e ON e.id = d.endpoint_id")
	}
	q = q.Select(`d.id, e.partner_id, e.environment, e.url, d.event_id, d.event_type, d.state, d.attempts,
		d.last_status, d.last_error, d.created_at, d.delivered_at, d.finished_at`)
	if f.PartnerID != "" {
		q = q.Where("e.partner_id = ?", f.PartnerID)
	}
	if f.Environment != "" {
		q = q.Where("e.environment = ?", f.Environment)
	}
	if f.State != "" {
		q = q.Where("d." + inState) // written out, for the index of the failed
	}
	return deliveryPages.Page(q, s.secretKey, f.Cursor, f.Limit, filters...)
}
