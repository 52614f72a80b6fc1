package api

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// bulkLimit keeps one address from flooding the bulk queue.
var bulkLimit = ratelimit.PerMinute("bulk", 30)

// domainView is one of the signed-in user's domains.
type domainView struct {
	Domain      string    `json:"domain"`
	Locked      bool      `json:"locked"`
	Nameservers []string  `json:"nameservers"`
	Folder      *string   `json:"folder"`
	AutoRenew   bool      `json:"auto_renew"`
	Status      string    `json:"status"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func newDomainView(d models.Domain) domainView {
	v := domainView{Domain: d.Name, Locked: d.Locked, Nameservers: d.Nameservers, AutoRenew: d.AutoRenew, Status: d.Status, ExpiresAt: d.ExpiresAt}
	if v.Nameservers == nil {
		v.Nameservers = []string{}
	}
	if d.Folder != "" {
		v.Folder = &d.Folder
	}
	return v
}

// domainsQuery is a parsed GET /api/domains.
type domainsQuery struct {
	limit, offset  int
	cursor         string
	q, tld, status string
	folder         *string // nil: any folder; "": no folder
	expiringBefore *time.Time
}

// fingerprint identifies the user and filters a cursor is bound to.
func (q domainsQuery) fingerprint(userID string) string {
	exp, folder := "-", "-"
	if q.expiringBefore != nil {
		exp = q.expiringBefore.Format(time.RFC3339)
	}
	if q.folder != nil {
		folder = "=" + *q.folder
	}
	return pagecursor.Fingerprint("domains-v1", userID, q.q, q.tld, folder, q.status, exp)
}

func parseDomainsQuery(c *gin.Context) (domainsQuery, error) {
	var q domainsQuery
	var err error
	if q.limit, q.offset, q.cursor, err = httpjson.ParsePaging(c); err != nil {
		return q, err
	}
	q.q = strings.ToLower(strings.TrimSpace(c.Query("q")))
	if len(q.q) > 253 {
		return q, fault.Invalid("q", "must be at most 253 characters")
	}
	if v := c.Query("tld"); v != "" {
		if q.tld, err = domainname.ParseTLD(v); err != nil {
			return q, fault.Invalid("tld", "is not a TLD: %v", err)
		}
	}
	if v, ok := c.GetQuery("folder"); ok {
		q.folder = &v
	}
	if q.status = c.Query("status"); q.status != "" && !slices.Contains(models.DomainStatuses, q.status) {
		return q, fault.Invalid("status", "must be one of %s", strings.Join(models.DomainStatuses, ", "))
	}
	if v := c.Query("expiring_before"); v != "" {
		t, err := parseDateTime(v)
		if err != nil {
			return q, fault.Invalid("expiring_before", "must be a date (2026-12-31) or an RFC 3339 time")
		}
		q.expiringBefore = &t
	}
	return q, nil
}

// parseDateTime reads an RFC 3339 time or a date (midnight UTC).
func parseDateTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	return time.Parse(time.DateOnly, v)
}

// listDomains answers GET /api/domains: the signed-in user's domains by
// name, filtered, a page at a time (offset or cursor, as the listings).
func (s *Server) listDomains(c *gin.Context) error {
	u, _ := currentUser(c)
	q, err := parseDomainsQuery(c)
	if err != nil {
		return err
	}
	filtered := func() *gorm.DB {
		db := s.db.WithContext(c.Request.Context()).Model(&models.Domain{}).Where("user_id = ?", u.ID)
		if q.q != "" {
			db = db.Where(`name LIKE ? ESCAPE '\'`, models.LikeContains(q.q))
		}
		if q.tld != "" {
			db = db.Where("tld = ?", q.tld)
		}
		if q.folder != nil {
			db = db.Where("folder = ?", *q.folder)
		}
		if q.status != "" {
			db = db.Where("status = ?", q.status)
		}
		if q.expiringBefore != nil {
			db = db.Where("expires_at < ?", *q.expiringBefore)
		}
		return db
	}
	fp := q.fingerprint(u.ID)
	page := httpjson.Page{Limit: q.limit}
	rows := filtered().Order("name").Limit(q.limit + 1)
	if q.cursor != "" {
		cur, err := pagecursor.Decode(s.cfg.SecretKey, q.cursor, fp)
		if err != nil {
			return err
		}
		rows = rows.Where("name > ?", cur.ID)
	} else {
		page.Offset = q.offset
		rows = rows.Offset(q.offset)
	}
	var domains []models.Domain
	if err := rows.Find(&domains).Error; err != nil {
		return fmt.Errorf("list domains: %w", err)
	}
	if err := filtered().Count(&page.Total).Error; err != nil {
		return fmt.Errorf("count domains: %w", err)
	}
	if page.HasMore = len(domains) > q.limit; page.HasMore {
		domains = domains[:q.limit]
		next := pagecursor.Encode(s.cfg.SecretKey, pagecursor.Cursor{Query: fp, ID: domains[len(domains)-1].Name})
		page.NextCursor = &next
		httpjson.NextLink(c, s.base(), next)
	}
	items := make([]domainView, len(domains))
	for i, d := range domains {
		items[i] = newDomainView(d)
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "page": page})
	return nil
}

// runBulk answers POST /api/domains/bulk/{op}: validates the whole request
// (every domain owned, the payload fit for every domain's TLD) before
// anything changes, then queues the op, applies it locally or fills the
// cart, by its kind.
func (s *Server) runBulk(c *gin.Context) error {
	u, _ := currentUser(c)
	op := c.Param("op")
	if _, ok := bulkop.Kinds[op]; !ok {
		return fault.New(fault.Validation, "unknown bulk operation %q; one of lock, unlock, setNameservers, setFolder, setContacts, setAutoRenew, renew, restore", op)
	}
	var req bulkop.Request
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	plan, err := bulkop.Parse(op, req)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	var owned []models.Domain
	if err := s.db.WithContext(ctx).Where("user_id = ? AND name IN ?", u.ID, plan.Domains).Find(&owned).Error; err != nil {
		return fmt.Errorf("load domains: %w", err)
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
		return fault.New(fault.Forbidden, "you do not own %d of these domains: %s; nothing was changed", len(notOwned), bulkop.Names(notOwned))
	}
	snap, err := s.catalog.Get(ctx)
	if err != nil {
		return fmt.Errorf("load TLD rules: %w", err)
	}
	if err := plan.Check(byName, snap.TLDs); err != nil {
		return err
	}
	switch bulkop.Kinds[op] {
	case bulkop.Local:
		return s.setAutoRenew(c, u, plan, byName)
	case bulkop.Cart:
		return s.addToCart(c, u, plan, byName, snap)
	}
	return s.queueBulk(c, u, plan, byName)
}

// queueBulk writes the op, its items and its task in one transaction. A
// dry run records what each item would change and is done at once.
func (s *Server) queueBulk(c *gin.Context, u models.User, plan bulkop.Plan, domains map[string]models.Domain) error {
	now := s.now().UTC()
	op := models.BulkOp{
		ID: secret.NewID(bulkOpPrefix), UserID: u.ID, Op: plan.Op, Update: plan.Update, Folder: plan.Folder,
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
	err := s.outbox.Transaction(c.Request.Context(), func(tx *outbox.Tx) error {
		if err := tx.Create(&op).Error; err != nil {
			return err
		}
		if err := tx.CreateInBatches(items, 500).Error; err != nil {
			return err
		}
		if plan.DryRun {
			return nil
		}
		tx.Add(tasks.BulkRunPayload{BulkOpID: op.ID})
		return nil
	})
	if err != nil {
		return fmt.Errorf("queue bulk %s: %w", plan.Op, err)
	}
	s.log.InfoContext(c.Request.Context(), "bulk op queued", "bulk_op", op.ID, "op", op.Op, "total", op.Total, "dry_run", op.DryRun)
	c.JSON(http.StatusOK, gin.H{"bulkOpId": op.ID, "total": op.Total, "op": op.Op, "dryRun": op.DryRun, "statusPath": "/api/domains/bulk/" + op.ID})
	return nil
}

// setAutoRenew applies setAutoRenew to the domains at once. count is how
// many domains the request covered (all of which now have the setting),
// changed how many of them did not have it before (in a dry run: would
// change).
func (s *Server) setAutoRenew(c *gin.Context, u models.User, plan bulkop.Plan, domains map[string]models.Domain) error {
	var changing []string
	for _, name := range plan.Domains {
		if domains[name].AutoRenew != plan.AutoRenew {
			changing = append(changing, name)
		}
	}
	answer := func(updated bool, changed int) {
		c.JSON(http.StatusOK, gin.H{"updated": updated, "count": len(plan.Domains), "changed": changed, "dryRun": plan.DryRun})
	}
	if plan.DryRun || len(changing) == 0 {
		answer(false, len(changing))
		return nil
	}
	res := s.db.WithContext(c.Request.Context()).Model(&models.Domain{}).
		Where("user_id = ? AND name IN ? AND auto_renew <> ?", u.ID, changing, plan.AutoRenew).
		Updates(map[string]any{"auto_renew": plan.AutoRenew, "updated_at": s.now().UTC()})
	if res.Error != nil {
		return fmt.Errorf("set auto-renew: %w", res.Error)
	}
	answer(true, int(res.RowsAffected))
	return nil
}

// Prefixes of the opaque ids of bulk ops and tool jobs.
const (
	bulkOpPrefix = "bop_"
	jobPrefix    = "job_"
)

// opaqueID matches the ids secret.NewID makes with a known prefix.
var opaqueID = regexp.MustCompile(`^(bop|job|cart)_[0-9a-f]{24}$`)

// validID reports whether id is an id made with prefix.
func validID(id, prefix string) bool {
	return strings.HasPrefix(id, prefix) && opaqueID.MatchString(id)
}

// bulkItemsPage bounds the items one status answer lists.
const bulkItemsPage = 200

// bulkItemView is one item of a bulk op's status.
type bulkItemView struct {
	Domain     string     `json:"domain"`
	Status     string     `json:"status"`
	Change     string     `json:"change,omitempty"`
	Error      string     `json:"error,omitempty"`
	FinishedAt *time.Time `json:"finishedAt"`
}

// getBulkOp answers GET /api/domains/bulk/{id}: the op's state, counts of
// item outcomes, and a page of items (offset and limit, in request order;
// ?status= shows only items in that state). Only its owner sees it.
func (s *Server) getBulkOp(c *gin.Context) error {
	u, _ := currentUser(c)
	id := c.Param("id")
	if !validID(id, bulkOpPrefix) {
		return fault.New(fault.Validation, "%q is not a bulk operation id", id)
	}
	limit, offset, _, err := httpjson.ParsePaging(c)
	if err != nil {
		return err
	}
	limit = min(limit, bulkItemsPage)
	itemState := c.Query("status")
	if itemState != "" && !slices.Contains([]string{models.ItemPending, models.ItemDone, models.ItemFailed, models.ItemSkipped}, itemState) {
		return fault.Invalid("status", "must be pending, done, failed or skipped")
	}
	db := s.db.WithContext(c.Request.Context())
	var op models.BulkOp
	if err := models.Found(db.Take(&op, "id = ? AND user_id = ?", id, u.ID).Error, "bulk operation "+id); err != nil {
		return err
	}
	var counts []struct {
		State string
		N     int
	}
	if err := db.Model(&models.BulkItem{}).Select("state, count(*) AS n").Where("bulk_op_id = ?", id).Group("state").Scan(&counts).Error; err != nil {
		return fmt.Errorf("count bulk items: %w", err)
	}
	countOf := map[string]int{models.ItemPending: 0, models.ItemDone: 0, models.ItemFailed: 0, models.ItemSkipped: 0}
	for _, n := range counts {
		countOf[n.State] = n.N
	}
	items := db.Where("bulk_op_id = ?", id)
	matching := op.Total
	if itemState != "" {
		items, matching = items.Where("state = ?", itemState), countOf[itemState]
	}
	var rows []models.BulkItem
	if err := items.Order("seq").Offset(offset).Limit(limit).Find(&rows).Error; err != nil {
		return fmt.Errorf("list bulk items: %w", err)
	}
	views := make([]bulkItemView, len(rows))
	for i, it := range rows {
		views[i] = bulkItemView{Domain: it.Domain, Status: it.State, Change: it.Change, Error: it.Error, FinishedAt: it.FinishedAt}
	}
	c.JSON(http.StatusOK, gin.H{
		"bulkOpId": op.ID, "op": op.Op, "status": op.State, "dryRun": op.DryRun, "skipOnError": op.SkipOnError,
		"error": op.Error, "total": op.Total, "counts": countOf,
		"progress":  gin.H{"done": op.Total - countOf[models.ItemPending], "planned": op.Total},
		"createdAt": op.CreatedAt, "startedAt": op.StartedAt, "finishedAt": op.FinishedAt,
		"items": views,
		"page":  gin.H{"limit": limit, "offset": offset, "total": matching, "has_more": offset+len(rows) < matching},
	})
	return nil
}
