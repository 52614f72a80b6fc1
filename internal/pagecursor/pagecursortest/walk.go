// Package pagecursortest reads the lists that pagecursor pages, for tests:
// their rows, page by page, and what a page in their middle reads.
package pagecursortest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Walk reads a list page by page from the first: page reads the page a
// cursor starts at ("" for the first) and returns its rows and the next
// page's cursor ("" after the last). Walk returns the rows of every page
// in their order and the cursors of the pages after the first. An error,
// or a cursor given twice (a list that would go round forever), fails tb.
func Walk[T any](tb testing.TB, page func(cursor string) ([]T, string, error)) (rows []T, cursors []string) {
	tb.Helper()
	for cursor := ""; ; {
		got, next, err := page(cursor)
		if err != nil {
			tb.Fatalf("the page after %d pages: %v", len(cursors), err)
		}
		rows = append(rows, got...)
		if next == "" {
			return rows, cursors
		}
		if slices.Contains(cursors, next) {
			tb.Fatalf("the page after %d pages gave a cursor given before", len(cursors))
		}
		cursors = append(cursors, next)
		cursor = next
	}
}

// List is a list of rows T that a test checks with Check.
type List[T any] struct {
	Name string
	// Page reads a page, as Walk's page does; ID is a row's id.
	Page func(cursor string) ([]T, string, error)
	ID   func(T) string
	// Want is the ids a walk of the list gives, in order.
	Want []string
	// Read is the most rows the page in the middle of the list may read.
	Read float64
}

// Check walks l and fails tb unless the walk gives l.Want. On Postgres it
// then analyzes table, as autovacuum would have, reads the plan of the
// list's query of table for the page that starts in the middle of the
// list (modelstest.RowsReadBy), and fails tb if that page reads more than
// l.Read rows.
func Check[T any](tb testing.TB, db *gorm.DB, table string, l List[T]) {
	tb.Helper()
	rows, cursors := Walk(tb, l.Page)
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = l.ID(r)
	}
	if diff := cmp.Diff(l.Want, got); diff != "" {
		tb.Errorf("walking %s, each once, in order (-want +got):\n%s", l.Name, diff)
	}
	if !models.IsPostgres(db) {
		return // the plans are Postgres's
	}
	if len(cursors) == 0 {
		tb.Fatalf("%s is one page: it has no middle to read", l.Name)
	}
	if err := db.Exec("ANALYZE " + table).Error; err != nil {
		tb.Fatal(err)
	}
	var limit int
	read := modelstest.RowsReadBy(tb, db, `FROM "`+table+`"`, func() error {
		page, _, err := l.Page(cursors[len(cursors)/2])
		limit = len(page)
		return err
	})
	if read > l.Read {
		tb.Errorf("a page of %d in the middle of %s read %v rows; want at most %v", limit, l.Name, read, l.Read)
	}
}
