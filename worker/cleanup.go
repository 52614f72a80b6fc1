package worker

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Retention of rows that only matter for a while.
const (
	outboxRetention = 7 * 24 * time.Hour
	canaryRetention = 7 * 24 * time.Hour
	// lookupRetention keeps lookups for audits and support questions
	// ("what did WHOIS say about x last week?"); answers are served from the
	// one-hour cache, never from old rows.
	lookupRetention = 30 * 24 * time.Hour
	// expiredRetention keeps expired credentials a day, for support questions.
	expiredRetention = 24 * time.Hour
	// unusedClientRetention prunes OAuth registrations nobody authorized.
	unusedClientRetention = 24 * time.Hour
	// bulkRetention keeps finished bulk operations and their per-item
	// outcomes for a month, for "what happened to my domains" questions.
	bulkRetention = 30 * 24 * time.Hour
)

// cleanup deletes rows past their retention and folds the marketplace's
// count deltas. Both are idempotent, so a re-run after a crash is harmless.
type cleanup struct {
	db  *gorm.DB
	log *slog.Logger
}

func (h *cleanup) Work(ctx context.Context, _ tasks.MaintenanceCleanupPayload) error {
	now := time.Now().UTC()
	db := h.db.WithContext(ctx)
	steps := []struct {
		what string
		run  func() *gorm.DB
	}{
		{"outbox entries", func() *gorm.DB {
			return db.Where("enqueued_at < ?", now.Add(-outboxRetention)).Delete(&models.OutboxEntry{})
		}},
		{"canary steps", func() *gorm.DB {
			old := db.Model(&models.Canary{}).Select("id").Where("created_at < ?", now.Add(-canaryRetention))
			return db.Where("canary_id IN (?)", old).Delete(&models.CanaryStep{})
		}},
		{"canaries", func() *gorm.DB {
			return db.Where("created_at < ?", now.Add(-canaryRetention)).Delete(&models.Canary{})
		}},
		{"lookups", func() *gorm.DB {
			return db.Where("created_at < ?", now.Add(-lookupRetention)).Delete(&models.Lookup{})
		}},
		{"sessions", func() *gorm.DB {
			return db.Where("expires_at < ?", now).Delete(&models.Session{})
		}},
		{"OAuth tokens", func() *gorm.DB {
			return db.Where("expires_at < ?", now.Add(-expiredRetention)).Delete(&models.OAuthToken{})
		}},
		{"OAuth codes", func() *gorm.DB { // a code is its family's root: kept while the family lives
			live := db.Model(&models.OAuthToken{}).Select("1").Where("family = oauth_codes.hash")
			return db.Where("expires_at < ? AND NOT EXISTS (?)", now.Add(-expiredRetention), live).Delete(&models.OAuthCode{})
		}},
		{"partners' idempotency records", func() *gorm.DB { // a day's answers, a few minutes' claims
			return db.Where("expires_at < ?", now).Delete(&models.IdempotencyRecord{})
		}},
		{"tool jobs", func() *gorm.DB { // kept 24 h (ToolJob.ExpiresAt)
			return db.Where("expires_at < ?", now).Delete(&models.ToolJob{})
		}},
		{"bulk items", func() *gorm.DB {
			old := db.Model(&models.BulkOp{}).Select("id").Where("finished_at < ?", now.Add(-bulkRetention))
			return db.Where("bulk_op_id IN (?)", old).Delete(&models.BulkItem{})
		}},
		{"bulk operations", func() *gorm.DB {
			return db.Where("finished_at < ?", now.Add(-bulkRetention)).Delete(&models.BulkOp{})
		}},
		// A delivery still pending is kept with its event, past the
		// retention, until it settles: deleted under its task, it would
		// never release the deliveries of its subject waiting behind it.
		{"webhook deliveries", func() *gorm.DB {
			old := db.Model(&models.Event{}).Select("seq").Where("created_at < ?", now.Add(-webhook.Retention))
			return db.Where("event_seq IN (?) AND state <> ?", old, models.DeliveryPending).Delete(&models.WebhookDelivery{})
		}},
		{"partner events", func() *gorm.DB { // the history partners replay (GET /events)
			pending := db.Model(&models.WebhookDelivery{}).Select("1").
				Where("webhook_deliveries.event_seq = events.seq AND webhook_deliveries.state = ?", models.DeliveryPending)
			return db.Where("created_at < ? AND NOT EXISTS (?)", now.Add(-webhook.Retention), pending).Delete(&models.Event{})
		}},
		{"webhook deliveries without their event", func() *gorm.DB {
			// A redelivery of an expiring event made between the two steps
			// above (or while this one runs, for the next run) has lost its
			// event; those below the first event kept have none. (One of an
			// event whose seq is above a kept one's, as a seq taken before
			// another's and committed after it may be, waits until the
			// events below it expire.)
			first := db.Model(&models.Event{}).Select("COALESCE(MIN(seq), ?)", int64(math.MaxInt64))
			return db.Where("event_seq < (?)", first).Delete(&models.WebhookDelivery{})
		}},
		{"unused OAuth clients", func() *gorm.DB {
			return db.Where("used_at IS NULL AND created_at < ?", now.Add(-unusedClientRetention)).Delete(&models.OAuthClient{})
		}},
	}
	for _, s := range steps {
		res := s.run()
		if res.Error != nil {
			return fmt.Errorf("delete expired %s: %w", s.what, res.Error)
		}
		if res.RowsAffected > 0 {
			h.log.InfoContext(ctx, "deleted expired rows", "what", s.what, "rows", res.RowsAffected)
		}
	}
	if err := models.CompactListingCounts(db); err != nil {
		return fmt.Errorf("compact listing counts: %w", err)
	}
	return nil
}
