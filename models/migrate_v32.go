package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 32: a developer key's last use, which the account page shows
// (written at most once a minute per key, by internal/lastuse).

type apiKeyV32 struct {
	LastUsedAt *time.Time
}

func (apiKeyV32) TableName() string { return "api_keys" }

func migrateV32(tx *gorm.DB) error {
	return addColumns(tx, &apiKeyV32{}, "LastUsedAt")
}
