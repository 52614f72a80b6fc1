package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/namesearch"
	"github.com/domaind/domaind/models"
)

// sandboxSeed fixes the sandbox names, so every installation's sandbox sells
// the same domains and partners' tests can name them.
const sandboxSeed = 20261125

// sandboxLevels bound the sandbox's three price levels, in cents.
var sandboxLevels = [4]float64{2_000, 50_000, 500_000, 5_000_000}

// SandboxInventory fills the partners' sandbox with n synthetic listings
// (namesearch.SampleInventory's names, built from real words across many
// TLDs) that it does not hold yet. Prices spread log-uniformly over three
// levels a test wants to tell apart: a third from $20 to $500, a third to
// $5,000, a third to $50,000; half have a floor. It returns how many it
// added; a second call adds none.
func SandboxInventory(ctx context.Context, db *gorm.DB, n int, now time.Time) (int, error) {
	db = db.WithContext(ctx)
	var have []string
	if err := db.Model(&models.SandboxListing{}).Pluck("domain", &have).Error; err != nil {
		return 0, fmt.Errorf("read the sandbox inventory: %w", err)
	}
	held := make(map[string]bool, len(have))
	for _, d := range have {
		held[d] = true
	}
	rng := rand.New(rand.NewPCG(sandboxSeed, uint64(len(have))))
	var rows []models.SandboxListing
	for i, domain := range namesearch.SampleInventory(n, sandboxSeed) {
		if held[domain] {
			continue
		}
		lo, hi := sandboxLevels[i%3], sandboxLevels[i%3+1]
		bin := roundPrice(math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo))))
		l := models.SandboxListing{
			ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:], BINCents: &bin,
			Currency: "USD", CreatedAt: now.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))).UTC(),
		}
		if rng.IntN(2) == 0 {
			floor := roundPrice(float64(bin) * (0.5 + rng.Float64()*0.4))
			l.FloorCents = &floor
		}
		rows = append(rows, l)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	if err := db.CreateInBatches(rows, 500).Error; err != nil {
		return 0, fmt.Errorf("add sandbox listings: %w", err)
	}
	return len(rows), nil
}
