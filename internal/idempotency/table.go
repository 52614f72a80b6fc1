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

func (t tableKeys) get(ctx context.Context, k string) ([]byte, bool, error) {
	var r models.IdempotencyRecord
	res := t.db.WithContext(ctx).Where("id = ? AND expires_at > ?", k, t.now().UTC()).Limit(1).Find(&r)
	if res.Error != nil {
		return nil, false, fmt.Errorf("idempotency read: %w", res.Error)
	}
	return r.Record, res.RowsAffected == 1, nil
}

// set writes the record whether or not its claim is still there (the
// cleanup may have deleted a claim that ran past its expiry); a record
// carried out stays so.
func (t tableKeys) set(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	err := t.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"record", "expires_at"}),
	}).Create(&models.IdempotencyRecord{ID: k, Record: v, ExpiresAt: t.now().UTC().Add(ttl)}).Error
	if err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	return nil
}

// markCarriedOut writes v in tx as k's record, carried out, for TTL, if
// k is still held by a claim expiring no later than heldUntil; it reports
// whether it did.
func (t tableKeys) markCarriedOut(tx *gorm.DB, k string, v []byte, heldUntil time.Time) (bool, error) {
	res := tx.Model(&models.IdempotencyRecord{}).Where("id = ? AND expires_at <= ?", k, heldUntil.UTC()).
		Updates(map[string]any{"record": v, "expires_at": t.now().UTC().Add(TTL), "carried_out": true})
	if res.Error != nil {
		return false, fmt.Errorf("idempotency mark: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// del frees k unless its request made its change.
func (t tableKeys) del(ctx context.Context, k string) error {
	if err := t.db.WithContext(ctx).Where("id = ? AND NOT carried_out", k).Delete(&models.IdempotencyRecord{}).Error; err != nil {
		return fmt.Errorf("idempotency release: %w", err)
	}
	return nil
}
