package models

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// The schema changes the steps share. They are part of what released steps
// do: change one only in a way that leaves every step building the same.

// execAll runs statements in order, stopping at the first error.
func execAll(tx *gorm.DB, statements []string) error {
	for _, s := range statements {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

// addColumns adds to snapshot's table those of fields (Go field names of
// snapshot) it does not have yet.
func addColumns(tx *gorm.DB, snapshot any, fields ...string) error {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(snapshot); err != nil {
		return err
	}
	for _, name := range fields {
		f := stmt.Schema.LookUpField(name)
		if f == nil {
			return fmt.Errorf("%T has no field %s", snapshot, name)
		}
		has, err := hasColumn(tx, stmt.Schema.Table, f.DBName)
		if err != nil {
			return err
		}
		if has {
			continue
		}
		if err := tx.Migrator().AddColumn(snapshot, name); err != nil {
			return fmt.Errorf("add %s.%s: %w", stmt.Schema.Table, f.DBName, err)
		}
	}
	return nil
}

// changeColumnType gives column of snapshot's table the type want (as the
// database names it: information_schema's data_type on Postgres, the
// declared type on SQLite) unless it has it: on Postgres with alter, on
// SQLite, which cannot change a column's type, by rebuilding the table as
// snapshot declares it.
func changeColumnType(tx *gorm.DB, snapshot any, column, want, alter string) error {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(snapshot); err != nil {
		return err
	}
	typ, err := columnType(tx, stmt.Schema.Table, column)
	if err != nil {
		return err
	}
	switch {
	case strings.EqualFold(typ, want):
		return nil
	case typ == "":
		return fmt.Errorf("%s.%s does not exist", stmt.Schema.Table, column)
	case IsPostgres(tx):
		return tx.Exec(alter).Error
	default:
		return rebuildSQLiteTable(tx, snapshot)
	}
}

// hasColumn reports whether table has column.
func hasColumn(tx *gorm.DB, table, column string) (bool, error) {
	typ, err := columnType(tx, table, column)
	return typ != "", err
}

// columnType returns the type of table's column, "" when there is no such
// column: information_schema's data_type on Postgres, the declared type on
// SQLite (generated columns included).
func columnType(tx *gorm.DB, table, column string) (string, error) {
	q := `SELECT type FROM pragma_table_xinfo(?) WHERE name = ?`
	if IsPostgres(tx) {
		q = `SELECT data_type FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`
	}
	var types []string
	if err := tx.Raw(q, table, column).Scan(&types).Error; err != nil {
		return "", fmt.Errorf("read the type of %s.%s: %w", table, column, err)
	}
	if len(types) == 0 {
		return "", nil
	}
	return types[0], nil
}

// rebuildSQLiteTable recreates snapshot's table as snapshot declares it,
// with its rows (the columns both versions have) and its indexes (those
// snapshot declares as it declares them, the others as they were). SQLite
// cannot change a column's type, or add a stored generated column, in
// place. The tables of this schema have no triggers, views or foreign keys
// on SQLite for the rebuild to lose.
func rebuildSQLiteTable(tx *gorm.DB, snapshot any) error {
	stmt := &gorm.Statement{DB: tx}
	if err := stmt.Parse(snapshot); err != nil {
		return err
	}
	table := stmt.Schema.Table
	old := table + "__rebuilt"
	var indexes []struct{ Name, SQL string }
	err := tx.Raw(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, table).
		Scan(&indexes).Error
	if err != nil {
		return err
	}
	for _, ix := range indexes {
		if err := tx.Exec(`DROP INDEX ` + quote(ix.Name)).Error; err != nil {
			return err
		}
	}
	if err := tx.Exec(`ALTER TABLE ` + quote(table) + ` RENAME TO ` + quote(old)).Error; err != nil {
		return err
	}
	if err := tx.Migrator().CreateTable(snapshot); err != nil {
		return err
	}
	var columns []string
	err = tx.Raw(`SELECT n.name FROM pragma_table_xinfo(?) n JOIN pragma_table_xinfo(?) o ON o.name = n.name
		WHERE n.hidden = 0 AND o.hidden = 0 ORDER BY n.cid`, table, old).Scan(&columns).Error
	if err != nil {
		return err
	}
	for i, c := range columns {
		columns[i] = quote(c)
	}
	list := strings.Join(columns, ", ")
	if err := tx.Exec(`INSERT INTO ` + quote(table) + ` (` + list + `) SELECT ` + list + ` FROM ` + quote(old)).Error; err != nil {
		return err
	}
	if err := tx.Exec(`DROP TABLE ` + quote(old)).Error; err != nil {
		return err
	}
	for _, ix := range indexes {
		if tx.Migrator().HasIndex(snapshot, ix.Name) {
			continue
		}
		if err := tx.Exec(ix.SQL).Error; err != nil {
			return err
		}
	}
	return nil
}

// quote quotes an SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
