package models

import "time"

// IdempotencyRecord is a partner's Idempotency-Key and what it answers:
// while its request runs, the request's fingerprint; then the answer to
// replay. A partner's keys are kept here rather than in Redis, whose
// other callers' records live there (internal/idempotency), because a
// retried sale or refund must find its first answer even after Redis lost
// its data. Record is sealed: an answer may carry a secret shown once.
type IdempotencyRecord struct {
	// ID is the caller's scope and a hash of the key.
	ID     string `gorm:"primaryKey;size:160"`
	Record []byte `gorm:"not null"`
	// ExpiresAt is when the key is free again: a running request's claim
	// ends after a few minutes (its process may have died), an answer
	// after a day.
	ExpiresAt time.Time `gorm:"not null;index"`
	// CarriedOut says the request made its change (the transaction that
	// made it set this): the key is then never freed for a retry to run
	// again, even when the answer was never stored.
	CarriedOut bool `gorm:"not null;default:false"`
}
