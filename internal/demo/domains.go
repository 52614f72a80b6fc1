package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/models"
)

// ownedTLDs are the TLDs of a demo portfolio (all sold by the sandbox).
var ownedTLDs = []string{"com", "com", "com", "net", "org", "io", "co", "app", "dev", "nl", "de", "xyz"}

// demoFolders are the folders a demo portfolio is sorted into ("" is none).
var demoFolders = []string{"", "", "clients", "personal", "projects", "parked"}

// Domains gives user n domains, as a portfolio looks: mostly active over
// the next three years, about one in ten expiring within 30 days, a few
// expired or in redemption; most locked, most on two nameservers, spread
// over folders. The names are registered in the sandbox registry too, so
// bulk operations on them reach it. It does nothing when the user already
// has domains, and returns how many it added.
func Domains(ctx context.Context, db *gorm.DB, userID string, n int, seed uint64, now time.Time) (int, error) {
	db = db.WithContext(ctx)
	var existing int64
	if err := db.Model(&models.Domain{}).Where("user_id = ?", userID).Count(&existing).Error; err != nil {
		return 0, fmt.Errorf("count domains: %w", err)
	}
	if existing > 0 {
		return 0, nil
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	domains := make([]models.Domain, 0, n)
	registered := make([]models.SandboxName, 0, n)
	for i := range n {
		tld := ownedTLDs[i%len(ownedTLDs)]
		d := models.Domain{
			ID: models.NewID(), Name: label(i) + "." + tld, TLD: tld, UserID: userID,
			Locked: rng.IntN(10) < 7, Nameservers: []string{"ns1.domaind-dns.net", "ns2.domaind-dns.net"},
			Folder: demoFolders[rng.IntN(len(demoFolders))], AutoRenew: rng.IntN(10) < 6, Status: models.DomainActive,
			CreatedAt: now.Add(-time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour)))).UTC(),
		}
		switch r := rng.IntN(1000); {
		case r < 10: // in redemption: expired more than the 30-day grace ago
			d.Status, d.ExpiresAt = models.DomainRedemption, now.AddDate(0, 0, -31-rng.IntN(25))
		case r < 30:
			d.Status, d.ExpiresAt = models.DomainExpired, now.AddDate(0, 0, -1-rng.IntN(29))
		case r < 130:
			d.ExpiresAt = now.AddDate(0, 0, 1+rng.IntN(30))
		default:
			d.ExpiresAt = now.AddDate(0, 0, 31+rng.IntN(3*365))
		}
		d.ExpiresAt = d.ExpiresAt.UTC().Truncate(time.Second)
		if rng.IntN(20) == 0 {
			d.Nameservers = []string{"ns1.example-host.com", "ns2.example-host.com", "ns3.example-host.com"}
		}
		domains = append(domains, d)
		registered = append(registered, models.SandboxName{Name: d.Name, TLD: tld, State: models.SandboxRegistered, Locked: d.Locked, Nameservers: d.Nameservers})
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		upsert := clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoUpdates: clause.AssignmentColumns([]string{"state", "locked", "nameservers"})}
		if err := tx.Clauses(upsert).CreateInBatches(registered, 500).Error; err != nil {
			return fmt.Errorf("register demo domains in the sandbox: %w", err)
		}
		return tx.CreateInBatches(domains, 500).Error
	})
	if err != nil {
		return 0, err
	}
	return len(domains), nil
}
