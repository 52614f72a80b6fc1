package settlement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/models"
)

// RollupGrace is how long after midnight (UTC) a day is rolled up: long
// enough for every transaction that wrote a line of the day to have
// committed.
const RollupGrace = 10 * time.Minute

const oneDay = 24 * time.Hour

// RollUp adds up, for every partner, the sales and refunds of each closed
// day not rolled up yet (models.LedgerDay), one day per transaction and in
// order, so that the days rolled up are always every day before the
// watermark. It returns how many days it rolled up. The scheduler asks for
// it every hour (task ledger:rollup); run twice at once, the second waits
// for the first and finds its days done.
func (s *Service) RollUp(ctx context.Context) (int, error) {
	db := s.db.WithContext(ctx)
	next, ok, err := s.nextRollup(db)
	if err != nil || !ok {
		return 0, err
	}
	done := 0
	for ; !next.Add(oneDay + RollupGrace).After(s.now()); next = next.Add(oneDay) {
		err := db.Transaction(func(tx *gorm.DB) error {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.LedgerRollup{Day: next, DoneAt: s.now().UTC()})
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error // done by a roll-up at once
			}
			var days []models.LedgerDay
			err := tx.Table("ledger_entries l").Joins("JOIN orders o ON o.public_id = l.order_id").
				Where("l.created_at >= ? AND l.created_at < ? AND l.kind IN ?", next, next.Add(oneDay), []string{ledger.KindSale, ledger.KindRefund}).
				Select("l.partner_id, l.environment, l.currency, o.payment_model, "+totalsSQL, totalsArgs...).
				Group("l.partner_id, l.environment, l.currency, o.payment_model").Scan(&days).Error
			if err != nil || len(days) == 0 {
				return err
			}
			for i := range days {
				days[i].Day = next
			}
			return tx.CreateInBatches(days, 1_000).Error
		})
		if err != nil {
			return done, fmt.Errorf("roll up the ledger of %s: %w", next.Format(time.DateOnly), err)
		}
		done++
	}
	return done, nil
}

// nextRollup returns the first day not rolled up: the day after the last
// one rolled up, or the day of the ledger's first line; false when the
// ledger is empty.
func (s *Service) nextRollup(db *gorm.DB) (time.Time, bool, error) {
	w, err := s.watermark(db)
	if err != nil || !w.IsZero() {
		return w, err == nil, err
	}
	var first models.LedgerEntry
	err = db.Select("created_at").Order("created_at").Take(&first).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find the ledger's first line: %w", err)
	}
	return first.CreatedAt.UTC().Truncate(oneDay), true, nil
}

// watermark returns the end of the days rolled up (the zero time when
// none is).
func (s *Service) watermark(db *gorm.DB) (time.Time, error) {
	var last models.LedgerRollup
	err := db.Order("day DESC").Take(&last).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("find the last ledger roll-up: %w", err)
	}
	return last.Day.UTC().Add(oneDay), nil
}

// totalsSQL selects, with totalsArgs, the sums of ledger lines l that make
// transaction totals: the buyers' side (the sales lines, negated) as
// gmv_cents, the partners' commission as commission_cents, and the
// transactions (each has one sales line) as count.
const totalsSQL = `COALESCE(SUM(CASE WHEN l.account = ? THEN -l.amount_cents ELSE 0 END), 0) AS gmv_cents,
		COALESCE(SUM(CASE WHEN l.account = ? THEN l.amount_cents ELSE 0 END), 0) AS commission_cents,
		COUNT(CASE WHEN l.account = ? THEN 1 END) AS count`

// totalsArgs are the accounts totalsSQL reads.
var totalsArgs = []any{ledger.Sales, ledger.Commission, ledger.Sales}
