package api

import (
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
)

// The marketplace pages a referral link lands on: the search for a name,
// one listed name (sold ones too), and a name not listed (404, with names
// like it). Hidden and unapproved listings stay out; prices are not shown.
func TestMarketPages(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	cents := int64(250_000)
	sold := env.now.Add(-time.Hour)
	for _, l := range []models.Listing{
		{Domain: "sunnyflights.com", TLD: "com", Approved: true, MarketplaceVisible: true},
		{Domain: "sunnyflights.io", TLD: "io", Approved: true, MarketplaceVisible: true},
		{Domain: "sunnysold.com", TLD: "com", Approved: true, SoldAt: &sold},
		{Domain: "sunnyhidden.com", TLD: "com", Approved: true, MarketplaceVisible: false},
		{Domain: "sunnypending.com", TLD: "com", Approved: false, MarketplaceVisible: true},
	} {
		l.ID, l.Currency, l.BINCents, l.CreatedAt = models.NewID(), "USD", &cents, env.now
		if err := env.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	search := env.request("GET", "/market?q=Sunny", "")
	body := search.Body.String()
	if search.Code != 200 || !strings.Contains(body, `href="/market/sunnyflights.com"`) || !strings.Contains(body, `href="/market/sunnyflights.io"`) ||
		!strings.Contains(body, "2 names for sale containing “sunny”.") ||
		strings.Contains(body, "sunnyhidden") || strings.Contains(body, "sunnypending") || strings.Contains(body, "sunnysold") || strings.Contains(body, "2500") {
		t.Errorf("search = %d %s", search.Code, body)
	}
	if w := env.request("GET", "/market?q=%25", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `id="market-empty"`) {
		t.Errorf("a search for %% = %d, want no names (it is not a wildcard)", w.Code)
	}
	name := env.request("GET", "/market/SunnyFlights.com", "")
	if name.Code != 200 || !strings.Contains(name.Body.String(), `<h1 id="market-name">sunnyflights.com</h1>`) || strings.Contains(name.Body.String(), "2500") {
		t.Errorf("a listed name = %d %s", name.Code, name.Body)
	}
	if w := env.request("GET", "/market/sunnysold.com", ""); w.Code != 200 || !strings.Contains(w.Body.String(), "has been sold") {
		t.Errorf("a sold name = %d %s", w.Code, w.Body)
	}
	missing := env.request("GET", "/market/sunnyflights.net", "")
	if missing.Code != 404 || !strings.Contains(missing.Body.String(), "sunnyflights.net is not for sale") ||
		!strings.Contains(missing.Body.String(), `href="/market/sunnyflights.com"`) {
		t.Errorf("a name not listed = %d %s", missing.Code, missing.Body)
	}
	for _, path := range []string{"/market/sunnyhidden.com", "/market/not%20a%20name"} {
		if w := env.request("GET", path, ""); w.Code != 404 {
			t.Errorf("%s = %d, want 404", path, w.Code)
		}
	}
}
