package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/domaind/domaind/internal/demo"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/models"
)

type listingsPage struct {
	Items []market.View `json:"items"`
	Page  struct {
		Limit      int     `json:"limit"`
		Offset     int     `json:"offset"`
		Total      int64   `json:"total"`
		HasMore    bool    `json:"has_more"`
		NextCursor *string `json:"next_cursor"`
	} `json:"page"`
}

// getListings fetches a page.
func getListings(t *testing.T, env *testEnv, query string, header ...string) listingsPage {
	t.Helper()
	w := env.request("GET", "/api/market/listings?"+query, "", header...)
	if w.Code != 200 {
		t.Fatalf("listings?%s = %d %s", query, w.Code, w.Body)
	}
	var p listingsPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// marketEnv is a test server with demo listings, some of them tied on their
// listing time (the keyset's id tie-break must hold).
func marketEnv(t *testing.T, n int) *testEnv {
	t.Helper()
	env := newTestEnv(t)
	if _, err := demo.Listings(context.Background(), env.db, n, 1, env.now); err != nil {
		t.Fatal(err)
	}
	tie := env.now.Add(-48 * time.Hour)
	if err := env.db.Model(&models.Listing{}).Where("domain LIKE ?", "blue%").Update("created_at", tie).Error; err != nil {
		t.Fatal(err)
	}
	return env
}

// wantOrder is every public listing in the order of sort, computed here
// from the rows rather than by the endpoint's query.
func wantOrder(t *testing.T, env *testEnv, sort string, keep func(models.Listing) bool) []string {
	t.Helper()
	var all []models.Listing
	env.db.Where("approved AND marketplace_visible").Find(&all)
	all = slices.DeleteFunc(all, func(l models.Listing) bool { return !keep(l) })
	slices.SortFunc(all, func(a, b models.Listing) int {
		var c int
		switch sort {
		case "newest":
			c = b.CreatedAt.Compare(a.CreatedAt)
			if c == 0 {
				c = strings.Compare(b.ID, a.ID)
			}
		case "price_asc":
			c = cmpInt(a.SortPriceAsc, b.SortPriceAsc)
			if c == 0 {
				c = strings.Compare(a.ID, b.ID)
			}
		case "price_desc":
			c = cmpInt(b.SortPriceDesc, a.SortPriceDesc)
			if c == 0 {
				c = strings.Compare(b.ID, a.ID)
			}
		}
		return c
	})
	ids := make([]string, len(all))
	for i, l := range all {
		ids[i] = l.ID
	}
	return ids
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ids(items []market.View) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestListingsWalkByCursorAndByOffsetAgree(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 400)
	all := func(models.Listing) bool { return true }
	for _, sort := range []string{"newest", "price_asc", "price_desc"} {
		want := wantOrder(t, env, sort, all)
		const limit = 17
		var byCursor, byOffset []string
		p := getListings(t, env, fmt.Sprintf("sort=%s&limit=%d", sort, limit))
		for {
			if p.Page.Total != int64(len(want)) || p.Page.Limit != limit {
				t.Fatalf("%s: page %+v, want total %d", sort, p.Page, len(want))
			}
			byCursor = append(byCursor, ids(p.Items)...)
			if p.Page.HasMore != (p.Page.NextCursor != nil) || p.Page.HasMore != (len(byCursor) < len(want)) {
				t.Fatalf("%s: has_more %v, next_cursor %v after %d of %d items", sort, p.Page.HasMore, p.Page.NextCursor, len(byCursor), len(want))
			}
			if !p.Page.HasMore {
				break
			}
			p = getListings(t, env, fmt.Sprintf("sort=%s&limit=%d&cursor=%s", sort, limit, url.QueryEscape(*p.Page.NextCursor)))
			if p.Page.Offset != 0 {
				t.Fatalf("%s: a cursor page says offset %d, want 0", sort, p.Page.Offset)
			}
		}
		for off := 0; ; off += limit {
			p := getListings(t, env, fmt.Sprintf("sort=%s&limit=%d&offset=%d", sort, limit, off))
			if p.Page.Offset != off {
				t.Fatalf("%s: offset page says offset %d, want %d", sort, p.Page.Offset, off)
			}
			byOffset = append(byOffset, ids(p.Items)...)
			if off+limit >= int(p.Page.Total) {
				if p.Page.HasMore || p.Page.NextCursor != nil {
					t.Errorf("%s: last offset page has has_more %v, next_cursor %v", sort, p.Page.HasMore, p.Page.NextCursor)
				}
				break
			}
		}
		if d := cmp.Diff(want, byCursor); d != "" {
			t.Errorf("%s: walk by cursor (-want +got):\n%s", sort, d)
		}
		if d := cmp.Diff(want, byOffset); d != "" {
			t.Errorf("%s: walk by offset (-want +got):\n%s", sort, d)
		}
	}
}

func TestListingCursorFromAnOffsetPageContinuesAfterIt(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 200)
	mid := getListings(t, env, "sort=price_asc&limit=10&offset=30")
	if mid.Page.NextCursor == nil {
		t.Fatal("an offset page with more after it has no next_cursor")
	}
	viaCursor := getListings(t, env, "sort=price_asc&limit=10&cursor="+url.QueryEscape(*mid.Page.NextCursor))
	viaOffset := getListings(t, env, "sort=price_asc&limit=10&offset=40")
	if d := cmp.Diff(ids(viaOffset.Items), ids(viaCursor.Items)); d != "" {
		t.Errorf("page after offset 30 by cursor vs offset 40 (-offset +cursor):\n%s", d)
	}
	// The cursor wins over an offset sent with it.
	both := getListings(t, env, "sort=price_asc&limit=10&offset=150&cursor="+url.QueryEscape(*mid.Page.NextCursor))
	if d := cmp.Diff(ids(viaCursor.Items), ids(both.Items)); d != "" {
		t.Errorf("cursor with an offset (-cursor only +both):\n%s", d)
	}
}

func TestListingCursorsAreBoundToTheirQuery(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 100)
	cur := *getListings(t, env, "sort=newest&limit=5&tld=com").Page.NextCursor
	forged := strings.Replace(cur, cur[:4], "AAAA", 1)
	for name, q := range map[string]string{
		"other sort":   "sort=price_asc&tld=com",
		"other filter": "sort=newest&tld=io",
		"no filter":    "sort=newest",
		"other q":      "sort=newest&tld=com&q=blue",
		"tampered":     "sort=newest&tld=com&cursor=" + url.QueryEscape(forged),
		"garbled":      "sort=newest&tld=com&cursor=not-a-cursor",
	} {
		if !strings.Contains(q, "cursor=") {
			q += "&cursor=" + url.QueryEscape(cur)
		}
		wantError(t, name, env.request("GET", "/api/market/listings?"+q, ""), 400, "invalid_cursor")
	}
	if p := getListings(t, env, "sort=newest&limit=5&tld=com&cursor="+url.QueryEscape(cur)); len(p.Items) != 5 {
		t.Errorf("the cursor with its own query gave %d items", len(p.Items))
	}
}

func TestListingFilters(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 600)
	cents := func(v int64) *int64 { return &v }
	env.db.Create(&models.Listing{ID: models.NewID(), Domain: "100%_off.shop", TLD: "shop", BINCents: cents(5000), Currency: "USD", Approved: true, MarketplaceVisible: true})
	tests := []struct {
		query string
		keep  func(models.Listing) bool
	}{
		{"q=BLUE", func(l models.Listing) bool { return strings.Contains(l.Domain, "blue") }},
		{"q=%25_", func(l models.Listing) bool { return strings.Contains(l.Domain, "%_") }},
		{"tld=io", func(l models.Listing) bool { return l.TLD == "io" }},
		{"max=1000.50", func(l models.Listing) bool { return l.BINCents != nil && *l.BINCents <= 100050 }},
		{"tld=com&max=20000&q=o", func(l models.Listing) bool {
			return l.TLD == "com" && l.BINCents != nil && *l.BINCents <= 2000000 && strings.Contains(l.Domain, "o")
		}},
	}
	b := signedInBrowser(t, env, "filters@example.com")
	auth := "Bearer " + grant(t, b, registerClient(t, b, "https://app.example/cb"), "s").AccessToken // max needs pricing:read
	for _, tc := range tests {
		want := wantOrder(t, env, "price_asc", tc.keep)
		p := getListings(t, env, tc.query+"&sort=price_asc&limit=200", "Authorization", auth)
		if len(want) == 0 || p.Page.Total != int64(len(want)) {
			t.Errorf("%s: total %d, want %d (and some)", tc.query, p.Page.Total, len(want))
			continue
		}
		if d := cmp.Diff(want[:min(200, len(want))], ids(p.Items)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.query, d)
		}
	}
}

func TestListingsShowOnlyPublicOnesAndMaskPrices(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	bin, floor := int64(480000), int64(300000)
	for _, l := range []models.Listing{
		{Domain: "shown.com", Approved: true, MarketplaceVisible: true},
		{Domain: "unapproved.com", Approved: false, MarketplaceVisible: true},
		{Domain: "hidden.com", Approved: true, MarketplaceVisible: false},
	} {
		l.ID, l.TLD, l.Currency, l.BINCents, l.FloorCents = models.NewID(), "com", "USD", &bin, &floor
		env.db.Create(&l)
	}
	p := getListings(t, env, "")
	if p.Page.Total != 1 || len(p.Items) != 1 || p.Items[0].Domain != "shown.com" || p.Page.Limit != 24 {
		t.Fatalf("listings = %+v", p)
	}
	if it := p.Items[0]; it.Price.BIN != nil || it.Price.Floor != nil || it.Price.Currency != "USD" || !it.Approved || !it.MarketplaceVisible {
		t.Errorf("anonymous item = %+v, want prices masked", it)
	}

	b := signedInBrowser(t, env, "buyer@example.com")
	c := registerClient(t, b, "https://app.example/cb")
	tok := grant(t, b, c, "s")
	w := env.request("GET", "/api/market/listings", "", "Authorization", "Bearer "+tok.AccessToken)
	if !strings.Contains(w.Body.String(), `"price":{"bin":4800.00,"floor":3000.00,"currency":"USD"}`) {
		t.Errorf("listings with pricing:read = %s, want the prices", w.Body)
	}
	if w := env.request("GET", "/api/market/listings", "", "Authorization", "Bearer at_forged"); w.Code != 401 {
		t.Errorf("listings with a forged token = %d, want 401 invalid_token", w.Code)
	}
}

func TestListingsRefuseBadParameters(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := signedInBrowser(t, env, "params@example.com")
	auth := "Bearer " + grant(t, b, registerClient(t, b, "https://app.example/cb"), "s").AccessToken
	for _, q := range []string{"limit=0", "limit=201", "limit=ten", "offset=-1", "offset=x", "sort=cheapest",
		"max=-5", "max=lots", "max=NaN", "tld=not%20a%20tld", "q=" + strings.Repeat("a", 300)} {
		wantError(t, q, env.request("GET", "/api/market/listings?"+q, "", "Authorization", auth), 400, "validation_error")
	}
}

// A price filter is a price oracle: "at most x?" a few dozen times reads
// an exact price. Without pricing:read, max is refused (and sorting by
// price, which tells no amount, is not).
func TestListingsPriceFilterNeedsTheScope(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 50)
	w := env.request("GET", "/api/market/listings?max=1000", "")
	wantError(t, "max without a token", w, 400, "validation_error")
	var body struct {
		Error struct{ Field, Message string }
	}
	json.Unmarshal(w.Body.Bytes(), &body)
	if body.Error.Field != "max" || !strings.Contains(body.Error.Message, "pricing:read") {
		t.Errorf("refusal = %s, want it to name the field and the scope", w.Body)
	}
	// A max that is no price at all says so, token or not.
	for _, max := range []string{"-1", "NaN"} {
		w := env.request("GET", "/api/market/listings?max="+max, "")
		if w.Code != 400 || !strings.Contains(w.Body.String(), "non-negative number") {
			t.Errorf("max=%s without a token = %d %s, want 400 saying what max must be", max, w.Code, w.Body)
		}
	}
	if p := getListings(t, env, "sort=price_asc"); len(p.Items) == 0 || p.Items[0].Price.BIN != nil {
		t.Errorf("price sort without a token = %+v, want items with masked prices", p.Items)
	}
}

// RFC 8288: a page with a next one links to it, and following the links
// walks the same list the cursors do.
func TestListingsLinkToTheNextPage(t *testing.T) {
	t.Parallel()
	env := marketEnv(t, 60)
	next := "/api/market/listings?sort=price_desc&limit=25&offset=5&tld=com"
	var walked []string
	for pages := 0; next != ""; pages++ {
		if pages > 10 {
			t.Fatal("the links do not end")
		}
		w := env.request("GET", next, "")
		var p listingsPage
		json.Unmarshal(w.Body.Bytes(), &p)
		walked = append(walked, ids(p.Items)...)
		link := w.Header().Get("Link")
		if (link != "") != p.Page.HasMore {
			t.Fatalf("has_more %v with Link %q", p.Page.HasMore, link)
		}
		next = ""
		if link != "" {
			target, rel, _ := strings.Cut(link, ">; ")
			u, err := url.Parse(strings.TrimPrefix(target, "<"))
			if rel != `rel="next"` || err != nil || u.Host != "api.test" || u.Query().Get("cursor") != *p.Page.NextCursor || u.Query().Has("offset") || u.Query().Get("tld") != "com" {
				t.Fatalf("Link = %q, want the next page by cursor with the same filters", link)
			}
			next = u.RequestURI()
		}
	}
	want := wantOrder(t, env, "price_desc", func(l models.Listing) bool { return l.TLD == "com" })
	if d := cmp.Diff(want[5:], walked); d != "" {
		t.Errorf("walk by Link (-want +got):\n%s", d)
	}
}
