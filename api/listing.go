package api

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/models"
)

// scopesCtxKey holds the OAuth scopes of the request's bearer token, set by
// the bearer-token middleware. A request without a token has none.
const scopesCtxKey = "domaind.scopes"

// scopePricingRead unmasks marketplace prices (SPEC §5.2).
const scopePricingRead = "pricing:read"

// hasScope reports whether the request's bearer token grants scope.
func hasScope(c *gin.Context, scope string) bool {
	scopes, _ := c.Get(scopesCtxKey)
	granted, _ := scopes.([]string)
	for _, s := range granted {
		if s == scope {
			return true
		}
	}
	return false
}

// pricesVisible is the one masking rule of marketplace prices: buy-now and
// floor prices are shown only to a bearer token holding pricing:read.
func pricesVisible(c *gin.Context) bool { return hasScope(c, scopePricingRead) }

// listingView is SPEC §2.4's MarketListing.
type listingView struct {
	ID                 string       `json:"id"`
	Domain             string       `json:"domain"`
	TLD                string       `json:"tld"`
	Price              listingPrice `json:"price"`
	Approved           bool         `json:"approved"`
	MarketplaceVisible bool         `json:"marketplace_visible"`
	CreatedAt          time.Time    `json:"created_at"`
}

type listingPrice struct {
	BIN      *dollars `json:"bin"`
	Floor    *dollars `json:"floor"`
	Currency string   `json:"currency"`
}

// newListingView renders l, with its prices null unless showPrices.
func newListingView(l models.Listing, showPrices bool) listingView {
	v := listingView{
		ID: l.ID, Domain: l.Domain, TLD: l.TLD,
		Price:    listingPrice{Currency: l.Currency},
		Approved: l.Approved, MarketplaceVisible: l.MarketplaceVisible, CreatedAt: l.CreatedAt.UTC(),
	}
	if showPrices {
		v.Price.BIN, v.Price.Floor = toDollars(l.BINCents), toDollars(l.FloorCents)
	}
	return v
}

// dollars is an amount in cents that JSON shows as a decimal number of the
// currency unit (123456 → 1234.56), without float rounding.
type dollars int64

func toDollars(cents *int64) *dollars {
	if cents == nil {
		return nil
	}
	d := dollars(*cents)
	return &d
}

// cents is d in cents, nil staying nil.
func (d *dollars) cents() *int64 {
	if d == nil {
		return nil
	}
	c := int64(*d)
	return &c
}

// MarshalJSON writes the amount with two decimals.
func (d dollars) MarshalJSON() ([]byte, error) {
	cents := int64(d)
	b := []byte{}
	if cents < 0 {
		b, cents = append(b, '-'), -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	b = append(b, '.', byte('0'+cents%100/10), byte('0'+cents%10))
	return b, nil
}

// UnmarshalJSON reads an amount written by MarshalJSON.
func (d *dollars) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("amount %s: %w", b, err)
	}
	*d = dollars(math.Round(f * 100))
	return nil
}
