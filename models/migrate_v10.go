package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 10 as released (0d7c9de, which added the client's column to the
// step e2684a0 made): the revocation mark of a token family's root code,
// and when a client was first used.

// oauthCodeV10 holds the column step 10 adds to the oauth_codes of step 7.
type oauthCodeV10 struct {
	RevokedAt *time.Time
}

func (oauthCodeV10) TableName() string { return "oauth_codes" }

// oauthClientV10 holds the column step 10 adds to the oauth_clients of step 7.
type oauthClientV10 struct {
	UsedAt *time.Time
}

func (oauthClientV10) TableName() string { return "oauth_clients" }

func migrateV10(tx *gorm.DB) error {
	if err := addColumns(tx, &oauthCodeV10{}, "RevokedAt"); err != nil {
		return err
	}
	return addColumns(tx, &oauthClientV10{}, "UsedAt")
}
