package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/ratelimit"
)

// listingsLimit protects the database from one address walking the
// marketplace as fast as it can.
var listingsLimit = ratelimit.PerMinute("listings", 300)

// parseListingsQuery reads GET /api/market/listings's query: its paging
// (limit, offset, cursor), sort, q, tld and max (US dollars).
func parseListingsQuery(c *gin.Context) (market.Query, error) {
	q := market.Query{Sort: c.Query("sort"), Q: c.Query("q"), TLD: c.Query("tld")}
	if _, given := c.GetQuery("sort"); given && q.Sort == "" {
		return q, fault.Invalid("sort", "must be newest, price_asc or price_desc")
	}
	var err error
	if q.Limit, q.Offset, q.Cursor, err = httpjson.ParsePaging(c); err != nil {
		return q, err
	}
	if v, ok := c.GetQuery("max"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return q, fault.Invalid("max", "must be a non-negative number of US dollars")
		}
		q.MaxDollars = &f
	}
	return q, nil
}

// listListings answers GET /api/market/listings: the public listings,
// filtered and sorted, a page at a time (market.Service.Listings). Prices
// are masked without a bearer token holding pricing:read.
func (s *Server) listListings(c *gin.Context) error {
	q, err := parseListingsQuery(c)
	if err != nil {
		return err
	}
	showPrices := pricesVisible(c)
	page, err := s.svc.Market.Listings(c.Request.Context(), q, showPrices)
	if err != nil {
		return err
	}
	if page.NextCursor != nil {
		httpjson.NextLink(c, s.base(), *page.NextCursor)
	}
	items := make([]market.View, len(page.Listings))
	for i, l := range page.Listings {
		items[i] = market.NewView(l, showPrices)
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "page": httpjson.Page{Limit: page.Limit, Offset: page.Offset, Total: page.Total,
		HasMore: page.HasMore, NextCursor: page.NextCursor}})
	return nil
}
