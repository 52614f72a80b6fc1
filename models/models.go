// Package models holds the gorm models, their migrations and the queries and
// rules that belong to the data. The same models run on Postgres and SQLite.
package models

import (
	"errors"

	"github.com/google/uuid"
)

// Errors shared by every query of this package. Callers compare with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// NewID returns a new opaque identifier for a row exposed to clients.
func NewID() string { return uuid.NewString() }
