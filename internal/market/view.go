package market

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/domaind/domaind/models"
)

// View is a listing as the API shows it: SPEC §2.4's MarketListing.
type View struct {
	ID                 string    `json:"id"`
	Domain             string    `json:"domain"`
	TLD                string    `json:"tld"`
	Price              Price     `json:"price"`
	Approved           bool      `json:"approved"`
	MarketplaceVisible bool      `json:"marketplace_visible"`
	CreatedAt          time.Time `json:"created_at"`
}

// Price is a listing's prices, masked (null) for a caller who may not
// see them.
type Price struct {
	BIN      *Dollars `json:"bin"`
	Floor    *Dollars `json:"floor"`
	Currency string   `json:"currency"`
}

// NewView is l's view, its prices null unless showPrices (a bearer token
// holding pricing:read).
func NewView(l models.Listing, showPrices bool) View {
	v := View{
		ID: l.ID, Domain: l.Domain, TLD: l.TLD,
		Price:    Price{Currency: l.Currency},
		Approved: l.Approved, MarketplaceVisible: l.MarketplaceVisible, CreatedAt: l.CreatedAt.UTC(),
	}
	if showPrices {
		v.Price.BIN, v.Price.Floor = ToDollars(l.BINCents), ToDollars(l.FloorCents)
	}
	return v
}

// Dollars is an amount in cents that JSON shows as a decimal number of the
// currency unit (123456 → 1234.56), without float rounding.
type Dollars int64

// ToDollars is cents as Dollars, nil staying nil.
func ToDollars(cents *int64) *Dollars {
	if cents == nil {
		return nil
	}
	d := Dollars(*cents)
	return &d
}

// Cents is d in cents, nil staying nil.
func (d *Dollars) Cents() *int64 {
	if d == nil {
		return nil
	}
	c := int64(*d)
	return &c
}

// MarshalJSON writes the amount with two decimals.
func (d Dollars) MarshalJSON() ([]byte, error) {
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
func (d *Dollars) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("amount %s: %w", b, err)
	}
	*d = Dollars(math.Round(f * 100))
	return nil
}
