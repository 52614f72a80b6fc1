package models

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Step 31: the house seller, the partner the marketplace's own pages sell
// through: a person who finds a name on /market pays for it on the
// hosted checkout, and the sale is the house's. Its commission is 0: the
// service keeps the whole sale.

type housePartnerV31 struct {
	ID            string `gorm:"primaryKey"`
	Name          string
	ContactEmail  string
	Status        string
	CommissionBPS int
	Affiliate     bool
	CreatedAt     time.Time
	ApprovedAt    *time.Time
}

func (housePartnerV31) TableName() string { return "partners" }

func migrateV31(tx *gorm.DB) error {
	now := time.Now().UTC()
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&housePartnerV31{ID: "prt_house", Name: "domaind marketplace",
		ContactEmail: "marketplace@domaind.invalid", Status: "approved", CommissionBPS: 0, CreatedAt: now, ApprovedAt: &now}).Error
}
