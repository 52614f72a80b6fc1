package modelstest

import (
	"fmt"
	"sync"
	"testing"

	"gorm.io/gorm"
)

// FailReads makes db's reads of table (Find, Take, First: gorm's query
// callbacks) fail with err, as a database that fails part way through a
// service's work would, until the func returned is called or the test
// ends.
func FailReads(tb testing.TB, db *gorm.DB, table string, err error) (restore func()) {
	tb.Helper()
	name := fmt.Sprintf("modelstest:fail_reads:%d", serial.Add(1))
	fail := func(tx *gorm.DB) {
		if tx.Statement.Table == table {
			tx.AddError(err)
		}
	}
	if err := db.Callback().Query().Before("gorm:query").Register(name, fail); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	restore = func() { once.Do(func() { db.Callback().Query().Remove(name) }) }
	tb.Cleanup(restore)
	return restore
}
