package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 24: referrals. Partners become affiliates by a flag (the unused
// affiliate_user_id goes); referral links and their clicks; the link and
// commission a sale was referred with; the link that started a checkout.

type partnerV24 struct {
	Affiliate bool `gorm:"not null;default:false"`
}

func (partnerV24) TableName() string { return "partners" }

type orderV24 struct {
	ReferralLinkID    *string   `gorm:"size:40;index"`
	ReferralPartnerID *string   `gorm:"size:40;index:idx_orders_referral_partner,priority:1"`
	ReferralBPS       int       `gorm:"not null;default:0"`
	ReferralCents     int64     `gorm:"not null;default:0"`
	CreatedAt         time.Time `gorm:"index:idx_orders_referral_partner,priority:2"`
}

func (orderV24) TableName() string { return "orders" }

type checkoutSessionV24 struct {
	ReferralLinkID *string `gorm:"size:40;index"`
	ReferralAt     *time.Time
}

func (checkoutSessionV24) TableName() string { return "checkout_sessions" }

type referralLinkV24 struct {
	ID          string    `gorm:"primaryKey;size:40"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_referral_links_partner,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_referral_links_partner,priority:2"`
	Code        string    `gorm:"size:16;not null;uniqueIndex"`
	Kind        string    `gorm:"size:16;not null"`
	Target      string    `gorm:"size:253;not null;default:''"`
	CreatedAt   time.Time `gorm:"not null;index:idx_referral_links_partner,priority:3"`
}

func (referralLinkV24) TableName() string { return "referral_links" }

type referralClickV24 struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	LinkID      string    `gorm:"size:40;not null;uniqueIndex:idx_referral_clicks_visit,priority:1"`
	Visitor     string    `gorm:"size:64;not null;uniqueIndex:idx_referral_clicks_visit,priority:2"`
	Hour        time.Time `gorm:"not null;uniqueIndex:idx_referral_clicks_visit,priority:3"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_referral_clicks_partner_day,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_referral_clicks_partner_day,priority:2"`
	Day         time.Time `gorm:"not null;index:idx_referral_clicks_partner_day,priority:3"`
	CreatedAt   time.Time `gorm:"not null"`
}

func (referralClickV24) TableName() string { return "referral_clicks" }

func migrateV24(tx *gorm.DB) error {
	if err := addColumns(tx, &partnerV24{}, "Affiliate"); err != nil {
		return err
	}
	stale, err := hasColumn(tx, "partners", "affiliate_user_id")
	if err != nil {
		return err
	}
	if stale {
		if err := tx.Exec("ALTER TABLE partners DROP COLUMN affiliate_user_id").Error; err != nil {
			return err
		}
	}
	if err := addColumns(tx, &orderV24{}, "ReferralLinkID", "ReferralPartnerID", "ReferralBPS", "ReferralCents"); err != nil {
		return err
	}
	if err := addColumns(tx, &checkoutSessionV24{}, "ReferralLinkID", "ReferralAt"); err != nil {
		return err
	}
	m := tx.Migrator()
	for _, ix := range []struct {
		model any
		name  string
	}{{&orderV24{}, "ReferralLinkID"}, {&orderV24{}, "idx_orders_referral_partner"}, {&checkoutSessionV24{}, "ReferralLinkID"}} {
		if !m.HasIndex(ix.model, ix.name) {
			if err := m.CreateIndex(ix.model, ix.name); err != nil {
				return err
			}
		}
	}
	return tx.AutoMigrate(&referralLinkV24{}, &referralClickV24{})
}
