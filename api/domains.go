package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/bulkop"
	"github.com/domaind/domaind/internal/domains"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
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

// parseDomainsQuery reads GET /api/domains's query: paging, q, tld,
// folder, status and expiring_before.
func parseDomainsQuery(c *gin.Context) (domains.Query, error) {
	q := domains.Query{Q: c.Query("q"), TLD: c.Query("tld"), Status: c.Query("status")}
	var err error
	if q.Limit, q.Offset, q.Cursor, err = httpjson.ParsePaging(c); err != nil {
		return q, err
	}
	if v, ok := c.GetQuery("folder"); ok {
		q.Folder = &v
	}
	if v := c.Query("expiring_before"); v != "" {
		t, err := parseDateTime(v)
		if err != nil {
			return q, fault.Invalid("expiring_before", "must be a date (2026-12-31) or an RFC 3339 time")
		}
		q.ExpiringBefore = &t
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
	page, err := s.svc.Domains.List(c.Request.Context(), u.ID, q)
	if err != nil {
		return err
	}
	if page.NextCursor != nil {
		httpjson.NextLink(c, s.base(), *page.NextCursor)
	}
	items := make([]domainView, len(page.Domains))
	for i, d := range page.Domains {
		items[i] = newDomainView(d)
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "page": httpjson.Page{Limit: page.Limit, Offset: page.Offset, Total: page.Total,
		HasMore: page.HasMore, NextCursor: page.NextCursor}})
	return nil
}

// runBulk answers POST /api/domains/bulk/{op} (domains.Service.Bulk): the
// queued op and where to poll it, the local change made, or the cart's
// items, by the operation's kind.
func (s *Server) runBulk(c *gin.Context) error {
	u, _ := currentUser(c)
	var req bulkop.Request
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	res, err := s.svc.Domains.Bulk(c.Request.Context(), u.ID, c.Param("op"), req)
	if err != nil {
		return err
	}
	switch res.Kind {
	case bulkop.Local:
		c.JSON(http.StatusOK, gin.H{"updated": res.Updated, "count": res.Count, "changed": res.Changed, "dryRun": res.DryRun})
	case bulkop.Cart:
		answer := gin.H{"addedToCart": res.AddedToCart, "cartItemIds": res.CartItemIDs, "totalCents": res.TotalCents, "checkoutPath": domains.CartPath}
		if res.DryRun {
			answer["dryRun"] = true
		}
		c.JSON(http.StatusOK, answer)
	default:
		op := res.Op
		c.JSON(http.StatusOK, gin.H{"bulkOpId": op.ID, "total": op.Total, "op": op.Op, "dryRun": op.DryRun, "statusPath": "/api/domains/bulk/" + op.ID})
	}
	return nil
}

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
	limit, offset, _, err := httpjson.ParsePaging(c)
	if err != nil {
		return err
	}
	st, err := s.svc.Domains.BulkStatus(c.Request.Context(), u.ID, c.Param("id"), c.Query("status"), limit, offset)
	if err != nil {
		return err
	}
	views := make([]bulkItemView, len(st.Items))
	for i, it := range st.Items {
		views[i] = bulkItemView{Domain: it.Domain, Status: it.State, Change: it.Change, Error: it.Error, FinishedAt: it.FinishedAt}
	}
	op := st.Op
	c.JSON(http.StatusOK, gin.H{
		"bulkOpId": op.ID, "op": op.Op, "status": op.State, "dryRun": op.DryRun, "skipOnError": op.SkipOnError,
		"error": op.Error, "total": op.Total, "counts": st.Counts,
		"progress":  gin.H{"done": op.Total - st.Counts[models.ItemPending], "planned": op.Total},
		"createdAt": op.CreatedAt, "startedAt": op.StartedAt, "finishedAt": op.FinishedAt,
		"items": views,
		"page":  gin.H{"limit": min(limit, domains.MaxItems), "offset": offset, "total": st.Matching, "has_more": offset+len(st.Items) < st.Matching},
	})
	return nil
}
