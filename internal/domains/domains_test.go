package domains

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// portfolio is the service over a database with the sandbox registry's
// TLDs synced and two people's demo domains.
type portfolio struct {
	s          *Service
	db         *gorm.DB
	ada, grace []string // their domains' names, sorted
}

func newPortfolio(t *testing.T) *portfolio {
	t.Helper()
	ctx := context.Background()
	db := modelstest.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := sandbox.Seed(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := tldsync.Run(ctx, db, sandbox.New(db, 0), log); err != nil {
		t.Fatal(err)
	}
	ob := outbox.New(db, platformtest.NewRedis(t).Client, log)
	t.Cleanup(func() { ob.Close() })
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p := &portfolio{s: New(db, ob, catalog.New(db, time.Minute), []byte("test-secret-key-0123456789abcdef"), log, func() time.Time { return now }), db: db}
	if _, err := demo.Domains(ctx, db, "ada", 12, 7, now); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"grace-one.com", "grace-two.com"} {
		if err := db.Create(&models.Domain{ID: models.NewID(), Name: name, TLD: "com", UserID: "grace", Status: models.DomainActive,
			ExpiresAt: now.AddDate(1, 0, 0), CreatedAt: now}).Error; err != nil {
			t.Fatal(err)
		}
	}
	for user, names := range map[string]*[]string{"ada": &p.ada, "grace": &p.grace} {
		var ds []models.Domain
		db.Where("user_id = ?", user).Order("name").Find(&ds)
		for _, d := range ds {
			*names = append(*names, d.Name)
		}
	}
	return p
}

func names(ds []models.Domain) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func codeOf(err error) fault.Code {
	e, _ := fault.As(err)
	if e == nil {
		return ""
	}
	return e.Code
}

// A person's list is theirs only, by name, the same walked by cursor or
// by offset; a cursor is bound to its person and filters.
func TestListIsTheirsAndPages(t *testing.T) {
	t.Parallel()
	p := newPortfolio(t)
	ctx := context.Background()
	var byCursor []string
	q := Query{Limit: 5}
	for {
		page, err := p.s.List(ctx, "ada", q)
		if err != nil {
			t.Fatal(err)
		}
		byCursor = append(byCursor, names(page.Domains)...)
		if page.Total != int64(len(p.ada)) {
			t.Errorf("total %d, want %d", page.Total, len(p.ada))
		}
		if page.NextCursor == nil {
			break
		}
		q.Cursor = *page.NextCursor
	}
	if !slices.Equal(byCursor, p.ada) {
		t.Errorf("walked %v, want %v", byCursor, p.ada)
	}
	first, _ := p.s.List(ctx, "ada", Query{Limit: 5})
	if _, err := p.s.List(ctx, "grace", Query{Limit: 5, Cursor: *first.NextCursor}); codeOf(err) != fault.InvalidCursor {
		t.Errorf("another person's cursor: %v", err)
	}
	for _, bad := range []Query{{Limit: MaxLimit + 1}, {Offset: -1}, {TLD: "no tld"}, {Status: "lost"}} {
		if _, err := p.s.List(ctx, "ada", bad); codeOf(err) != fault.Validation {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// A bulk op over a name that is not the person's changes nothing; a lock
// is queued with its items and its task; a dry run records without a
// task; auto-renew is applied at once.
func TestBulk(t *testing.T) {
	t.Parallel()
	p := newPortfolio(t)
	ctx := context.Background()
	_, err := p.s.Bulk(ctx, "ada", bulkop.Lock, bulkop.Request{Domains: []string{p.ada[0], p.grace[0]}})
	if codeOf(err) != fault.Forbidden {
		t.Errorf("a bulk op over another's domain: %v", err)
	}
	if _, err := p.s.Bulk(ctx, "ada", "explode", bulkop.Request{Domains: p.ada[:1]}); codeOf(err) != fault.Validation {
		t.Errorf("an unknown op: %v", err)
	}
	var ops int64
	p.db.Model(&models.BulkOp{}).Count(&ops)
	if ops != 0 {
		t.Fatalf("%d ops after refusals", ops)
	}

	res, err := p.s.Bulk(ctx, "ada", bulkop.Lock, bulkop.Request{Domains: p.ada[:3]})
	if err != nil || res.Kind != bulkop.Queued || !secretID(res.Op.ID) || res.Op.Total != 3 {
		t.Fatalf("lock = %+v, %v", res, err)
	}
	st, err := p.s.BulkStatus(ctx, "ada", res.Op.ID, "", 10, 0)
	if err != nil || len(st.Items) != 3 || st.Counts[models.ItemPending] != 3 || st.Matching != 3 {
		t.Errorf("status = %+v, %v", st, err)
	}
	if _, err := p.s.BulkStatus(ctx, "grace", res.Op.ID, "", 10, 0); codeOf(err) != fault.NotFound {
		t.Errorf("another person's op: %v", err)
	}
	dryRun := bulkop.Request{Domains: p.ada[:2]}
	dryRun.Options.DryRun = true
	dry, err := p.s.Bulk(ctx, "ada", bulkop.Lock, dryRun)
	if err != nil || dry.Op.State != models.BulkDone {
		t.Errorf("dry run = %+v, %v", dry, err)
	}
	var queued int64
	p.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypeBulkRun).Count(&queued)
	if queued != 1 {
		t.Errorf("%d bulk:run tasks, want the lock's one (none for the dry run)", queued)
	}

	for _, v := range []string{"true", "false", "false"} {
		res, err := p.s.Bulk(ctx, "ada", bulkop.SetAutoRenew, bulkop.Request{Domains: p.ada[:4], Payload: []byte(`{"auto_renew":` + v + `}`)})
		if err != nil || res.Kind != bulkop.Local || res.Count != 4 {
			t.Fatalf("auto-renew %s = %+v, %v", v, res, err)
		}
	}
	var renewing int64
	p.db.Model(&models.Domain{}).Where("user_id = ? AND auto_renew", "ada").Where("name IN ?", p.ada[:4]).Count(&renewing)
	if renewing != 0 {
		t.Errorf("%d of the four renew after turning it off", renewing)
	}
}

// An op on domains that an earlier op changing the same thing has still
// to apply is refused, and writes nothing: their items would reach the
// registry in no set order. Other ops, dry runs, other domains and the
// same domains once the earlier op ended are taken; of requests sent at
// once over the same domains, one is.
func TestBulkRefusesDomainsAnEarlierOpIsChanging(t *testing.T) {
	t.Parallel()
	p := newPortfolio(t)
	ctx := context.Background()
	opsOf := func() (n int64) {
		p.db.Model(&models.BulkOp{}).Count(&n)
		return n
	}
	lock, err := p.s.Bulk(ctx, "ada", bulkop.Lock, bulkop.Request{Domains: p.ada[:3]})
	if err != nil {
		t.Fatal(err)
	}
	before := opsOf()
	_, err = p.s.Bulk(ctx, "ada", bulkop.Unlock, bulkop.Request{Domains: p.ada[2:5]})
	if e, _ := fault.As(err); e == nil || e.Code != fault.Conflict || !strings.Contains(e.Message, lock.Op.ID) ||
		!strings.Contains(e.Message, p.ada[2]) || strings.Contains(e.Message, p.ada[3]) || !errors.Is(err, fault.ErrRetryLater) {
		t.Errorf("unlock of a domain being locked: %v; want a conflict to retry later, naming the lock and that domain alone", err)
	}
	if n := opsOf(); n != before {
		t.Errorf("%d ops after the refusal, want %d", n, before)
	}

	dryRun := bulkop.Request{Domains: p.ada[:3]}
	dryRun.Options.DryRun = true
	for _, ok := range []struct {
		op  string
		req bulkop.Request
	}{
		{bulkop.SetFolder, bulkop.Request{Domains: p.ada[:3], Payload: []byte(`{"folder":"f"}`)}},
		{bulkop.Unlock, dryRun},
		{bulkop.Unlock, bulkop.Request{Domains: p.ada[3:5]}},
	} {
		if _, err := p.s.Bulk(ctx, "ada", ok.op, ok.req); err != nil {
			t.Errorf("%s of %v (dry run %v): %v; want it taken", ok.op, ok.req.Domains, ok.req.Options.DryRun, err)
		}
	}
	p.db.Model(&models.BulkItem{}).Where("bulk_op_id = ?", lock.Op.ID).Update("state", models.ItemDone)
	p.db.Model(&models.BulkOp{}).Where("id = ?", lock.Op.ID).Update("state", models.BulkDone)
	if _, err := p.s.Bulk(ctx, "ada", bulkop.Unlock, bulkop.Request{Domains: p.ada[:3]}); err != nil {
		t.Errorf("unlock once the lock ended: %v", err)
	}

	const senders = 6
	errs := make(chan error, senders)
	for range senders {
		go func() {
			_, err := p.s.Bulk(ctx, "ada", bulkop.Lock, bulkop.Request{Domains: p.ada[6:10]})
			errs <- err
		}()
	}
	var taken, refused int
	for range senders {
		switch err := <-errs; {
		case err == nil:
			taken++
		case codeOf(err) == fault.Conflict:
			refused++
		default:
			t.Errorf("a lock sent at once with others: %v", err)
		}
	}
	if taken != 1 || refused != senders-1 {
		t.Errorf("%d locks sent at once over the same domains: %d taken and %d refused, want 1 and %d", senders, taken, refused, senders-1)
	}
}

func secretID(id string) bool { return len(id) == len(BulkOpPrefix)+24 }

// Renewals go in the cart priced by the synced prices, once per domain
// however often they are added; an item is removed by its owner only.
func TestCart(t *testing.T) {
	t.Parallel()
	p := newPortfolio(t)
	ctx := context.Background()
	var first BulkResult
	for i := range 2 {
		res, err := p.s.Bulk(ctx, "ada", bulkop.Renew, bulkop.Request{Domains: p.ada[:2], Payload: []byte(`{"years":2}`)})
		if err != nil || res.Kind != bulkop.Cart || !res.AddedToCart || len(res.CartItemIDs) != 2 || res.TotalCents <= 0 {
			t.Fatalf("renew %d = %+v, %v", i, res, err)
		}
		if i == 0 {
			first = res
		} else if !slices.Equal(res.CartItemIDs, first.CartItemIDs) {
			t.Errorf("renewing again made items %v, want %v again", res.CartItemIDs, first.CartItemIDs)
		}
	}
	items, err := p.s.Cart(ctx, "ada")
	if err != nil || len(items) != 2 || items[0].Years != 2 {
		t.Fatalf("cart = %+v, %v", items, err)
	}
	if err := p.s.RemoveFromCart(ctx, "grace", items[0].ID); codeOf(err) != fault.NotFound {
		t.Errorf("another person removing an item: %v", err)
	}
	if err := p.s.RemoveFromCart(ctx, "ada", "cart_nope"); codeOf(err) != fault.Validation {
		t.Errorf("a malformed id: %v", err)
	}
	if err := p.s.RemoveFromCart(ctx, "ada", items[0].ID); err != nil {
		t.Fatal(err)
	}
	if left, _ := p.s.Cart(ctx, "ada"); len(left) != 1 {
		t.Errorf("after removing one: %+v", left)
	}
}

// A page of a person's domains is read in the order of the index of
// their names: with thousands of domains, and nine times as many of
// others' between them by name, a page by cursor sorts nothing and skips
// nothing.
func TestListPageReadsByTheIndex(t *testing.T) {
	t.Parallel()
	p := newPortfolio(t)
	if !models.IsPostgres(p.db) {
		t.Skip("reads Postgres's plan; the listing itself is TestListIsTheirsAndPages")
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var many []models.Domain
	for i := range 30_000 {
		user := "others"
		if i%10 == 0 {
			user = "many"
		}
		many = append(many, models.Domain{ID: models.NewID(), Name: fmt.Sprintf("n%05d.com", i), TLD: "com", UserID: user,
			Status: models.DomainActive, ExpiresAt: now.AddDate(1, 0, 0), CreatedAt: now})
	}
	if err := p.db.CreateInBatches(many, 2000).Error; err != nil {
		t.Fatal(err)
	}
	if err := p.db.Exec("ANALYZE domains").Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := p.s.List(ctx, "many", Query{Limit: MaxLimit})
	if err != nil || first.NextCursor == nil {
		t.Fatalf("first page: %v", err)
	}
	queries := modelstest.CaptureQueries(t, p.db, "ORDER BY name")
	page, err := p.s.List(ctx, "many", Query{Limit: 50, Cursor: *first.NextCursor})
	if err != nil || len(page.Domains) != 50 || len(queries()) != 1 {
		t.Fatalf("second page = %d domains, %v, by %q; want 50, by one query", len(page.Domains), err, queries())
	}
	modelstest.ReadsByIndex(t, p.db, queries()[0], "idx_domains_user_name")
}
