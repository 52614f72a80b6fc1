// Package market is the live marketplace's listings as the public read
// API, its pages, the MCP server and the developer API see them (SPEC
// §2.9, §4.1): the public listings searched, filtered, sorted and paged
// by cursor or offset, the listing of one name, and the listings among a
// search's names. Prices are the caller's to mask; a price filter is
// refused to a caller who may not see prices.
package market

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// Page sizes and the deepest offset of the marketplace list (SPEC §2.3,
// §8); past MaxOffset the list is walked with cursors.
const (
	DefaultLimit = 24
	MaxLimit     = 200
	MaxOffset    = 1_000_000
)

// MaxPriceDollars bounds a price filter: a trillion dollars.
const MaxPriceDollars = 1e12

// Sorts are the marketplace's orders (SPEC §4.1), the first the default.
var Sorts = []string{"newest", "price_asc", "price_desc"}

// Service is the marketplace of one database.
type Service struct {
	db        *gorm.DB
	secretKey []byte // seals the list's cursors
}

// New returns the marketplace of db, sealing its cursors with secretKey
// (DOMAIND_SECRET_KEY).
func New(db *gorm.DB, secretKey []byte) *Service { return &Service{db: db, secretKey: secretKey} }

// Query is a search of the public listings.
type Query struct {
	// Sort is one of Sorts ("" for the first).
	Sort string
	// Q is words the names contain; TLD the TLD they are under.
	Q, TLD string
	// MaxDollars filters on buy-now prices, which only a caller who may
	// see prices may use.
	MaxDollars *float64
	// Limit is the page's size (DefaultLimit for 0); the page starts at
	// Cursor, else at Offset.
	Limit, Offset int
	Cursor        string
}

// Page is a page of public listings and its paging block.
type Page struct {
	Listings   []models.Listing
	Limit      int
	Offset     int
	Total      int64
	HasMore    bool
	NextCursor *string
}

// order is one sort: its ORDER BY, the keyset condition that continues
// after a cursor, and a listing's sort key.
type order struct {
	orderBy string
	after   string
	key     func(models.Listing) int64
}

// orders are the sorts, each a total order (id breaks ties) served by an
// index (models.listingIndexes).
var orders = map[string]order{
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

// ErrMaxNeedsPrices refuses a price filter to a caller who may not see
// prices: a filter answers "is the price at most x?", and a few dozen
// such questions read an exact price. Sorting by price stays open: an
// order tells no amount.
var ErrMaxNeedsPrices = &fault.Error{Code: fault.Validation, Field: "max",
	Message: "max filters on buy-now prices, which are shown only to a bearer token with scope pricing:read; sort by price instead, or send such a token"}

// checked is a Query checked and normalised.
type checked struct {
	Query
	maxCents *int64
}

// check checks q's fields (validation errors naming them) and normalises
// them; showPrices says whether the caller may see prices.
func check(q Query, showPrices bool) (checked, error) {
	c := checked{Query: q}
	if c.Sort == "" {
		c.Sort = Sorts[0]
	}
	if _, ok := orders[c.Sort]; !ok {
		return c, fault.Invalid("sort", "must be newest, price_asc or price_desc")
	}
	if c.Limit == 0 {
		c.Limit = DefaultLimit
	}
	if c.Limit < 1 || c.Limit > MaxLimit {
		return c, fault.Invalid("limit", "must be an integer from 1 to %d", MaxLimit)
	}
	if c.Offset < 0 || c.Offset > MaxOffset {
		return c, fault.Invalid("offset", "must be an integer from 0 to %d (walk further with next_cursor)", MaxOffset)
	}
	if !models.Storable(c.Q) { // callers other than the HTTP API's (MCP)
		return c, fault.Invalid("q", "must be UTF-8 text without NUL characters")
	}
	c.Q = strings.ToLower(strings.TrimSpace(c.Q))
	if len(c.Q) > 253 {
		return c, fault.Invalid("q", "must be at most 253 characters")
	}
	if c.TLD != "" {
		tld, err := domainname.ParseTLD(c.TLD)
		if err != nil {
			return c, fault.Invalid("tld", "is not a TLD: %v", err)
		}
		c.TLD = tld
	}
	if m := c.MaxDollars; m != nil {
		if math.IsNaN(*m) || *m < 0 || *m > MaxPriceDollars {
			return c, fault.Invalid("max", "must be a non-negative number of US dollars")
		}
		if !showPrices {
			return c, ErrMaxNeedsPrices
		}
		cents := int64(math.Round(*m * 100))
		c.maxCents = &cents
	}
	return c, nil
}

// fingerprint identifies the filters and sort, which a cursor is bound to.
func (c checked) fingerprint() string {
	maxCents := "-"
	if c.maxCents != nil {
		maxCents = strconv.FormatInt(*c.maxCents, 10)
	}
	return pagecursor.Fingerprint("v1", c.Sort, c.Q, c.TLD, maxCents)
}

// Listings returns the page of public listings q picks, for a caller
// who may see prices or not (showPrices: a price filter needs it). Walk
// with NextCursor (keyset: a page deep in the list costs what the first
// costs) or with Offset; a cursor from an offset page continues after it.
// Bad fields are validation errors naming them; a cursor of other filters
// is invalid_cursor. It reads from the replica when there is one.
func (s *Service) Listings(ctx context.Context, q Query, showPrices bool) (Page, error) {
	c, err := check(q, showPrices)
	if err != nil {
		return Page{}, err
	}
	o := orders[c.Sort]
	filtered := func() *gorm.DB {
		db := models.FromReplica(s.db.WithContext(ctx)).Scopes(models.PublicListings)
		if c.Q != "" {
			db = db.Where(`domain LIKE ? ESCAPE '\'`, models.LikeContains(c.Q))
		}
		if c.TLD != "" {
			db = db.Where("tld = ?", c.TLD)
		}
		if c.maxCents != nil {
			db = db.Where("bin_cents <= ?", *c.maxCents)
		}
		return db
	}
	page := Page{Limit: c.Limit}
	rows := filtered().Order(o.orderBy).Limit(c.Limit + 1)
	if c.Cursor != "" {
		cur, err := pagecursor.Decode(s.secretKey, c.Cursor, c.fingerprint())
		if err != nil {
			return page, err
		}
		rows = rows.Where(o.after, keyArg(c.Sort, cur.Key), cur.ID)
	} else {
		page.Offset = c.Offset
		rows = rows.Offset(c.Offset)
	}
	if err := rows.Find(&page.Listings).Error; err != nil {
		return page, fmt.Errorf("list listings: %w", err)
	}
	if c.Q == "" && c.maxCents == nil { // kept by counters: no count over every listing
		page.Total, err = models.CountPublicListings(models.FromReplica(s.db.WithContext(ctx)), c.TLD)
	} else {
		err = filtered().Count(&page.Total).Error
	}
	if err != nil {
		return page, fmt.Errorf("count listings: %w", err)
	}
	if page.HasMore = len(page.Listings) > c.Limit; page.HasMore {
		page.Listings = page.Listings[:c.Limit]
		last := page.Listings[len(page.Listings)-1]
		next := pagecursor.Encode(s.secretKey, pagecursor.Cursor{Query: c.fingerprint(), Key: o.key(last), ID: last.ID})
		page.NextCursor = &next
	}
	return page, nil
}

// Cursor returns the cursor that continues q's list after listing l, as a
// client holds it after a page ending at l (for benchmarks of deep pages).
func (s *Service) Cursor(q Query, l models.Listing) (string, error) {
	c, err := check(q, true)
	if err != nil {
		return "", err
	}
	return pagecursor.Encode(s.secretKey, pagecursor.Cursor{Query: c.fingerprint(), Key: orders[c.Sort].key(l), ID: l.ID}), nil
}

// OrderBy is the ORDER BY of sort (one of Sorts).
func OrderBy(sort string) string { return orders[sort].orderBy }

// keyArg is a cursor's sort key as the database compares it.
func keyArg(sort string, key int64) any {
	if sort == "newest" {
		return time.Unix(0, key).UTC()
	}
	return key
}

// Name returns the listing of domain (a registrable ASCII name) in the
// marketplace, shown or sold (a referral link's product page shows a sold
// one too): not_found when it is not listed.
func (s *Service) Name(ctx context.Context, domain string) (models.Listing, error) {
	var l models.Listing
	err := s.db.WithContext(ctx).Scopes(models.ShownOrSoldListings).Take(&l, "domain = ?", domain).Error
	return l, models.FoundOr(err, "listing "+domain, "%s is not listed", domain)
}

// Public returns the public listing of domain (a registrable ASCII
// name), and whether there is one.
func (s *Service) Public(ctx context.Context, domain string) (models.Listing, bool, error) {
	var l models.Listing
	res := s.db.WithContext(ctx).Scopes(models.PublicListings).Where("domain = ?", domain).Limit(1).Find(&l)
	if res.Error != nil {
		return l, false, fmt.Errorf("find listing %s: %w", domain, res.Error)
	}
	return l, res.RowsAffected == 1, nil
}

// Among returns the public listings of domains, by domain.
func (s *Service) Among(ctx context.Context, domains []string) (map[string]models.Listing, error) {
	var listings []models.Listing
	if err := s.db.WithContext(ctx).Scopes(models.PublicListings).Where("domain IN ?", domains).Find(&listings).Error; err != nil {
		return nil, fmt.Errorf("find the listings of %d names: %w", len(domains), err)
	}
	out := make(map[string]models.Listing, len(listings))
	for _, l := range listings {
		out[l.Domain] = l
	}
	return out, nil
}
