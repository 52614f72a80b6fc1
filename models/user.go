package models

import "time"

// User is an account that signs in with an email and a password. Email is
// stored normalised (account.NormaliseEmail); PasswordHash is an argon2id
// PHC string, never the password.
type User struct {
	ID           string `gorm:"primaryKey;size:36"`
	Email        string `gorm:"size:254;not null;uniqueIndex"`
	PasswordHash string `gorm:"size:200;not null"`
	CreatedAt    time.Time
}

// Session is a signed-in browser. The cookie holds a random token; only its
// SHA-256 is stored, so a leaked table signs nobody in.
type Session struct {
	TokenHash string    `gorm:"primaryKey;size:64"`
	UserID    string    `gorm:"size:36;not null;index"`
	ExpiresAt time.Time `gorm:"not null;index"`
	CreatedAt time.Time
}

// APIKey is a developer key (SPEC §5.3): ID is the public key sent as
// x-api-key, and only the SHA-256 of the secret is kept.
type APIKey struct {
	ID         string `gorm:"primaryKey;size:40"`
	UserID     string `gorm:"size:36;not null;index"`
	Name       string `gorm:"size:100;not null"`
	SecretHash string `gorm:"size:64;not null"`
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// LastUsedAt is when the key last called, to the minute.
	LastUsedAt *time.Time
}
