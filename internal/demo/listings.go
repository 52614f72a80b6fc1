// Package demo makes the demo data of the embedded mode and of the
// benchmarks: a marketplace that looks like one.
package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
)

// Words are combined into names the way aftermarket names are: brandable
// pairs of short words.
var (
	firstWords = []string{
		"blue", "bright", "swift", "green", "smart", "happy", "bold", "pure", "prime", "true",
		"north", "urban", "solar", "lunar", "rapid", "clever", "quiet", "golden", "silver", "royal",
		"fresh", "wild", "open", "cloud", "pixel", "data", "cyber", "micro", "mega", "nano",
		"alpha", "beta", "delta", "omega", "nova", "zen", "echo", "vivid", "noble", "lucky",
		"red", "black", "white", "crystal", "iron", "stone", "river", "ocean", "forest", "desert",
		"global", "local", "first", "next", "future", "modern", "classic", "simple", "easy", "quick",
		"super", "hyper", "ultra", "meta", "neo", "retro", "atomic", "cosmic", "digital", "social",
		"wise", "kind", "brave", "calm", "cool", "warm", "sharp", "smooth", "grand", "little",
	}
	secondWords = []string{
		"labs", "hub", "works", "studio", "point", "base", "box", "cart", "shop", "market",
		"bank", "pay", "coin", "wallet", "trade", "deal", "link", "net", "web", "app",
		"cloud", "stack", "code", "dev", "bot", "mind", "brain", "logic", "data", "byte",
		"health", "care", "fit", "food", "chef", "kitchen", "home", "nest", "house", "space",
		"travel", "trip", "flight", "ride", "car", "bike", "road", "path", "way", "map",
		"media", "news", "press", "blog", "story", "book", "learn", "school", "class", "tutor",
		"energy", "power", "spark", "light", "sun", "wind", "water", "green", "earth", "farm",
		"design", "craft", "art", "pixel", "photo", "video", "music", "sound", "beat", "tune",
		"legal", "law", "tax", "money", "fund", "capital", "invest", "wealth", "loan", "credit",
		"ai", "robot", "vision", "sense", "signal", "wave", "pulse", "flow", "sync", "loop",
	}
	listingTLDs = []string{"com", "com", "com", "com", "net", "org", "io", "co", "ai", "app", "dev", "xyz", "shop", "me", "info", "de", "uk", "nl", "fr", "store", "tech", "online", "site", "club", "pro"}
)

// label returns the i-th label of the generator's endless, repetition-free
// sequence: word pairs first, then the same pairs with a number.
func label(i int) string {
	nf, pairs := len(firstWords), len(firstWords)*len(secondWords)
	pair, round := i%pairs, i/pairs
	l := firstWords[pair%nf] + secondWords[pair/nf]
	if round > 0 {
		l += fmt.Sprint(round)
	}
	return l
}

// name returns the i-th marketplace name: label(i) under a TLD that
// spreads across pairs without repeating a (label, tld) combination (it
// depends on the round and the pair, the label on the pair).
func name(i int) string {
	pairs := len(firstWords) * len(secondWords)
	pair, round := i%pairs, i/pairs
	return label(i) + "." + listingTLDs[(pair+round*7)%len(listingTLDs)]
}

// Listings adds n listings to the marketplace, as a seller population
// would: prices spread log-uniformly from $100 to $250,000 (one in ten with
// no buy-now price, half with a floor), listed over the last two years, a
// few awaiting approval or hidden. The names continue after the ones
// already there, so repeated calls add new names. It returns how many it
// added.
func Listings(ctx context.Context, db *gorm.DB, n int, seed uint64, now time.Time) (int, error) {
	db = db.WithContext(ctx)
	var existing int64
	if err := db.Model(&models.Listing{}).Count(&existing).Error; err != nil {
		return 0, fmt.Errorf("count listings: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(existing)))
	const batch = 1000
	added := 0
	for added < n {
		rows := make([]models.Listing, 0, min(batch, n-added))
		for len(rows) < cap(rows) {
			domain := name(int(existing) + added + len(rows))
			l := models.Listing{
				ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:], Currency: "USD",
				Approved: rng.IntN(100) < 96, MarketplaceVisible: rng.IntN(100) < 97,
				CreatedAt: now.Add(-time.Duration(rng.Int64N(int64(730 * 24 * time.Hour)))).UTC(),
			}
			if rng.IntN(10) > 0 {
				bin := roundPrice(math.Exp(math.Log(10_000) + rng.Float64()*(math.Log(25_000_000)-math.Log(10_000))))
				l.BINCents = &bin
				if rng.IntN(2) == 0 {
					floor := roundPrice(float64(bin) * (0.5 + rng.Float64()*0.4))
					l.FloorCents = &floor
				}
			}
			rows = append(rows, l)
		}
		if err := db.CreateInBatches(rows, batch).Error; err != nil {
			return added, fmt.Errorf("add listings: %w", err)
		}
		added += len(rows)
	}
	return added, nil
}

// roundPrice rounds cents to a price a seller would ask: two significant
// digits, in whole dollars.
func roundPrice(cents float64) int64 {
	mag := math.Pow(10, math.Floor(math.Log10(cents))-1)
	return max(int64(math.Round(cents/mag)*mag)/100*100, 100)
}
