package models

import "gorm.io/gorm"

// Step 4 as released (e387f93): the label syntax of a TLD.

// tldV4 holds the column step 4 adds to the tlds of step 2.
type tldV4 struct {
	Syntax string // registry.DomainSyntax as JSON
}

func (tldV4) TableName() string { return "tlds" }

func migrateV4(tx *gorm.DB) error { return addColumns(tx, &tldV4{}, "Syntax") }
