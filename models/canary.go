package models

import "time"

// Canary is a synthetic job ops staff send through the whole pipeline (API,
// outbox, queue, worker, database) to see that it works and how long it takes.
// Its worker writes Steps CanaryStep rows, one per step, then marks it done;
// a worker killed halfway resumes from the steps already written.
type Canary struct {
	ID          string `gorm:"primaryKey;size:36"`
	RequestID   string `gorm:"size:64"`
	Steps       int    `gorm:"not null"`
	StepMillis  int    `gorm:"not null"`
	Attempts    int    `gorm:"not null;default:0"`
	CreatedAt   time.Time
	StartedAt   *time.Time
	CompletedAt *time.Time
}

// CanaryStep is one step of a Canary; (CanaryID, Step) is unique, which is
// what makes a re-run of the task write no second row.
type CanaryStep struct {
	CanaryID  string `gorm:"primaryKey;size:36"`
	Step      int    `gorm:"primaryKey;autoIncrement:false"`
	Attempt   int    `gorm:"not null"`
	CreatedAt time.Time
}
