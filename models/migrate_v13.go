package models

import "gorm.io/gorm"

// Step 13: the resource (RFC 8707) an authorization code and the tokens
// issued from it are bound to; empty for grants that named none.

// oauthCodeV13 holds the column step 13 adds to oauth_codes.
type oauthCodeV13 struct {
	Resource string `gorm:"size:2000;not null;default:''"`
}

func (oauthCodeV13) TableName() string { return "oauth_codes" }

// oauthTokenV13 holds the column step 13 adds to oauth_tokens.
type oauthTokenV13 struct {
	Resource string `gorm:"size:2000;not null;default:''"`
}

func (oauthTokenV13) TableName() string { return "oauth_tokens" }

func migrateV13(tx *gorm.DB) error {
	if err := addColumns(tx, &oauthCodeV13{}, "Resource"); err != nil {
		return err
	}
	return addColumns(tx, &oauthTokenV13{}, "Resource")
}
