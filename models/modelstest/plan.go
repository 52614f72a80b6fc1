package modelstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"
)

// CaptureQueries records, from now on, the SELECTs db runs whose SQL
// contains part, each with its values written in as the logger writes
// them (times without their zone, which the tests' UTC sessions read as
// written), and returns what it has recorded so far: a test runs a
// service's call and then reads the plan of the query it made (Explain).
func CaptureQueries(tb testing.TB, db *gorm.DB, part string) func() []string {
	tb.Helper()
	statements := CaptureStatements(tb, db, part)
	return func() []string {
		var queries []string
		for _, st := range statements() {
			if q := db.Dialector.Explain(st.SQL, st.Vars...); strings.HasPrefix(q, "SELECT") {
				queries = append(queries, q)
			}
		}
		return queries
	}
}

// Statement is a statement as gorm sent it: its SQL, with the dialect's
// placeholders, and their values.
type Statement struct {
	SQL  string
	Vars []any
}

// CaptureStatements records, from now on and until the test ends, the
// statements db runs for rows (Find, Take, Scan, Row: an UPDATE …
// RETURNING read by Scan too) whose SQL contains part, and returns what
// it has recorded so far, each a copy the caller may change.
func CaptureStatements(tb testing.TB, db *gorm.DB, part string) func() []Statement {
	tb.Helper()
	var mu sync.Mutex
	var seen []Statement
	capture := func(tx *gorm.DB) {
		if sql := tx.Statement.SQL.String(); strings.Contains(sql, part) {
			mu.Lock()
			seen = append(seen, Statement{SQL: sql, Vars: slices.Clone(tx.Statement.Vars)})
			mu.Unlock()
		}
	}
	// gorm keeps one callback of a name: each capture has its own.
	name := fmt.Sprintf("modelstest:capture:%d", serial.Add(1))
	// Find runs the query callbacks; Scan, Row and Rows the row ones.
	if err := db.Callback().Query().After("gorm:query").Register(name, capture); err != nil {
		tb.Fatal(err)
	}
	if err := db.Callback().Row().After("gorm:row").Register(name, capture); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Callback().Query().Remove(name)
		db.Callback().Row().Remove(name)
	})
	return func() []Statement {
		mu.Lock()
		defer mu.Unlock()
		out := make([]Statement, len(seen))
		for i, st := range seen {
			out[i] = Statement{SQL: st.SQL, Vars: slices.Clone(st.Vars)}
		}
		return out
	}
}

// serial numbers the callbacks and prepared statements of this package,
// whose names must not clash on one database or connection.
var serial atomic.Int64

// ExplainGeneric is Explain of st as Postgres runs it from a plan made
// once for any values of its parameters, as it may for a statement a
// connection has prepared and run a few times: st is prepared and run
// under plan_cache_mode force_generic_plan, in a transaction rolled back
// after, so that a write changes nothing. A plan that needs a value
// written into the SQL (to use a partial index, say) shows it here.
func ExplainGeneric(tb testing.TB, db *gorm.DB, st Statement) (PlanNode, string) {
	tb.Helper()
	var root PlanNode
	var plan string
	name := fmt.Sprintf("modelstest_generic_%d", serial.Add(1))
	errRollback := errors.New("rolled back")
	err := db.Connection(func(conn *gorm.DB) error {
		// A prepared statement outlives its transaction: drop it, on the
		// connection it was made on, however the explain ends.
		defer conn.Exec("DEALLOCATE " + name)
		return conn.Transaction(func(tx *gorm.DB) error {
			for _, q := range []string{"SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE " + name + " AS " + st.SQL} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			execute := "EXECUTE " + name
			if len(st.Vars) > 0 { // EXECUTE takes no empty list
				params := make([]string, len(st.Vars))
				for i := range st.Vars {
					params[i] = fmt.Sprintf("$%d", i+1)
				}
				execute += "(" + strings.Join(params, ", ") + ")"
			}
			root, plan = Explain(tb, tx, tx.Dialector.Explain(execute, st.Vars...))
			return errRollback
		})
	})
	if !errors.Is(err, errRollback) {
		tb.Fatalf("explain %s generically: %v", st.SQL, err)
	}
	return root, plan
}

// PlanNode is a node of a plan as EXPLAIN (ANALYZE, FORMAT JSON) prints
// it on Postgres.
type PlanNode struct {
	Type            string  `json:"Node Type"`
	Index           string  `json:"Index Name"`
	Relation        string  `json:"Relation Name"`
	RemovedByFilter float64 `json:"Rows Removed by Filter"`
	ActualRows      float64 `json:"Actual Rows"`
	// Loops is how many times the node ran; its rows are per loop.
	Loops float64    `json:"Actual Loops"`
	Plans []PlanNode `json:"Plans"`
}

// Explain runs query q under EXPLAIN (ANALYZE, FORMAT JSON) and returns
// the root of its plan, and the plan as Postgres printed it.
func Explain(tb testing.TB, db *gorm.DB, q string) (PlanNode, string) {
	tb.Helper()
	var out string
	if err := db.Raw("EXPLAIN (ANALYZE, FORMAT JSON) " + q).Row().Scan(&out); err != nil {
		tb.Fatalf("explain %s: %v", q, err)
	}
	var plans []struct {
		Plan PlanNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		tb.Fatalf("the plan of %s: %v\n%s", q, err, out)
	}
	return plans[0].Plan, out
}

// Walk calls fn for n and each node under it.
func (n PlanNode) Walk(fn func(PlanNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.Walk(fn)
	}
}

// ReadsByIndex fails tb unless the plan of q reads its rows in the order
// of index alone: no sort, no row read and then filtered out, and every
// index scan on index.
func ReadsByIndex(tb testing.TB, db *gorm.DB, q, index string) {
	tb.Helper()
	root, plan := Explain(tb, db, q)
	root.Walk(func(n PlanNode) {
		scan := strings.HasPrefix(n.Type, "Index") || strings.HasSuffix(n.Type, "Scan")
		if n.Type == "Sort" || n.RemovedByFilter > 0 || (scan && n.Index != index) {
			tb.Errorf("a node of the plan is %s on %q, %v rows filtered out; want a scan of %s alone, filtering out none\nquery: %s\n%s",
				n.Type, n.Index, n.RemovedByFilter, index, q, plan)
		}
	})
}

// RowsReadBy runs run, which must make one SELECT whose SQL contains
// part (a page of a list, say), and returns how many rows the scans of
// that query's plan read (PlanNode.RowsRead).
func RowsReadBy(tb testing.TB, db *gorm.DB, part string, run func() error) float64 {
	tb.Helper()
	queries := CaptureQueries(tb, db, part)
	if err := run(); err != nil || len(queries()) != 1 {
		tb.Fatalf("run: %v, by %q; want one query of %s", err, queries(), part)
	}
	root, _ := Explain(tb, db, queries()[0])
	return root.RowsRead()
}

// RowsRead is how many rows the scans of the plan's tables under n read,
// over all their loops: those they passed on and those their filters
// threw away, and the entries a bitmap scan's indexes gave it (a bitmap
// of two indexes ANDed reads both ranges whole, however few rows match).
// (Postgres prints a loop's rows as a rounded average, so a scan that
// finds a row in some loops only counts about right.)
func (n PlanNode) RowsRead() float64 {
	read := 0.0
	n.Walk(func(n PlanNode) {
		if n.Relation != "" || n.Type == "Bitmap Index Scan" {
			read += (n.ActualRows + n.RemovedByFilter) * max(n.Loops, 1)
		}
	})
	return read
}
