package market

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// newMarket lists names: public ones at prices (nil for offers only), a
// hidden one and a sold one.
func newMarket(t *testing.T) (*Service, *gorm.DB) {
	t.Helper()
	db := modelstest.NewDB(t)
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	add := func(domain string, cents *int64, visible bool, sold bool) {
		tld := domain[len(domain)-2:]
		if domain[len(domain)-3] != '.' {
			tld = domain[len(domain)-3:]
		}
		l := models.Listing{ID: fmt.Sprintf("l-%s", domain), Domain: domain, TLD: tld, BINCents: cents, Currency: "USD",
			Approved: true, MarketplaceVisible: visible, CreatedAt: at}
		if sold {
			l.SoldAt = &at
		}
		at = at.Add(time.Hour)
		if err := db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i, cents := range []int64{500, 9_000, 1_200, 70_000, 1_200} {
		add(fmt.Sprintf("green%d.com", i), &cents, true, false)
	}
	add("green_x.io", nil, true, false)
	add("hidden.com", new(int64(100)), false, false)
	add("soldname.com", new(int64(100)), false, true)
	return New(db, []byte("test-secret-key-0123456789abcdef")), db
}

func domains(p Page) []string {
	var out []string
	for _, l := range p.Listings {
		out = append(out, l.Domain)
	}
	return out
}

func TestSortsFiltersAndPages(t *testing.T) {
	t.Parallel()
	s, _ := newMarket(t)
	ctx := context.Background()
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"green_x.io", "green4.com", "green3.com", "green2.com", "green1.com", "green0.com"}},
		{Query{Sort: "price_asc"}, []string{"green0.com", "green2.com", "green4.com", "green1.com", "green3.com", "green_x.io"}},
		{Query{Sort: "price_desc"}, []string{"green3.com", "green1.com", "green4.com", "green2.com", "green0.com", "green_x.io"}},
		{Query{Q: " GREEN_ "}, []string{"green_x.io"}}, // _ is taken literally
		{Query{TLD: ".IO"}, []string{"green_x.io"}},
		{Query{MaxDollars: new(12.0), Sort: "price_asc"}, []string{"green0.com", "green2.com", "green4.com"}},
	} {
		p, err := s.Listings(ctx, tc.q, true)
		if err != nil || !slices.Equal(domains(p), tc.want) {
			t.Errorf("%+v = %v, %v; want %v", tc.q, domains(p), err, tc.want)
		}
	}

	// Walked by cursor two at a time, or by offset, the list is the same.
	var byCursor, byOffset []string
	q := Query{Sort: "price_asc", Limit: 2}
	for page := 0; ; page++ {
		p, err := s.Listings(ctx, q, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 6 {
			t.Errorf("total %d, want 6", p.Total)
		}
		byCursor = append(byCursor, domains(p)...)
		o, _ := s.Listings(ctx, Query{Sort: "price_asc", Limit: 2, Offset: 2 * page}, false)
		byOffset = append(byOffset, domains(o)...)
		if p.NextCursor == nil {
			break
		}
		q.Cursor = *p.NextCursor
	}
	if !slices.Equal(byCursor, byOffset) || len(byCursor) != 6 {
		t.Errorf("by cursor %v, by offset %v", byCursor, byOffset)
	}
}

func TestBadQueriesNameTheirField(t *testing.T) {
	t.Parallel()
	s, _ := newMarket(t)
	ctx := context.Background()
	first, _ := s.Listings(ctx, Query{Limit: 1}, false)
	for _, tc := range []struct {
		q          Query
		showPrices bool
		field      string
		code       fault.Code
	}{
		{Query{Sort: "cheapest"}, true, "sort", fault.Validation},
		{Query{Limit: MaxLimit + 1}, true, "limit", fault.Validation},
		{Query{Limit: -1}, true, "limit", fault.Validation},
		{Query{Offset: MaxOffset + 1}, true, "offset", fault.Validation},
		{Query{TLD: "not a tld"}, true, "tld", fault.Validation},
		{Query{Q: "ab\x00c"}, true, "q", fault.Validation},
		{Query{Q: "ab\xffc"}, true, "q", fault.Validation},
		{Query{MaxDollars: new(10.0)}, false, "max", fault.Validation},
		{Query{MaxDollars: new(-1.0)}, true, "max", fault.Validation},
		{Query{Cursor: *first.NextCursor, Sort: "price_desc", Limit: 1}, true, "", fault.InvalidCursor},
		{Query{Cursor: "garbage"}, true, "", fault.InvalidCursor},
	} {
		_, err := s.Listings(ctx, tc.q, tc.showPrices)
		if e, ok := fault.As(err); !ok || e.Code != tc.code || e.Field != tc.field {
			t.Errorf("%+v: %v, want %s of %q", tc.q, err, tc.code, tc.field)
		}
	}
}

func TestOneName(t *testing.T) {
	t.Parallel()
	s, _ := newMarket(t)
	ctx := context.Background()
	if l, err := s.Name(ctx, "soldname.com"); err != nil || l.SoldAt == nil {
		t.Errorf("a sold name's page = %+v, %v", l, err)
	}
	if _, err := s.Name(ctx, "hidden.com"); err == nil {
		t.Error("a hidden name has a page")
	}
	if _, ok, err := s.Public(ctx, "soldname.com"); ok || err != nil {
		t.Errorf("a sold name is public: %v, %v", ok, err)
	}
	if l, ok, err := s.Public(ctx, "green1.com"); !ok || err != nil || *l.BINCents != 9_000 {
		t.Errorf("a public name = %+v, %v, %v", l, ok, err)
	}
	among, err := s.Among(ctx, []string{"green1.com", "hidden.com", "nothere.com"})
	if err != nil || len(among) != 1 || among["green1.com"].Domain != "green1.com" {
		t.Errorf("among = %v, %v", among, err)
	}
}
