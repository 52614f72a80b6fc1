package models

import "time"

// Kinds of referral links: to the home page, to the marketplace's search
// for a name, or to one listed name.
const (
	LinkGeneric = "generic"
	LinkDomain  = "domain"
	LinkProduct = "product"
)

// ReferralLink is an affiliate partner's tracking link, served at
// /r/{code}: a click is counted and sends the visitor to the link's
// target with an attribution cookie (internal/referral).
type ReferralLink struct {
	ID          string `gorm:"primaryKey;size:40"`
	PartnerID   string `gorm:"size:40;not null;index:idx_referral_links_partner,priority:1"`
	Environment string `gorm:"size:8;not null;index:idx_referral_links_partner,priority:2"`
	Code        string `gorm:"size:16;not null;uniqueIndex"`
	Kind        string `gorm:"size:16;not null"`
	// Target is the name of a domain or product link ("" for generic).
	Target    string    `gorm:"size:253;not null;default:''"`
	CreatedAt time.Time `gorm:"not null;index:idx_referral_links_partner,priority:3"`
}

// ReferralClick is one counted click of a link: one per visitor, link and
// hour (the unique index drops the rest). Visitor is a keyed hash of the
// visitor's address and user agent, never the address itself.
type ReferralClick struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	LinkID      string    `gorm:"size:40;not null;uniqueIndex:idx_referral_clicks_visit,priority:1"`
	Visitor     string    `gorm:"size:64;not null;uniqueIndex:idx_referral_clicks_visit,priority:2"`
	Hour        time.Time `gorm:"not null;uniqueIndex:idx_referral_clicks_visit,priority:3"`
	PartnerID   string    `gorm:"size:40;not null;index:idx_referral_clicks_partner_day,priority:1"`
	Environment string    `gorm:"size:8;not null;index:idx_referral_clicks_partner_day,priority:2"`
	// Day is the click's UTC day, which per-day series group by.
	Day       time.Time `gorm:"not null;index:idx_referral_clicks_partner_day,priority:3"`
	CreatedAt time.Time `gorm:"not null"`
}
