package sandbox

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// notSold marks an operation a TLD does not offer (its price is null).
const notSold = -1

// tldSeed is one TLD of the simulated registry: its prices in USD cents for
// one year (notSold where the operation does not exist) and its rules, which
// become a registry.TLDInfo in the Realtime Register shape.
type tldSeed struct {
	TLD      string
	Operator string // registry operator, e.g. "Verisign"

	Register, Renew, Transfer, Restore int64

	PeriodsMonths  []int // allowed registration periods in months
	MinNS, MaxNS   int
	NSRequired     bool
	OrgRequired    bool
	OrgAllowed     bool
	Countries      []string // ISO 3166-1 alpha-2; empty = no restriction
	IDN            bool
	PremiumSupport string // NO, REGULAR, CREATE_ONLY, TRANSFER_FROM_REGISTRY
	AuthCode       bool   // transfer requires an auth code
	Features       []string
	RedemptionDays int
	MinLength      int // shortest label the registry accepts
}

// premiumSeed is a name the registry prices above its TLD's standard price.
type premiumSeed struct {
	Name  string
	Cents int64 // create price, USD cents
}

// info builds the Realtime Register shape of the seed's rules.
func (s tldSeed) info() registry.TLDInfo {
	var info registry.TLDInfo
	info.Provider = s.Operator
	info.ApplicableFor = []string{s.TLD}
	md := &info.Metadata
	md.CreateDomainPeriods = s.PeriodsMonths
	md.RenewDomainPeriods = s.PeriodsMonths
	md.TransferDomainPeriods = []int{12}
	md.Registrant = &registry.Registrant{OrganizationRequired: s.OrgRequired, OrganizationAllowed: s.OrgAllowed, AllowedCountries: s.Countries}
	md.Nameservers = &registry.NameserverRule{Min: s.MinNS, Max: s.MaxNS, Required: s.NSRequired}
	idnType := ""
	if s.IDN {
		idnType = "UTS46"
	}
	md.DomainSyntax = &registry.DomainSyntax{MinLength: s.MinLength, MaxLength: 63, IDNSupport: s.IDN, IDNType: idnType}
	md.PremiumSupport = s.PremiumSupport
	md.TransferRequiresAuthcode = s.AuthCode
	md.FeaturesAvailable = s.Features
	md.RedemptionPeriod = s.RedemptionDays
	return info
}

func cents(c int64) *int64 {
	if c == notSold {
		return nil
	}
	return &c
}

// Seed loads the simulated registry: its TLDs, registered and reserved
// names, and premium names. Rows already there are left alone, so seeding
// twice changes nothing. It returns how many rows it added.
func Seed(ctx context.Context, db *gorm.DB) (int, error) {
	db = db.WithContext(ctx)
	tlds := make([]models.SandboxTLD, 0, len(tldSeeds))
	for _, s := range tldSeeds {
		tlds = append(tlds, models.SandboxTLD{
			Name: s.TLD, Info: s.info(),
			RegisterCents: cents(s.Register), RenewCents: cents(s.Renew),
			TransferCents: cents(s.Transfer), RestoreCents: cents(s.Restore),
		})
	}
	var names []models.SandboxName
	for _, tld := range registeredTLDs {
		for _, label := range registeredLabels {
			names = append(names, models.SandboxName{Name: label + "." + tld, TLD: tld, State: models.SandboxRegistered})
		}
	}
	for _, s := range tldSeeds {
		for _, label := range reservedLabels {
			names = append(names, models.SandboxName{Name: label + "." + s.TLD, TLD: s.TLD, State: models.SandboxReserved})
		}
	}
	for _, p := range premiumSeeds {
		_, tld, _ := strings.Cut(p.Name, ".")
		names = append(names, models.SandboxName{Name: p.Name, TLD: tld, State: models.SandboxPremium, PremiumCents: cents(p.Cents)})
	}
	added := 0
	err := db.Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(tlds, 200)
		if res.Error != nil {
			return fmt.Errorf("sandbox TLDs: %w", res.Error)
		}
		added += int(res.RowsAffected)
		res = tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(names, 500)
		if res.Error != nil {
			return fmt.Errorf("sandbox names: %w", res.Error)
		}
		added += int(res.RowsAffected)
		return nil
	})
	return added, err
}
