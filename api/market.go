package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// listingsLimit protects the database from one address walking the
// marketplace as fast as it can.
var listingsLimit = ratelimit.PerMinute("listings", 300)

// listingOrder is one sort of the marketplace: its ORDER BY, the keyset
// condition that continues after a cursor, and the sort key of a listing.
type listingOrder struct {
	orderBy string
	after   string
	key     func(models.Listing) int64
}

// listingOrders are SPEC §4.1's sorts, each a total order (id breaks ties)
// served by an index (models.listingIndexes).
var listingOrders = map[string]listingOrder{
	"newest": {
		orderBy: "created_at DESC, id DESC",
		after:   "(created_at, id) < (?, ?)",
		key:     func(l models.Listing) int64 { return l.CreatedAt.UnixNano() },
	},
	"price_asc": {
		orderBy: "sort_price_asc, id",
		after:   "(sort_price_asc, id) > (?, ?)",
		key:     func(l models.Listing) int64 { return l.SortPriceAsc },
	},
	"price_desc": {
		orderBy: "sort_price_desc DESC, id DESC",
		after:   "(sort_price_desc, id) < (?, ?)",
		key:     func(l models.Listing) int64 { return l.SortPriceDesc },
	},
}

// keyArg is a cursor's sort key as the database compares it.
func keyArg(sort string, key int64) any {
	if sort == "newest" {
		return time.Unix(0, key).UTC()
	}
	return key
}

// listingsQuery is a parsed GET /api/market/listings.
type listingsQuery struct {
	limit, offset int
	cursor        string
	q, tld, sort  string
	maxCents      *int64
}

// fingerprint identifies the filters and sort, which a cursor is bound to.
func (q listingsQuery) fingerprint() string {
	maxCents := "-"
	if q.maxCents != nil {
		maxCents = strconv.FormatInt(*q.maxCents, 10)
	}
	return pagecursor.Fingerprint("v1", q.sort, q.q, q.tld, maxCents)
}

// errMaxNeedsScope refuses a price filter to a caller who may not see
// prices: a filter answers "is the price at most x?", and a few dozen such
// questions read an exact price. Sorting by price stays open: an order
// tells no amount.
var errMaxNeedsScope = &fault.Error{Code: fault.Validation, Field: "max",
	Message: "max filters on buy-now prices, which are shown only to a bearer token with scope " + scopePricingRead + "; sort by price instead, or send such a token"}

func parseListingsQuery(c *gin.Context) (listingsQuery, error) {
	q := listingsQuery{sort: c.DefaultQuery("sort", "newest"), q: c.Query("q"), tld: c.Query("tld")}
	var err error
	if q.limit, q.offset, q.cursor, err = httpjson.ParsePaging(c); err != nil {
		return q, err
	}
	var maxDollars *float64
	if v, ok := c.GetQuery("max"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return q, fault.Invalid("max", "must be a non-negative number of US dollars")
		}
		maxDollars = &f
	}
	return q, q.check(maxDollars, pricesVisible(c))
}

// check checks and normalises q's sort and filters; maxDollars is the
// price filter asked for, if any, which only a caller who may see prices
// may use.
func (q *listingsQuery) check(maxDollars *float64, showPrices bool) error {
	if _, ok := listingOrders[q.sort]; !ok {
		return fault.Invalid("sort", "must be newest, price_asc or price_desc")
	}
	q.q = strings.ToLower(strings.TrimSpace(q.q))
	if len(q.q) > 253 {
		return fault.Invalid("q", "must be at most 253 characters")
	}
	if q.tld != "" {
		tld, err := domainname.ParseTLD(q.tld)
		if err != nil {
			return fault.Invalid("tld", "is not a TLD: %v", err)
		}
		q.tld = tld
	}
	if maxDollars != nil {
		if !showPrices {
			return errMaxNeedsScope
		}
		if f := *maxDollars; math.IsNaN(f) || f < 0 || f > 1e12 {
			return fault.Invalid("max", "must be a non-negative number of US dollars")
		}
		cents := int64(math.Round(*maxDollars * 100))
		q.maxCents = &cents
	}
	return nil
}

// likePattern is a LIKE pattern matching s anywhere, with LIKE's
// wildcards in s taken literally.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// listListings answers GET /api/market/listings: the public listings,
// filtered and sorted, a page at a time. Walk with next_cursor (keyset: a
// page deep in the list costs what the first costs) or with offset; a
// cursor from an offset page continues after it, and the two agree on the
// order. Prices are masked without a bearer token holding pricing:read.
func (s *Server) listListings(c *gin.Context) error {
	q, err := parseListingsQuery(c)
	if err != nil {
		return err
	}
	listings, page, err := s.findListings(c.Request.Context(), q)
	if err != nil {
		return err
	}
	if page.NextCursor != nil {
		httpjson.NextLink(c, s.base(), *page.NextCursor)
	}
	showPrices := pricesVisible(c)
	items := make([]listingView, len(listings))
	for i, l := range listings {
		items[i] = newListingView(l, showPrices)
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "page": page})
	return nil
}

// findListings returns the page of public listings q picks, and its
// paging block.
func (s *Server) findListings(ctx context.Context, q listingsQuery) ([]models.Listing, httpjson.Page, error) {
	order := listingOrders[q.sort]
	filtered := func() *gorm.DB {
		db := s.db.WithContext(ctx).Scopes(models.PublicListings)
		if q.q != "" {
			db = db.Where(`domain LIKE ? ESCAPE '\'`, likePattern(q.q))
		}
		if q.tld != "" {
			db = db.Where("tld = ?", q.tld)
		}
		if q.maxCents != nil {
			db = db.Where("bin_cents <= ?", *q.maxCents)
		}
		return db
	}

	page := httpjson.Page{Limit: q.limit}
	rows := filtered().Order(order.orderBy).Limit(q.limit + 1)
	if q.cursor != "" {
		cur, err := pagecursor.Decode(s.cfg.SecretKey, q.cursor, q.fingerprint())
		if err != nil {
			return nil, page, err
		}
		rows = rows.Where(order.after, keyArg(q.sort, cur.Key), cur.ID)
	} else {
		page.Offset = q.offset
		rows = rows.Offset(q.offset)
	}
	var listings []models.Listing
	if err := rows.Find(&listings).Error; err != nil {
		return nil, page, fmt.Errorf("list listings: %w", err)
	}
	var err error
	if q.q == "" && q.maxCents == nil { // kept by counters: no count over every listing
		page.Total, err = models.CountPublicListings(s.db.WithContext(ctx), q.tld)
	} else {
		err = filtered().Count(&page.Total).Error
	}
	if err != nil {
		return nil, page, fmt.Errorf("count listings: %w", err)
	}
	if page.HasMore = len(listings) > q.limit; page.HasMore {
		listings = listings[:q.limit]
		last := listings[len(listings)-1]
		next := pagecursor.Encode(s.cfg.SecretKey, pagecursor.Cursor{Query: q.fingerprint(), Key: order.key(last), ID: last.ID})
		page.NextCursor = &next
	}
	return listings, page, nil
}
