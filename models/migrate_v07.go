package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 7 as released (8cd7ba9): OAuth clients, codes and tokens. The tables
// carry the oauth_* names e2684a0 gave them: the o_auth_* names gorm made up
// before that lived for half an hour on a development branch, and no
// database kept them (step 10 of that time required oauth_tokens).

type oauthClientV7 struct {
	ID           string `gorm:"primaryKey;size:40"`
	Name         string `gorm:"size:200;not null"`
	RedirectURIs string `gorm:"not null"` // []string as JSON
	CreatedAt    time.Time
}

func (oauthClientV7) TableName() string { return "oauth_clients" }

type oauthCodeV7 struct {
	Hash          string `gorm:"primaryKey;size:64"`
	ClientID      string `gorm:"size:40;not null"`
	UserID        string `gorm:"size:36;not null"`
	RedirectURI   string `gorm:"size:2000;not null"`
	CodeChallenge string `gorm:"size:128;not null"`
	Scope         string `gorm:"size:200;not null"`
	ExpiresAt     time.Time
	UsedAt        *time.Time
	CreatedAt     time.Time
}

func (oauthCodeV7) TableName() string { return "oauth_codes" }

type oauthTokenV7 struct {
	Hash      string    `gorm:"primaryKey;size:64"`
	Kind      string    `gorm:"size:8;not null"`
	Family    string    `gorm:"size:64;not null;index"`
	ClientID  string    `gorm:"size:40;not null"`
	UserID    string    `gorm:"size:36;not null;index"`
	Scope     string    `gorm:"size:200;not null"`
	ExpiresAt time.Time `gorm:"index"`
	UsedAt    *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

func (oauthTokenV7) TableName() string { return "oauth_tokens" }

func migrateV7(tx *gorm.DB) error {
	return tx.AutoMigrate(&oauthClientV7{}, &oauthCodeV7{}, &oauthTokenV7{})
}
