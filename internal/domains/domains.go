// Package domains is a signed-in person's own domains (SPEC §3): their
// list, filtered and paged; bulk operations over them, checked whole
// before anything changes, then queued (a task per op, its items in the
// database), applied at once (auto-renew) or put in the cart (renew,
// restore); a bulk op's status; and the cart.
package domains

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Prefixes of the opaque ids of bulk ops and cart items.
const (
	BulkOpPrefix = "bop_"
	CartPrefix   = "cart_"
)

// Page sizes and the deepest offset of the domain list; a bulk op's
// status lists at most MaxItems items at once.
const (
	DefaultLimit = 24
	MaxLimit     = 200
	MaxOffset    = 1_000_000
	MaxItems     = 200
)

// CartPath is where a filled cart is reviewed before payment.
const CartPath = "/api/cart"

// Service is the domains of one database's people.
type Service struct {
	db        *gorm.DB
	outbox    *outbox.Outbox
	catalog   *catalog.Catalog
	secretKey []byte // seals the list's cursors
	log       *slog.Logger
	now       func() time.Time
}

// New returns the domains of db; bulk ops are queued through ob, checked
// against cat's TLD rules and prices.
func New(db *gorm.DB, ob *outbox.Outbox, cat *catalog.Catalog, secretKey []byte, log *slog.Logger, now func() time.Time) *Service {
	return &Service{db: db, outbox: ob, catalog: cat, secretKey: secretKey, log: log, now: now}
}

// Query filters and pages a person's domains.
type Query struct {
	Q, TLD, Status string
	// Folder is nil for any folder, "" for none.
	Folder         *string
	ExpiringBefore *time.Time
	// Limit is the page's size (DefaultLimit for 0); the page starts at
	// Cursor, else at Offset.
	Limit, Offset int
	Cursor        string
}

// Page is a page of domains and its paging block.
type Page struct {
	Domains    []models.Domain
	Limit      int
	Offset     int
	Total      int64
	HasMore    bool
	NextCursor *string
}

// check normalises q, a validation error naming the first field that is
// wrong.
func (q *Query) check() error {
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	switch {
	case q.Limit < 1 || q.Limit > MaxLimit:
		return fault.Invalid("limit", "must be an integer from 1 to %d", MaxLimit)
	case q.Offset < 0 || q.Offset > MaxOffset:
		return fault.Invalid("offset", "must be an integer from 0 to %d (walk further with next_cursor)", MaxOffset)
	}
	q.Q = strings.ToLower(strings.TrimSpace(q.Q))
	if len(q.Q) > 253 {
		return fault.Invalid("q", "must be at most 253 characters")
	}
	if q.TLD != "" {
		tld, err := domainname.ParseTLD(q.TLD)
		if err != nil {
			return fault.Invalid("tld", "is not a TLD: %v", err)
		}
		q.TLD = tld
	}
	if q.Status != "" && !slices.Contains(models.DomainStatuses, q.Status) {
		return fault.Invalid("status", "must be one of %s", strings.Join(models.DomainStatuses, ", "))
	}
	return nil
}

// fingerprint identifies the person and filters a cursor is bound to.
func (q Query) fingerprint(userID string) string {
	exp, folder := "-", "-"
	if q.ExpiringBefore != nil {
		exp = q.ExpiringBefore.UTC().Format(time.RFC3339)
	}
	if q.Folder != nil {
		folder = "=" + *q.Folder
	}
	return pagecursor.Fingerprint("domains-v1", userID, q.Q, q.TLD, folder, q.Status, exp)
}

// List returns the page of userID's domains q picks, by name: walk with
// NextCursor or with Offset.
func (s *Service) List(ctx context.Context, userID string, q Query) (Page, error) {
	if err := q.check(); err != nil {
		return Page{}, err
	}
	filtered := func() *gorm.DB {
		db := models.Equal(s.db.WithContext(ctx).Model(&models.Domain{}).Where("user_id = ?", userID), "tld", q.TLD, "status", q.Status)
		if q.Q != "" {
			db = db.Where(`name LIKE ? ESCAPE '\'`, models.LikeContains(q.Q))
		}
		if q.Folder != nil {
			db = db.Where("folder = ?", *q.Folder)
		}
		if q.ExpiringBefore != nil {
			db = db.Where("expires_at < ?", q.ExpiringBefore.UTC())
		}
		return db
	}
	fp := q.fingerprint(userID)
	page := Page{Limit: q.Limit}
	rows := filtered().Order("name").Limit(q.Limit + 1)
	if q.Cursor != "" {
		cur, err := pagecursor.Decode(s.secretKey, q.Cursor, fp)
		if err != nil {
			return page, err
		}
		rows = rows.Where("name > ?", cur.ID)
	} else {
		page.Offset = q.Offset
		rows = rows.Offset(q.Offset)
	}
	if err := rows.Find(&page.Domains).Error; err != nil {
		return page, fmt.Errorf("list domains: %w", err)
	}
	if err := filtered().Count(&page.Total).Error; err != nil {
		return page, fmt.Errorf("count domains: %w", err)
	}
	if page.HasMore = len(page.Domains) > q.Limit; page.HasMore {
		page.Domains = page.Domains[:q.Limit]
		next := pagecursor.Encode(s.secretKey, pagecursor.Cursor{Query: fp, ID: page.Domains[len(page.Domains)-1].Name})
		page.NextCursor = &next
	}
	return page, nil
}

// BulkResult is what a bulk operation did, by its kind (bulkop.Kinds):
// Queued (an op whose task applies it), Local (auto-renew, applied at
// once) or Cart (renew and restore, put in the cart).
type BulkResult struct {
	Kind int
	// Op is the queued op.
	Op models.BulkOp
	// Updated says whether the local change was made (not in a dry run,
	// nor when nothing changes); Count is how many domains it covered,
	// Changed how many did not have the setting before.
	Updated        bool
	Count, Changed int
	// CartItemIDs are the cart's items of the domains, TotalCents their
	// price; AddedToCart is false in a dry run.
	CartItemIDs []string
	TotalCents  int64
	AddedToCart bool
	DryRun      bool
}

// Bulk runs bulk operation op of userID over req's domains: the whole
// request is checked (the op known, its payload, every domain the
// person's: forbidden otherwise; the payload fit for every domain's TLD)
// before anything changes.
func (s *Service) Bulk(ctx context.Context, userID, op string, req bulkop.Request) (BulkResult, error) {
	kind, ok := bulkop.Kinds[op]
	if !ok {
		return BulkResult{}, fault.New(fault.Validation, "unknown bulk operation %q; one of lock, unlock, setNameservers, setFolder, setContacts, setAutoRenew, renew, restore", op)
	}
	plan, err := bulkop.Parse(op, req)
	if err != nil {
		return BulkResult{}, err
	}
	var owned []models.Domain
	if err := s.db.WithContext(ctx).Where("user_id = ? AND name IN ?", userID, plan.Domains).Find(&owned).Error; err != nil {
		return BulkResult{}, fmt.Errorf("load domains: %w", err)
	}
	byName := make(map[string]models.Domain, len(owned))
	for _, d := range owned {
		byName[d.Name] = d
	}
	var notOwned []string
	for _, name := range plan.Domains {
		if _, ok := byName[name]; !ok {
			notOwned = append(notOwned, name)
		}
	}
	if len(notOwned) > 0 {
		return BulkResult{}, fault.New(fault.Forbidden, "you do not own %d of these domains: %s; nothing was changed", len(notOwned), bulkop.Names(notOwned))
	}
	snap, err := s.catalog.Get(ctx)
	if err != nil {
		return BulkResult{}, fmt.Errorf("load TLD rules: %w", err)
	}
	if err := plan.Check(byName, snap.TLDs); err != nil {
		return BulkResult{}, err
	}
	res := BulkResult{Kind: kind, DryRun: plan.DryRun}
	switch kind {
	case bulkop.Local:
		err = s.setAutoRenew(ctx, userID, plan, byName, &res)
	case bulkop.Cart:
		err = s.addToCart(ctx, userID, plan, byName, snap, &res)
	default:
		res.Op, err = s.queue(ctx, userID, plan, byName)
	}
	return res, err
}

// queue writes the op, its items and its task in one transaction. A dry
// run records what each item would change and is done at once.
func (s *Service) queue(ctx context.Context, userID string, plan bulkop.Plan, domains map[string]models.Domain) (models.BulkOp, error) {
	now := s.now().UTC()
	op := models.BulkOp{
		ID: secret.NewID(BulkOpPrefix), UserID: userID, Op: plan.Op, Update: plan.Update, Folder: plan.Folder,
		SkipOnError: plan.SkipOnError, DryRun: plan.DryRun, Total: len(plan.Domains), State: models.BulkQueued, CreatedAt: now,
	}
	items := make([]models.BulkItem, len(plan.Domains))
	for i, name := range plan.Domains {
		items[i] = models.BulkItem{ID: fmt.Sprintf("%s-%04d", op.ID, i), BulkOpID: op.ID, Seq: i, Domain: name, State: models.ItemPending, Change: plan.Change(domains[name])}
		if plan.DryRun {
			items[i].State, items[i].FinishedAt = models.ItemDone, &now
		}
	}
	if plan.DryRun {
		op.State, op.StartedAt, op.FinishedAt = models.BulkDone, &now, &now
	}
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		if !plan.DryRun {
			if err := refuseBusy(tx, userID, plan); err != nil {
				return err
			}
		}
		if err := tx.Create(&op).Error; err != nil {
			return err
		}
		if err := tx.CreateInBatches(items, 500).Error; err != nil {
			return err
		}
		if !plan.DryRun {
			tx.Add(tasks.BulkRunPayload{BulkOpID: op.ID})
		}
		return nil
	})
	if err != nil {
		return op, fmt.Errorf("queue bulk %s: %w", plan.Op, err)
	}
	s.log.InfoContext(ctx, "bulk op queued", "bulk_op", op.ID, "op", op.Op, "total", op.Total, "dry_run", op.DryRun)
	return op, nil
}

// refuseBusy refuses, with a conflict, an op on domains that an earlier op
// of the user changing the same thing (bulkop.Rivals) has still to apply:
// the two ops' items would reach the registry in no set order, and an
// earlier change sent again after its worker died could undo the later
// one. The domains' rows are locked first, so that two such requests at
// once are taken in turn.
func refuseBusy(tx *outbox.Tx, userID string, plan bulkop.Plan) error {
	// In name order, so that two requests over the same domains cannot
	// deadlock: the later one waits at the first row they share.
	err := models.ForUpdate(tx.DB).Select("id").Where("user_id = ? AND name IN ?", userID, plan.Domains).
		Order("name").Find(&[]models.Domain{}).Error
	if err != nil {
		return fmt.Errorf("lock %d domains: %w", len(plan.Domains), err)
	}
	active := tx.Model(&models.BulkOp{}).Select("id").
		Where("user_id = ? AND state IN ? AND op IN ?", userID, []string{models.BulkQueued, models.BulkRunning}, bulkop.Rivals(plan.Op))
	var busy []models.BulkItem
	err = tx.Select("domain", "bulk_op_id").Where("bulk_op_id IN (?) AND state = ? AND domain IN ?", active, models.ItemPending, plan.Domains).
		Order("domain").Find(&busy).Error
	if err != nil {
		return fmt.Errorf("find the domains' ops in progress: %w", err)
	}
	if len(busy) == 0 {
		return nil
	}
	domains, ops := make([]string, len(busy)), make([]string, len(busy))
	for i, it := range busy {
		domains[i], ops[i] = it.Domain, it.BulkOpID
	}
	slices.Sort(ops)
	e := fault.New(fault.Conflict, "%d of these domains are still being changed by your bulk operation %s: %s; wait until it ends (its statusPath says when), then send this again; nothing was changed",
		len(domains), strings.Join(slices.Compact(ops), ", "), bulkop.Names(domains))
	e.Err = fault.ErrRetryLater
	return e
}

// setAutoRenew applies setAutoRenew to the domains at once.
func (s *Service) setAutoRenew(ctx context.Context, userID string, plan bulkop.Plan, domains map[string]models.Domain, res *BulkResult) error {
	var changing []string
	for _, name := range plan.Domains {
		if domains[name].AutoRenew != plan.AutoRenew {
			changing = append(changing, name)
		}
	}
	res.Count, res.Changed = len(plan.Domains), len(changing)
	if plan.DryRun || len(changing) == 0 {
		return nil
	}
	upd := s.db.WithContext(ctx).Model(&models.Domain{}).
		Where("user_id = ? AND name IN ? AND auto_renew <> ?", userID, changing, plan.AutoRenew).
		Updates(map[string]any{"auto_renew": plan.AutoRenew, "updated_at": s.now().UTC()})
	if upd.Error != nil {
		return fmt.Errorf("set auto-renew: %w", upd.Error)
	}
	res.Updated, res.Changed = true, int(upd.RowsAffected)
	return nil
}

// addToCart puts renew and restore in the cart: one item per domain,
// priced from the synced TLD prices (a renewal costs its yearly price
// times the years; a restore the TLD's restore price). A domain already
// in the cart for the same operation keeps its item, repriced.
func (s *Service) addToCart(ctx context.Context, userID string, plan bulkop.Plan, domains map[string]models.Domain, snap *catalog.Snapshot, res *BulkResult) error {
	priceOp, years := registry.OpRenew, plan.Years
	if plan.Op == bulkop.Restore {
		priceOp, years = registry.OpRestore, 1
	}
	var unpriced []string
	items := make([]models.CartItem, 0, len(plan.Domains))
	now := s.now().UTC()
	for _, name := range plan.Domains {
		cents, ok := snap.Price(domains[name].TLD, priceOp)
		if !ok || cents == nil {
			unpriced = append(unpriced, name)
			continue
		}
		items = append(items, models.CartItem{ID: secret.NewID(CartPrefix), UserID: userID, Domain: name, Op: plan.Op, Years: years,
			PriceCents: *cents * int64(years), Currency: "USD", CreatedAt: now})
	}
	if len(unpriced) > 0 {
		return fault.New(fault.Validation, "no %s price for %s; nothing was added", priceOp, bulkop.Names(unpriced))
	}
	res.CartItemIDs = []string{}
	for _, it := range items {
		res.TotalCents += it.PriceCents
	}
	if plan.DryRun {
		return nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// One statement per item set: concurrent adds of the same domains
		// meet in the unique index and reprice rather than fail.
		upsert := clause.OnConflict{
			Columns:   []clause.Column{{Name: "user_id"}, {Name: "domain"}, {Name: "op"}},
			DoUpdates: clause.AssignmentColumns([]string{"years", "price_cents"}),
		}
		if err := tx.Clauses(upsert).CreateInBatches(items, 500).Error; err != nil {
			return err
		}
		var rows []models.CartItem
		if err := tx.Select("id", "domain").Where("user_id = ? AND op = ? AND domain IN ?", userID, plan.Op, plan.Domains).Find(&rows).Error; err != nil {
			return err
		}
		idOf := make(map[string]string, len(rows))
		for _, r := range rows {
			idOf[r.Domain] = r.ID
		}
		for _, it := range items {
			res.CartItemIDs = append(res.CartItemIDs, idOf[it.Domain])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add to cart: %w", err)
	}
	res.AddedToCart = true
	return nil
}

// ItemStates are the states of a bulk op's items.
var ItemStates = []string{models.ItemPending, models.ItemDone, models.ItemFailed, models.ItemSkipped}

// Status is a bulk op as its owner polls it: the op, counts of its
// items' outcomes, and a page of items.
type Status struct {
	Op     models.BulkOp
	Counts map[string]int
	Items  []models.BulkItem
	// Matching is how many items the page's state filter matches.
	Matching int
}

// BulkStatus returns userID's bulk op id with the counts of its items'
// states and, in request order, up to limit items from offset (of state
// itemState when set): not_found for another's op or an unknown id.
func (s *Service) BulkStatus(ctx context.Context, userID, id, itemState string, limit, offset int) (Status, error) {
	if !secret.IsID(id, BulkOpPrefix) {
		return Status{}, fault.New(fault.Validation, "%q is not a bulk operation id", id)
	}
	if itemState != "" && !slices.Contains(ItemStates, itemState) {
		return Status{}, fault.Invalid("status", "must be pending, done, failed or skipped")
	}
	limit = min(limit, MaxItems)
	db := s.db.WithContext(ctx)
	var st Status
	if err := models.Found(db.Take(&st.Op, "id = ? AND user_id = ?", id, userID).Error, "bulk operation "+id); err != nil {
		return st, err
	}
	var counts []struct {
		State string
		N     int
	}
	if err := db.Model(&models.BulkItem{}).Select("state, count(*) AS n").Where("bulk_op_id = ?", id).Group("state").Scan(&counts).Error; err != nil {
		return st, fmt.Errorf("count bulk items: %w", err)
	}
	st.Counts = map[string]int{}
	for _, state := range ItemStates {
		st.Counts[state] = 0
	}
	for _, n := range counts {
		st.Counts[n.State] = n.N
	}
	items := db.Where("bulk_op_id = ?", id)
	st.Matching = st.Op.Total
	if itemState != "" {
		items, st.Matching = items.Where("state = ?", itemState), st.Counts[itemState]
	}
	if err := items.Order("seq").Offset(offset).Limit(limit).Find(&st.Items).Error; err != nil {
		return st, fmt.Errorf("list bulk items: %w", err)
	}
	return st, nil
}

// Cart returns userID's cart items, oldest first.
func (s *Service) Cart(ctx context.Context, userID string) ([]models.CartItem, error) {
	var items []models.CartItem
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at, domain").Find(&items).Error; err != nil {
		return nil, fmt.Errorf("load cart: %w", err)
	}
	return items, nil
}

// RemoveFromCart deletes userID's cart item id: not_found for another's
// item or an unknown id.
func (s *Service) RemoveFromCart(ctx context.Context, userID, id string) error {
	if !secret.IsID(id, CartPrefix) {
		return fault.New(fault.Validation, "%q is not a cart item id", id)
	}
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Delete(&models.CartItem{})
	if res.Error != nil {
		return fmt.Errorf("delete cart item: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fault.New(fault.NotFound, "no cart item %s", id)
	}
	return nil
}
