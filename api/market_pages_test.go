package api

import (
	"fmt"
	"regexp"
	"slices"
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

// A signed-in person sees prices and may filter by them; the pages sort,
// filter by TLD and page as GET /api/market/listings does, and a refused
// filter shows its reason on the page.
func TestMarketPagesForASignedInPerson(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for i, price := range []int64{90_000, 10_000, 50_000, 30_000, 70_000} {
		l := models.Listing{ID: models.NewID(), Domain: fmt.Sprintf("ocean%d.com", i), TLD: "com", Approved: true, MarketplaceVisible: true,
			Currency: "USD", BINCents: &price, CreatedAt: env.now.Add(time.Duration(i) * time.Minute)}
		if err := env.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := env.db.Create(&models.Listing{ID: models.NewID(), Domain: "ocean.io", TLD: "io", Approved: true, MarketplaceVisible: true,
		Currency: "USD", CreatedAt: env.now}).Error; err != nil {
		t.Fatal(err)
	}
	b := signedInBrowser(t, env, "buyer@example.com")
	names := regexp.MustCompile(`<li><a href="/market/([^"]+)">[^<]+</a>(?: <span class="price-inline">([^<]+)</span>)?`)
	list := func(path string) ([]string, string) {
		t.Helper()
		res, body := b.do("GET", path, "", "")
		if res.StatusCode != 200 {
			t.Fatalf("%s = %d %s", path, res.StatusCode, body)
		}
		var out []string
		for _, m := range names.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1]+" "+m[2])
		}
		return out, body
	}
	got, body := list("/market?q=ocean&tld=com&sort=price_asc&max=&limit=2")
	want := []string{"ocean1.com 100.00 USD", "ocean3.com 300.00 USD"}
	if !slices.Equal(got, want) || !strings.Contains(body, `id="max"`) {
		t.Fatalf("cheapest .com first, two a page = %q, want %q", got, want)
	}
	next := regexp.MustCompile(`href="(/market\?[^"]+)" rel="next"`).FindStringSubmatch(body)
	if next == nil {
		t.Fatalf("no link to the next page in %s", body)
	}
	if got, _ := list(strings.ReplaceAll(next[1], "&amp;", "&")); !slices.Equal(got, []string{"ocean2.com 500.00 USD", "ocean4.com 700.00 USD"}) {
		t.Errorf("the next page = %q", got)
	}
	if got, _ := list("/market?q=ocean&max=400"); !slices.Equal(got, []string{"ocean3.com 300.00 USD", "ocean1.com 100.00 USD"}) {
		t.Errorf("at most 400 dollars, newest first = %q", got)
	}
	if got, _ := list("/market/ocean.io"); len(got) != 0 {
		t.Errorf("a name's page lists %q", got)
	}
	if _, body := list("/market/ocean0.com"); !strings.Contains(body, `<p class="price" id="market-price">900.00 USD</p>`) {
		t.Errorf("a name's page for a signed-in person shows no price: %s", body)
	}
	if w := env.request("GET", "/market?q=ocean&max=400", ""); w.Code != 400 || !strings.Contains(w.Body.String(), `id="market-error"`) ||
		strings.Contains(w.Body.String(), "USD") {
		t.Errorf("a price filter without signing in = %d %s, want 400 with the reason and no prices", w.Code, w.Body)
	}
	res, body := b.do("GET", "/market?sort=cheapest", "", "")
	if res.StatusCode != 400 || !strings.Contains(body, "sort") {
		t.Errorf("a wrong sort = %d %s", res.StatusCode, body)
	}
}
