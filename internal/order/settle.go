package order

import (
	"context"
	"fmt"
	"time"

	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
)

// SettleBatch settles, in one transaction, up to limit orders that
// reached TRANSFER_COMPLETED before end and are not settled: each becomes
// SETTLED in the period starting at start, with a step by the settlement
// and the event order.settled. It returns how many it settled. Orders are
// locked as they are read, so two runs at once settle each order once
// (and one may find none while the other holds the rest: see Unsettled).
func (s *Service) SettleBatch(ctx context.Context, start, end time.Time, limit int) (int, error) {
	var n int
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		var orders []models.Order
		err := models.ForUpdate(tx.DB).Where("status = ? AND transfer_completed_at < ?", models.OrderTransferCompleted, end.UTC()).
			Order("public_id").Limit(limit).Find(&orders).Error
		if err != nil {
			return fmt.Errorf("find orders to settle: %w", err)
		}
		now := s.now().UTC()
		period := start.UTC()
		for _, o := range orders {
			o.Status, o.SettledPeriod, o.UpdatedAt = models.OrderSettled, &period, now
			res := tx.Model(&models.Order{PublicID: o.PublicID}).Where("status = ?", models.OrderTransferCompleted).
				Select("status", "settled_period", "updated_at").Updates(&o)
			if res.Error != nil {
				return fmt.Errorf("settle order %s: %w", o.PublicID, res.Error)
			}
			if res.RowsAffected == 0 {
				continue // settled by another run meanwhile
			}
			note := fmt.Sprintf("settled in the period from %s", period.Format(time.RFC3339))
			data := map[string]any{"settlement": map[string]any{"period_start": period, "period_end": end.UTC()}}
			if err := s.record(tx, o, ActorSettlement, EventSettled, note, data); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// Unsettled counts the orders that reached TRANSFER_COMPLETED before end
// and are not settled.
func (s *Service) Unsettled(ctx context.Context, end time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Order{}).
		Where("status = ? AND transfer_completed_at < ?", models.OrderTransferCompleted, end.UTC()).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count unsettled orders: %w", err)
	}
	return n, nil
}
