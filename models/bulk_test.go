package models_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Each bulk insert writes every column of its model: rows with every field
// set, written by it and read back by gorm, come back as they were, with
// the serial keys it set where its callers read them. A field added to a model and not to its bulk
// insert comes back empty here.
func TestBulkInsertsWriteEveryColumn(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)

	steps := filled[models.OrderStep](t, 3)
	for i := range steps {
		steps[i].ID = 0 // the column's
	}
	check(t, db, "order steps", models.InsertOrderSteps(db, steps), steps, nil, "id", cmpopts.IgnoreFields(models.OrderStep{}, "ID"))

	events := filled[models.Event](t, 3)
	for i := range events {
		events[i].Seq = 0
	}
	check(t, db, "events", models.InsertEvents(db, events), events, func(e models.Event) int64 { return e.Seq }, "seq")

	deliveries := filled[models.WebhookDelivery](t, 3)
	check(t, db, "deliveries", models.InsertWebhookDeliveries(db, deliveries), deliveries, nil, "id")

	lines := filled[models.LedgerEntry](t, 3)
	for i := range lines {
		lines[i].ID = 0
	}
	check(t, db, "ledger entries", models.InsertLedgerEntries(db, lines), lines, nil, "id", cmpopts.IgnoreFields(models.LedgerEntry{}, "ID"))

	entries := filled[models.OutboxEntry](t, 3)
	ptrs := make([]*models.OutboxEntry, len(entries))
	for i := range entries {
		entries[i].ID = uuid.NewString()
		ptrs[i] = &entries[i]
	}
	check(t, db, "outbox entries", models.InsertOutboxEntries(db, ptrs), entries, nil, "created_at")
}

// Rows written in one bulk insert take serial keys in their order, as one
// insert after another would.
func TestBulkInsertKeysRiseInTheRowsOrder(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	events := filled[models.Event](t, 50)
	for i := range events {
		events[i].Seq = 0
	}
	if err := models.InsertEvents(db, events); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Seq <= events[i-1].Seq {
			t.Fatalf("event %d has seq %d, after %d", i, events[i].Seq, events[i-1].Seq)
		}
	}
	var ids []string
	if err := db.Model(&models.Event{}).Order("seq").Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if ids[i] != e.ID {
			t.Fatalf("by seq, row %d is %s, want %s", i, ids[i], e.ID)
		}
	}
}

// check fails t unless err is nil and the rows of want read back from db
// in the order of column by are equal to want, compared with opts; keyOf
// is the serial key the insert must have set on each row (nil for a key
// the caller gave, or one the column gives and the insert does not read).
func check[T any](t *testing.T, db *gorm.DB, what string, err error, want []T, keyOf func(T) int64, by string, opts ...cmp.Option) {
	t.Helper()
	if err != nil {
		t.Fatalf("insert %s: %v", what, err)
	}
	if keyOf != nil {
		for i, w := range want {
			if keyOf(w) == 0 {
				t.Fatalf("%s: row %d has no key after the insert", what, i)
			}
		}
	}
	var got []T
	if err := db.Order(by).Find(&got).Error; err != nil {
		t.Fatalf("read %s back: %v", what, err)
	}
	sameTime := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	if diff := cmp.Diff(want, got, append(opts, sameTime)...); diff != "" {
		t.Errorf("%s read back differ from those written (-written +read):\n%s", what, diff)
	}
}

// filled returns n values of T with every field set to a value of its
// own, each row's strings, numbers and times above the row before's.
func filled[T any](t *testing.T, n int) []T {
	t.Helper()
	rows := make([]T, n)
	base := time.Date(2026, 11, 20, 8, 30, 0, 123456000, time.UTC) // microseconds, as databases keep
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for j := range v.NumField() {
			f := v.Field(j)
			if !fill(f, i, j, base) {
				t.Fatalf("filled: field %s of %T is a %s, which fill does not know", v.Type().Field(j).Name, rows[i], f.Type())
			}
		}
	}
	return rows
}

// fill sets f, field j of row i (i < 100), to a value no other field or
// row has, short enough for any column (three characters, as a currency
// code).
func fill(f reflect.Value, i, j int, base time.Time) bool {
	switch {
	case f.Type() == reflect.TypeFor[time.Time]():
		f.Set(reflect.ValueOf(base.Add(time.Duration(i*50+j) * time.Minute)))
	case f.Kind() == reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if !fill(p.Elem(), i, j, base) {
			return false
		}
		f.Set(p)
	case f.Kind() == reflect.String:
		f.SetString(fmt.Sprintf("%c%02d", 'a'+j, i))
	case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
		f.SetInt(int64(1000*(i+1) + j))
	case f.Kind() == reflect.Bool:
		f.SetBool(true)
	case f.Type() == reflect.TypeFor[[]byte]():
		f.SetBytes(fmt.Appendf(nil, `{"row":%d,"field":%d}`, i, j))
	default:
		return false
	}
	return true
}

// ScanOrders reads every column of an order into its own field: an order
// with every field set reads back equal to itself, and a NULL in a column
// whose field is not a pointer as gorm reads it.
func TestScanOrdersReadsEveryColumn(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	orders := filled[models.Order](t, 3)
	for i := range orders {
		orders[i].BuyerCountry = fmt.Sprintf("q%d", i) // a column of two characters
	}
	if err := db.Create(&orders).Error; err != nil {
		t.Fatal(err)
	}
	// The nullable columns that are not pointers in the model, NULL.
	if err := db.Exec("UPDATE orders SET return_url = NULL, cancel_url = NULL, updated_at = NULL WHERE public_id = ?", orders[2].PublicID).Error; err != nil {
		t.Fatal(err)
	}
	orders[2].ReturnURL, orders[2].CancelURL, orders[2].UpdatedAt = "", "", time.Time{}
	rows, err := db.Raw("SELECT " + models.OrderColumns + " FROM orders ORDER BY public_id").Rows()
	if err != nil {
		t.Fatal(err)
	}
	got, err := models.ScanOrders(rows)
	if err != nil {
		t.Fatal(err)
	}
	sameTime := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	if diff := cmp.Diff(orders, got, sameTime); diff != "" {
		t.Errorf("orders read by ScanOrders differ from those written (-written +read):\n%s", diff)
	}
}
