package models

import (
	"time"

	"gorm.io/gorm"
)

// Step 5 as released (c829ac9): users and their sessions.

type userV5 struct {
	ID           string `gorm:"primaryKey;size:36"`
	Email        string `gorm:"size:254;not null;uniqueIndex"`
	PasswordHash string `gorm:"size:200;not null"`
	CreatedAt    time.Time
}

func (userV5) TableName() string { return "users" }

type sessionV5 struct {
	TokenHash string    `gorm:"primaryKey;size:64"`
	UserID    string    `gorm:"size:36;not null;index"`
	ExpiresAt time.Time `gorm:"not null;index"`
	CreatedAt time.Time
}

func (sessionV5) TableName() string { return "sessions" }

func migrateV5(tx *gorm.DB) error { return tx.AutoMigrate(&userV5{}, &sessionV5{}) }
