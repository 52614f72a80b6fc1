package models

import (
	"context"

	"gorm.io/gorm"
)

// LastVersion is the version of the newest step.
var LastVersion = migrations[len(migrations)-1].Version

// MigrateTo applies the steps up to version, as Migrate applies them all.
func MigrateTo(ctx context.Context, db *gorm.DB, version int) error {
	for i, m := range migrations {
		if m.Version == version {
			return migrate(ctx, db, migrations[:i+1])
		}
	}
	panic("no migration step has this version")
}

// ApplySQLOnlySchema adds to a database made by AutoMigrate of All() the
// parts of the schema that no struct tag expresses, as steps 8 and 9 make
// them: the partial indexes of the marketplace's orders, and on Postgres
// the trigram index of its name search and the triggers and table of its
// counts.
func ApplySQLOnlySchema(db *gorm.DB) error {
	if err := execAll(db, listingIndexes); err != nil {
		return err
	}
	if err := createListingSearchIndex(db); err != nil {
		return err
	}
	if !IsPostgres(db) {
		return nil
	}
	return execAll(db, listingCountsDDL)
}
