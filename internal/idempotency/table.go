package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/models"
)

// tableKeys keeps records in the database (models.IdempotencyRecord). A
// record past its expiry is free: the next claim takes it over, and the
// cleanup task deletes those left.
type tableKeys struct {
	db  *gorm.DB
	now func() time.Time
}

func (t tableKeys) claim(ctx context.Context, k string, v []byte, ttl time.Duration) (bool, []byte, error) {
	db := t.db.WithContext(ctx)
	for range 3 {
		now := t.now().UTC()
		res := db.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.IdempotencyRecord{ID: k, Record: v, ExpiresAt: now.Add(ttl)})
		if res.Error != nil {
			return false, nil, fmt.Errorf("idempotency claim: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return true, nil, nil
		}
		var r models.IdempotencyRecord
		err := db.Take(&r, "id = ?", k).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue // released between the two statements; claim again
		}
		if err != nil {
			return false, nil, fmt.Errorf("idempotency read: %w", err)
		}
		if r.ExpiresAt.After(now) {
			return false, r.Record, nil
		}
		// Expired: take it over, unless another claim did first.
		res = db.Model(&models.IdempotencyRecord{}).Where("id = ? AND expires_at <= ?", k, now).
			Updates(map[string]any{"record": v, "expires_at": now.Add(ttl), "carried_out": false})
		if res.Error != nil {
			return false, nil, fmt.Errorf("idempotency claim: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return true, nil, nil
		}
	}
	return false, nil, errors.New("idempotency claim: key keeps changing")
}

func (t tableKeys) set(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	return t.write(t.db.WithContext(ctx), k, v, ttl, false)
}

// write stores the record in db whether or not its claim is still there
// (the cleanup may have deleted a claim that ran past its expiry); a
// record once carried out stays so.
func (t tableKeys) write(db *gorm.DB, k string, v []byte, ttl time.Duration, carriedOut bool) error {
	expires := t.now().UTC().Add(ttl)
	err := db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "id"}},
		DoUpdates: clause.Assignments(map[string]any{"record": v, "expires_at": expires,
			"carried_out": gorm.Expr("idempotency_records.carried_out OR ?", carriedOut)}),
	}).Create(&models.IdempotencyRecord{ID: k, Record: v, ExpiresAt: expires, CarriedOut: carriedOut}).Error
	if err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	return nil
}

// del frees k unless its request made its change.
func (t tableKeys) del(ctx context.Context, k string) error {
	if err := t.db.WithContext(ctx).Where("id = ? AND NOT carried_out", k).Delete(&models.IdempotencyRecord{}).Error; err != nil {
		return fmt.Errorf("idempotency release: %w", err)
	}
	return nil
}
