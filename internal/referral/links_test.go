package referral

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The cap on a partner's links holds when links are made at once: of ten
// requests for the last two places, two are taken.
func TestTheLinkCapHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := db.Create(&models.Partner{ID: "prt_a", Name: "A", ContactEmail: "a@example.com", Status: models.PartnerApproved,
		Affiliate: true, CreatedAt: now}).Error; err != nil {
		t.Fatal(err)
	}
	existing := make([]models.ReferralLink, MaxLinks-2)
	for i := range existing {
		existing[i] = models.ReferralLink{ID: fmt.Sprintf("lnk_%04d", i), PartnerID: "prt_a", Environment: models.EnvSandbox,
			Code: fmt.Sprintf("c%07d", i), Kind: models.LinkGeneric, CreatedAt: now}
	}
	if err := db.CreateInBatches(existing, 200).Error; err != nil {
		t.Fatal(err)
	}
	s := New(db, nil, Options{BaseURL: "https://domaind.test", SecretKey: []byte("test-secret-key-0123456789abcdef")}, func() time.Time { return now })
	var mu sync.Mutex
	made, refused := 0, 0
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := s.CreateLink(context.Background(), "prt_a", models.EnvSandbox, NewLink{Kind: models.LinkGeneric})
			mu.Lock()
			defer mu.Unlock()
			if e, ok := fault.As(err); ok && e.Code == fault.Conflict {
				refused++
			} else if err == nil {
				made++
			} else {
				t.Errorf("CreateLink: %v", err)
			}
		})
	}
	wg.Wait()
	var n int64
	db.Model(&models.ReferralLink{}).Where("partner_id = ?", "prt_a").Count(&n)
	if made != 2 || refused != 8 || n != MaxLinks {
		t.Errorf("%d made, %d refused, %d links; want 2, 8 and %d", made, refused, n, MaxLinks)
	}
}
