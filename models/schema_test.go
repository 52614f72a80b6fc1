package models_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// modelsSchema is the schema the models expect: AutoMigrate of every model
// on an empty database, plus what no struct tag can say (the partial and
// trigram indexes of the listings, the triggers of their counts), made by
// the same SQL as the migrations.
func modelsSchema(tb testing.TB) dbSchema {
	tb.Helper()
	db, _ := modelstest.NewEmptyDB(tb)
	must(tb, db.AutoMigrate(models.All()...))
	must(tb, models.ApplySQLOnlySchema(db))
	return readSchema(tb, db)
}

// migratedDB returns an empty database migrated by models.Migrate.
func migratedDB(tb testing.TB) *gorm.DB {
	tb.Helper()
	db, _ := modelstest.NewEmptyDB(tb)
	must(tb, models.Migrate(context.Background(), db))
	return db
}

// TestMigrationsBuildTheModelsSchema fails when a model changed without a
// migration step that makes the change.
func TestMigrationsBuildTheModelsSchema(t *testing.T) {
	t.Parallel()
	want := modelsSchema(t)
	got := readSchema(t, migratedDB(t))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the migrations do not build the schema the models expect: add a step (-models +migrations):\n%s", diff)
	}
	if len(want.Tables) < len(models.All()) {
		t.Fatalf("read %d tables for %d models: the schema reader misses some", len(want.Tables), len(models.All()))
	}
}

func TestMigrateTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	db := migratedDB(t)
	once := readSchema(t, db)
	must(t, models.Migrate(context.Background(), db))
	if diff := cmp.Diff(once, readSchema(t, db)); diff != "" {
		t.Errorf("a second Migrate changed the schema (-once +twice):\n%s", diff)
	}
}

// TestMigrateFromEveryStep migrates in two runs, as a database migrated by
// an older binary is: up to each step, then the rest.
func TestMigrateFromEveryStep(t *testing.T) {
	t.Parallel()
	want := modelsSchema(t)
	for v := 1; v < models.LastVersion; v++ {
		t.Run(fmt.Sprint("from step ", v), func(t *testing.T) {
			db, _ := modelstest.NewEmptyDB(t)
			must(t, models.MigrateTo(context.Background(), db, v))
			must(t, models.Migrate(context.Background(), db))
			if diff := cmp.Diff(want, readSchema(t, db)); diff != "" {
				t.Errorf("(-models +migrated in two runs):\n%s", diff)
			}
		})
	}
}

// TestMigrateDatabaseOfUnfrozenSteps migrates a database made by steps 1
// to 11 as binaries before step 12 ran them: each one auto-migrating the
// models of its day, which already had what step 12 adds.
func TestMigrateDatabaseOfUnfrozenSteps(t *testing.T) {
	t.Parallel()
	want := modelsSchema(t)
	db, _ := modelstest.NewEmptyDB(t)
	must(t, db.AutoMigrate(models.All()...))
	must(t, models.ApplySQLOnlySchema(db))
	for v := 1; v <= 11; v++ {
		must(t, db.Create(&models.SchemaMigration{Version: v, Name: "before step 12"}).Error)
	}
	must(t, models.Migrate(context.Background(), db))
	if diff := cmp.Diff(want, readSchema(t, db)); diff != "" {
		t.Errorf("(-models +migrated):\n%s", diff)
	}
	var applied []int
	must(t, db.Model(&models.SchemaMigration{}).Order("version").Pluck("version", &applied).Error)
	if applied[len(applied)-1] != models.LastVersion {
		t.Errorf("applied %v, want up to step %d", applied, models.LastVersion)
	}
}

// TestMigrationsKeepRows fills tables that later steps change (rebuilt on
// SQLite: listings by step 8, outbox_entries and bulk_items by step 12) and
// reads the rows back.
func TestMigrationsKeepRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := modelstest.NewEmptyDB(t)
	must(t, models.MigrateTo(ctx, db, 7))
	must(t, db.Exec(`INSERT INTO listings (id, domain, tld, bin_cents, currency, approved, marketplace_visible, created_at)
		VALUES ('l1', 'kept.com', 'com', 1250, 'USD', true, true, CURRENT_TIMESTAMP),
		       ('l2', 'unpriced.com', 'com', NULL, 'USD', true, true, CURRENT_TIMESTAMP)`).Error)
	must(t, models.MigrateTo(ctx, db, 11))
	const outboxID = "6f1c1a52-9d7e-4d8e-9a4b-3c2f1e0d9b8a"
	long := strings.Repeat("ns1.example.com → ns2.example.com; ", 20)
	must(t, db.Exec(`INSERT INTO outbox_entries (id, task_type, payload, queue, created_at, attempts)
		VALUES (?, 'canary:run', ?, 'maintenance', CURRENT_TIMESTAMP, 2)`, outboxID, []byte(`{}`)).Error)
	must(t, db.Exec(`INSERT INTO bulk_items (id, bulk_op_id, seq, domain, state, change, attempts)
		VALUES ('op1-0', 'op1', 0, 'kept.com', 'done', ?, 1)`, long).Error)
	must(t, models.Migrate(ctx, db))

	var listings []models.Listing
	must(t, db.Order("id").Find(&listings).Error)
	if len(listings) != 2 || listings[0].SortPriceAsc != 1250 || listings[0].SortPriceDesc != 1250 ||
		listings[1].SortPriceAsc != models.NoPriceAsc || listings[1].SortPriceDesc != models.NoPriceDesc {
		t.Errorf("listings after the migrations = %+v, want kept.com with sort keys 1250 and unpriced.com last both ways", listings)
	}
	var entry models.OutboxEntry
	must(t, db.First(&entry, "id = ?", outboxID).Error)
	if entry.TaskType != "canary:run" || entry.Attempts != 2 || string(entry.Payload) != `{}` {
		t.Errorf("outbox entry after the migrations = %+v", entry)
	}
	var item models.BulkItem
	must(t, db.First(&item, "id = ?", "op1-0").Error)
	if item.Change != long || item.BulkOpID != "op1" {
		t.Errorf("bulk item after the migrations = %+v, want its change kept", item)
	}
	if counted, err := models.CountPublicListings(db, "com"); err != nil || counted != 2 {
		t.Errorf("CountPublicListings(com) = %d, %v; want 2", counted, err)
	}
	bigger := strings.Repeat("x", 5000) // more than the 1000 of step 11
	must(t, db.Model(&item).Update("change", bigger).Error)
	must(t, db.First(&item, "id = ?", "op1-0").Error)
	if item.Change != bigger {
		t.Errorf("a change of %d bytes came back as %d", len(bigger), len(item.Change))
	}
}

// TestAllListsEveryModel reads the package's source for exported struct
// types with gorm tags: each must be in models.All, or the schema tests
// would not see its table.
func TestAllListsEveryModel(t *testing.T) {
	var listed []string
	for _, m := range models.All() {
		listed = append(listed, strings.TrimPrefix(fmt.Sprintf("%T", m), "*models."))
	}
	var missing []string
	for _, name := range taggedStructs(t, ".") {
		if !slices.Contains(listed, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("models.All lacks %v", missing)
	}
}

// taggedStructs returns the exported struct types declared in the Go files
// of dir (tests left out) that have a field with a gorm tag.
func taggedStructs(tb testing.TB, dir string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	must(tb, err)
	var names []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		must(tb, err)
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok || !spec.Name.IsExported() {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, f := range st.Fields.List {
				if f.Tag == nil {
					continue
				}
				tag, err := strconv.Unquote(f.Tag.Value)
				if _, ok := reflect.StructTag(tag).Lookup("gorm"); err == nil && ok {
					names = append(names, spec.Name.Name)
					break
				}
			}
			return true
		})
	}
	if len(names) == 0 {
		tb.Fatalf("no struct with gorm tags in %s", dir)
	}
	return names
}

// TestStep25DeliversPushedOrders: an order whose push the registry
// confirmed, left TRANSFER_IN_PROGRESS by the code before step 25, becomes
// TRANSFER_COMPLETED as of the confirmation, with a step; one whose push
// failed, and one with no push, stay where they are.
func TestStep25DeliversPushedOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := modelstest.NewEmptyDB(t)
	must(t, models.MigrateTo(ctx, db, 24))
	confirmed := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	for _, id := range []string{"ord_pushed", "ord_failed", "ord_waiting"} {
		must(t, db.Exec(`INSERT INTO orders (public_id, partner_id, environment, listing_id, domain, status, review, sale_price_cents,
			currency, payment_model, buyer_email, buyer_name, buyer_country, external_payment_ref, created_at, updated_at)
			VALUES (?, 'prt_a', 'live', 'l1', ?, 'TRANSFER_IN_PROGRESS', 'none', 1000, 'USD', 'hosted', 'b@example.com', 'B', 'NL', 'ch', ?, ?)`,
			id, id+".com", confirmed, confirmed).Error)
	}
	must(t, db.Exec(`INSERT INTO order_steps (order_id, at, actor, status, event, note, push_id) VALUES
		('ord_pushed', ?, 'registry', 'TRANSFER_IN_PROGRESS', 'transfer.completed', 'push 1: pushed', 1),
		('ord_failed', ?, 'registry', 'TRANSFER_IN_PROGRESS', 'transfer.failed', 'push 2: refused', 2)`, confirmed, confirmed).Error)
	must(t, models.Migrate(ctx, db))

	var orders []models.Order
	must(t, db.Order("public_id").Find(&orders).Error)
	got := map[string]string{}
	for _, o := range orders {
		got[o.PublicID] = o.Status
		if o.PublicID == "ord_pushed" && (o.TransferCompletedAt == nil || !o.TransferCompletedAt.Equal(confirmed)) {
			t.Errorf("ord_pushed transfer_completed_at = %v, want %v", o.TransferCompletedAt, confirmed)
		}
	}
	want := map[string]string{"ord_pushed": "TRANSFER_COMPLETED", "ord_failed": "TRANSFER_IN_PROGRESS", "ord_waiting": "TRANSFER_IN_PROGRESS"}
	if !maps.Equal(got, want) {
		t.Errorf("statuses after step 25 = %v, want %v", got, want)
	}
	var steps []models.OrderStep
	must(t, db.Where("status = 'TRANSFER_COMPLETED'").Find(&steps).Error)
	if len(steps) != 1 || steps[0].OrderID != "ord_pushed" || steps[0].Actor != "registry" {
		t.Errorf("steps written by step 25 = %+v, want one of ord_pushed by the registry", steps)
	}
}

// TestStep26RecordsPaidSessions: the charge of a session paid before step
// 26 becomes a payment of its order, refunded as far as its card refunds
// were sent; a session not paid makes none.
func TestStep26RecordsPaidSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := modelstest.NewEmptyDB(t)
	must(t, models.MigrateTo(ctx, db, 25))
	at := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	for _, id := range []string{"ord_whole", "ord_part"} {
		must(t, db.Exec(`INSERT INTO orders (public_id, partner_id, environment, listing_id, domain, status, review, sale_price_cents,
			currency, payment_model, buyer_email, buyer_name, buyer_country, external_payment_ref, refunded_cents, created_at, updated_at)
			VALUES (?, 'prt_a', 'live', 'l1', ?, 'PAID', 'none', 10000, 'USD', 'hosted', 'b@example.com', 'B', 'NL', ?, 4000, ?, ?)`,
			id, id+".com", "ch_"+id, at, at).Error)
	}
	must(t, db.Exec(`INSERT INTO checkout_sessions (id, partner_id, environment, listing_id, domain, return_url, cancel_url, buyer_email,
			expires_at, declines, order_id, charge_id, card_last4, paid_at, created_at) VALUES
		('cs_whole', 'prt_a', 'live', 'l1', 'ord_whole.com', 'https://r', 'https://c', '', ?, 2, 'ord_whole', 'ch_ord_whole', '4242', ?, ?),
		('cs_part', 'prt_a', 'live', 'l1', 'ord_part.com', 'https://r', 'https://c', '', ?, 0, 'ord_part', 'ch_ord_part', '4242', ?, ?),
		('cs_open', 'prt_a', 'live', 'l1', 'open.com', 'https://r', 'https://c', '', ?, 0, NULL, '', '', NULL, ?)`,
		at, at, at, at, at, at, at, at).Error)
	must(t, db.Exec(`INSERT INTO refunds (id, order_id, amount_cents, currency, reason, actor, card_status, created_at) VALUES
		('rfd_1', 'ord_whole', 4000, 'USD', 'r', 'partner', 'sent', ?), ('rfd_2', 'ord_part', 4000, 'USD', 'r', 'partner', 'pending', ?),
		('rfd_3', 'ord_whole', 6000, 'USD', 'r', 'ops', 'sent', ?)`, at, at, at).Error)
	must(t, models.Migrate(ctx, db))

	var got []models.Payment
	must(t, db.Order("id").Find(&got).Error)
	type row struct {
		ID, Key, Status, Order, Charge string
		Refunded                       int64
	}
	var rows []row
	for _, p := range got {
		rows = append(rows, row{p.ID, p.IdempotencyKey, p.Status, *p.OrderID, *p.ChargeID, p.RefundedCents})
		if p.AmountCents != 10000 || !p.CreatedAt.Equal(at) {
			t.Errorf("payment %s: %d cents at %v", p.ID, p.AmountCents, p.CreatedAt)
		}
	}
	want := []row{
		{"pay_cs_part", "cs_part-0", "succeeded", "ord_part", "ch_ord_part", 0},
		{"pay_cs_whole", "cs_whole-2", "refunded", "ord_whole", "ch_ord_whole", 10000},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("payments after step 26 (-want +got):\n%s", diff)
	}
}

// Step 30 keeps showing the brokerage steps that said nothing of a
// negotiation and makes the offers and reasons recorded before it internal.
func TestMigrationOfBrokerageStepsSharesWhatWasHarmless(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := modelstest.NewEmptyDB(t)
	must(t, models.MigrateTo(ctx, db, 29))
	must(t, db.Exec(`INSERT INTO brokerage_steps (case_id, at, actor, status, event, amount_cents, note) VALUES
		('bc_1', CURRENT_TIMESTAMP, 'partner', 'open', '', NULL, 'opened by the partner, tier managed'),
		('bc_1', CURRENT_TIMESTAMP, 'ops', 'contacting_owner', '', NULL, 'contact-owner'),
		('bc_1', CURRENT_TIMESTAMP, 'ops', 'negotiating', '', 900000, 'record-offer: the owner''s floor'),
		('bc_1', CURRENT_TIMESTAMP, 'ops', 'closed_deal', 'brokerage.case_completed', 950000, 'close-deal'),
		('bc_2', CURRENT_TIMESTAMP, 'ops', 'closed_no_deal', NULL, NULL, 'close-no-deal: the buyer''s ceiling')`).Error)
	must(t, models.Migrate(ctx, db))
	var steps []models.BrokerageStep
	must(t, db.Order("id").Find(&steps).Error)
	var shared []bool
	for _, st := range steps {
		shared = append(shared, st.Shared)
	}
	if want := []bool{true, true, false, true, false}; !slices.Equal(shared, want) {
		t.Errorf("shared after step 30 = %v, want %v", shared, want)
	}
}
