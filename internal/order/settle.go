package order

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// IDRange is the orders whose ids come after After and up to Upto, in the
// keyset's order; an empty bound leaves that side open.
type IDRange struct{ After, Upto string }

// SettleBatch settles, in one transaction, up to limit orders of ids in r
// that reached TRANSFER_COMPLETED before end and are not settled: each
// becomes SETTLED in the period starting at start, with a step by the
// settlement and the event order.settled; a referred order's referral
// commission becomes payable to its affiliate. It returns how many it
// settled and the last one's id, where the next batch starts. Orders are
// locked as they are read, in id order, so two runs at once settle each
// order once (and one may find none while the other holds the rest: see
// Unsettled).
func (s *Service) SettleBatch(ctx context.Context, start, end time.Time, r IDRange, limit int) (n int, last string, err error) {
	err = s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		now := s.now().UTC()
		period := start.UTC()
		// One statement picks the batch, locking its rows in id order (a
		// run at once waits for them, then finds them settled), and
		// settles it. Starting after the last batch, rather than skipping
		// past the rows settled before, keeps a run over n orders linear
		// in n.
		upto, args := "", []any{models.OrderSettled, period, now, end.UTC(), r.After}
		if r.Upto != "" {
			upto = " AND public_id <= ?"
			args = append(args, r.Upto)
		}
		rows, err := tx.Raw(`UPDATE orders SET status = ?, settled_period = ?, updated_at = ? WHERE public_id IN (
			SELECT public_id FROM orders WHERE `+models.OrdersUnsettled+` AND transfer_completed_at < ? AND public_id > ?`+upto+`
			ORDER BY public_id LIMIT ?`+models.ForUpdateSQL(tx.DB)+`) RETURNING `+models.OrderColumns, append(args, limit)...).Rows()
		if err != nil {
			return fmt.Errorf("settle orders: %w", err)
		}
		orders, err := models.ScanOrders(rows)
		if err != nil {
			return fmt.Errorf("settle orders: %w", err)
		}
		if len(orders) == 0 {
			return nil
		}
		slices.SortFunc(orders, func(a, b models.Order) int { return strings.Compare(a.PublicID, b.PublicID) })
		note := fmt.Sprintf("settled in the period from %s", period.Format(time.RFC3339))
		// The batch's events share their settlement part: encoded once.
		settlement, err := json.Marshal(map[string]any{"period_start": period, "period_end": end.UTC()})
		if err != nil {
			return fmt.Errorf("encode the settlement of %d orders: %w", len(orders), err)
		}
		extra := map[string]any{"settlement": json.RawMessage(settlement)}
		steps := make([]models.OrderStep, len(orders))
		events := make([]webhook.Emission, len(orders))
		var referrals []ledger.Txn
		for i, o := range orders {
			steps[i] = models.OrderStep{OrderID: o.PublicID, At: now, Status: o.Status, Actor: ActorSettlement, Event: EventSettled, Note: note}
			events[i] = webhook.Emission{PartnerID: o.PartnerID, Environment: o.Environment, Subject: o.PublicID, Type: EventSettled,
				Data: eventData(o, extra)}
			if o.ReferralCents != 0 {
				referrals = append(referrals, ledger.Txn{Ref: referralRef(o),
					Lines: ledger.ReferralSettled(o.SalePriceCents, o.ReferralCents, o.RefundedCents)})
			}
		}
		if err := models.InsertOrderSteps(tx.DB, steps); err != nil {
			return fmt.Errorf("record the steps of %d settled orders: %w", len(steps), err)
		}
		if err := ledger.PostAll(tx.DB, now, referrals...); err != nil {
			return err
		}
		if _, err := webhook.EmitAll(tx, events, now); err != nil {
			return err
		}
		n, last = len(orders), orders[len(orders)-1].PublicID
		return nil
	})
	return n, last, err
}

// SplitUnsettled splits the orders Unsettled counts into up to parts
// ranges of about the same size, in id order, for runs that settle them
// side by side: bounded by the ids at each parts-th of them. On SQLite,
// whose writers take turns anyway, the one range is all of them.
func (s *Service) SplitUnsettled(ctx context.Context, end time.Time, parts int) ([]IDRange, error) {
	db := s.db.WithContext(ctx)
	if parts < 2 || !models.IsPostgres(db) {
		return []IDRange{{}}, nil
	}
	fractions := make([]string, parts-1)
	for i := range fractions {
		fractions[i] = strconv.FormatFloat(float64(i+1)/float64(parts), 'f', -1, 64)
	}
	var bounds []string
	err := db.Raw(`SELECT unnest(percentile_disc(?::float8[]) WITHIN GROUP (ORDER BY public_id)) FROM orders
		WHERE `+models.OrdersUnsettled+` AND transfer_completed_at < ?`, "{"+strings.Join(fractions, ",")+"}", end.UTC()).Scan(&bounds).Error
	if err != nil {
		return nil, fmt.Errorf("split the unsettled orders: %w", err)
	}
	bounds = slices.Compact(slices.DeleteFunc(bounds, func(b string) bool { return b == "" }))
	ranges := make([]IDRange, 0, len(bounds)+1)
	after := ""
	for _, b := range bounds {
		ranges = append(ranges, IDRange{After: after, Upto: b})
		after = b
	}
	return append(ranges, IDRange{After: after}), nil
}

// Unsettled counts the orders that reached TRANSFER_COMPLETED before end
// and are not settled.
func (s *Service) Unsettled(ctx context.Context, end time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Order{}).
		Where(models.OrdersUnsettled+" AND transfer_completed_at < ?", end.UTC()).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count unsettled orders: %w", err)
	}
	return n, nil
}
