package models_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
)

// dbSchema is what a database's schema is made of, read back from the
// database's own catalog so that two ways of building it can be compared.
// Types, defaults and definitions are as the database prints them, so
// they compare within one dialect.
type dbSchema struct {
	Tables map[string]dbTable
	// Triggers and Functions (Postgres) by name, their definitions with
	// the schema name taken out.
	Triggers  map[string]string
	Functions map[string]string
}

type dbTable struct {
	Columns    map[string]dbColumn
	PrimaryKey []string
	// Indexes by name, each as "UNIQUE (a, b DESC) WHERE …" on SQLite and
	// as Postgres's own CREATE INDEX text on Postgres: unique and primary
	// key indexes included.
	Indexes map[string]string
	// Constraints (Postgres) by name: primary keys, unique, check, foreign.
	Constraints map[string]string
}

type dbColumn struct {
	Type    string
	NotNull bool
	// Default is the default, or for a generated column its expression.
	Default string
	// Generated says how a generated column is stored: "s" on Postgres, "3"
	// (stored) or "2" (virtual) on SQLite.
	Generated string
}

// readSchema reads db's schema from pg_catalog (and pg_indexes) on
// Postgres, from sqlite_master and the table pragmas on SQLite.
func readSchema(tb testing.TB, db *gorm.DB) dbSchema {
	tb.Helper()
	if models.IsPostgres(db) {
		return readPostgresSchema(tb, db)
	}
	return readSQLiteSchema(tb, db)
}

func readPostgresSchema(tb testing.TB, db *gorm.DB) dbSchema {
	tb.Helper()
	var schemaName string
	must(tb, db.Raw(`SELECT current_schema()`).Scan(&schemaName).Error)
	unqualify := func(s string) string {
		return strings.Join(strings.Fields(strings.ReplaceAll(s, schemaName+".", "")), " ")
	}
	s := dbSchema{Tables: map[string]dbTable{}, Triggers: map[string]string{}, Functions: map[string]string{}}
	table := func(name string) dbTable {
		t, ok := s.Tables[name]
		if !ok {
			t = dbTable{Columns: map[string]dbColumn{}, Indexes: map[string]string{}, Constraints: map[string]string{}}
			s.Tables[name] = t
		}
		return t
	}

	var columns []struct {
		Table, Name, Type, Default, Generated string
		NotNull                               bool
	}
	must(tb, db.Raw(`SELECT c.relname AS "table", a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
			a.attnotnull AS not_null, COALESCE(pg_get_expr(d.adbin, d.adrelid), '') AS "default", a.attgenerated::text AS generated
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`).Scan(&columns).Error)
	for _, c := range columns {
		table(c.Table).Columns[c.Name] = dbColumn{Type: c.Type, NotNull: c.NotNull, Default: unqualify(c.Default), Generated: c.Generated}
	}

	var keys []struct{ Table, Column string }
	must(tb, db.Raw(`SELECT k.table_name AS "table", k.column_name AS "column"
		FROM information_schema.table_constraints t JOIN information_schema.key_column_usage k
			ON k.constraint_schema = t.constraint_schema AND k.constraint_name = t.constraint_name
		WHERE t.table_schema = current_schema() AND t.constraint_type = 'PRIMARY KEY'
		ORDER BY k.table_name, k.ordinal_position`).Scan(&keys).Error)
	for _, k := range keys {
		t := table(k.Table)
		t.PrimaryKey = append(t.PrimaryKey, k.Column)
		s.Tables[k.Table] = t
	}

	var indexes []struct{ Table, Name, Def string }
	must(tb, db.Raw(`SELECT tablename AS "table", indexname AS name, indexdef AS def
		FROM pg_indexes WHERE schemaname = current_schema()`).Scan(&indexes).Error)
	for _, ix := range indexes {
		table(ix.Table).Indexes[ix.Name] = unqualify(ix.Def)
	}

	var constraints []struct{ Table, Name, Def string }
	must(tb, db.Raw(`SELECT c.relname AS "table", con.conname AS name, pg_get_constraintdef(con.oid) AS def
		FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema()`).Scan(&constraints).Error)
	for _, con := range constraints {
		table(con.Table).Constraints[con.Name] = unqualify(con.Def)
	}

	var triggers []struct{ Name, Def string }
	must(tb, db.Raw(`SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def
		FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND NOT t.tgisinternal`).Scan(&triggers).Error)
	for _, t := range triggers {
		s.Triggers[t.Name] = unqualify(t.Def)
	}
	var functions []struct{ Name, Def string }
	must(tb, db.Raw(`SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()`).Scan(&functions).Error)
	for _, f := range functions {
		s.Functions[f.Name] = unqualify(f.Def)
	}
	return s
}

// sqliteWhere finds the predicate of a partial index in its CREATE INDEX.
var sqliteWhere = regexp.MustCompile(`(?is)\)\s+WHERE\s+(.*)$`)

func readSQLiteSchema(tb testing.TB, db *gorm.DB) dbSchema {
	tb.Helper()
	s := dbSchema{Tables: map[string]dbTable{}, Triggers: map[string]string{}}
	var tables []string
	must(tb, db.Raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).Scan(&tables).Error)
	for _, name := range tables {
		t := dbTable{Columns: map[string]dbColumn{}, Indexes: map[string]string{}}
		var tableSQL string
		must(tb, db.Raw(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&tableSQL).Error)
		var columns []struct {
			Name, Type string
			NotNull    bool    `gorm:"column:notnull"`
			Default    *string `gorm:"column:dflt_value"`
			PK, Hidden int
		}
		must(tb, db.Raw(`SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY pk, cid`, name).Scan(&columns).Error)
		for _, c := range columns {
			col := dbColumn{Type: strings.ToLower(c.Type), NotNull: c.NotNull}
			if c.Default != nil {
				col.Default = *c.Default
			}
			if c.Hidden != 0 {
				col.Generated = fmt.Sprint(c.Hidden) // 2 virtual, 3 stored
				col.Default = sqliteGeneratedExpr(tableSQL, c.Name)
			}
			t.Columns[c.Name] = col
			if c.PK > 0 {
				t.PrimaryKey = append(t.PrimaryKey, c.Name)
			}
		}
		var indexes []struct {
			Name   string
			Unique bool
		}
		must(tb, db.Raw(`SELECT name, "unique" FROM pragma_index_list(?)`, name).Scan(&indexes).Error)
		for _, ix := range indexes {
			var cols []struct {
				Name string
				Desc bool
			}
			must(tb, db.Raw(`SELECT name, "desc" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, ix.Name).Scan(&cols).Error)
			var parts []string
			for _, c := range cols {
				if c.Desc {
					c.Name += " DESC"
				}
				parts = append(parts, c.Name)
			}
			def := "(" + strings.Join(parts, ", ") + ")"
			if ix.Unique {
				def = "UNIQUE " + def
			}
			var sql []string
			must(tb, db.Raw(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ? AND sql IS NOT NULL`, ix.Name).Scan(&sql).Error)
			if len(sql) == 1 {
				if m := sqliteWhere.FindStringSubmatch(sql[0]); m != nil {
					def += " WHERE " + strings.Join(strings.Fields(m[1]), " ")
				}
			}
			t.Indexes[ix.Name] = def
		}
		s.Tables[name] = t
	}
	var triggers []struct{ Name, SQL string }
	must(tb, db.Raw(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`).Scan(&triggers).Error)
	for _, tr := range triggers {
		s.Triggers[tr.Name] = strings.Join(strings.Fields(tr.SQL), " ")
	}
	return s
}

// sqliteGeneratedExpr finds the expression of the generated column in the
// CREATE TABLE text of its table (SQLite's pragmas do not show it).
func sqliteGeneratedExpr(tableSQL, column string) string {
	upper := strings.ToUpper(tableSQL)
	for _, q := range []string{"`" + column + "`", `"` + column + `"`, column} {
		at := strings.Index(tableSQL, q+" ")
		if at < 0 {
			continue
		}
		open := strings.Index(upper[at:], "GENERATED ALWAYS AS (")
		if open < 0 {
			return "?"
		}
		start := at + open + len("GENERATED ALWAYS AS (")
		depth := 1
		for i := start; i < len(tableSQL); i++ {
			switch tableSQL[i] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					return tableSQL[start:i]
				}
			}
		}
	}
	return "?"
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
