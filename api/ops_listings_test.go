package api

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/domaind/domaind/dashboard/console"
	"github.com/domaind/domaind/models"
)

// Ops manage the live marketplace's names on the listings page in a real
// browser: list one with prices typed in dollars, change its price (a
// floor above the price refused in words, nothing changed), import a CSV
// whose bad line is reported by number, and withdraw the name.
func TestBrowserOpsListings(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := opsChromium(t)
	text := pageText(t, ctx)
	listing := func(domain string) (l models.Listing, found bool) {
		t.Helper()
		err := env.db.Where("domain = ?", domain).Limit(1).Find(&l).Error
		if err != nil {
			t.Fatal(err)
		}
		return l, l.ID != ""
	}
	// submit acts on a fresh page (no notice on it yet) and waits for the
	// answer's notice or error.
	submit := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		all := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + "/ops/listings"), chromedp.WaitVisible(chromedp.CSS("#listings"))}, steps...)
		if err := chromedp.Do(ctx, chromedp.Steps(append(all, chromedp.WaitVisible(chromedp.CSS(".notice, .error")))...)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	submit("listing a name", chromedp.Evaluate[chromedp.Void](`document.querySelector("#add-listing").closest("details").open = true`),
		chromedp.SendKeys(chromedp.CSS("#new-domain"), "harborview.com"),
		chromedp.SendKeys(chromedp.CSS("#new-bin"), "1,250.50"),
		chromedp.SendKeys(chromedp.CSS("#new-floor"), "900"),
		chromedp.Click(chromedp.CSS("#add-listing button")))
	l, ok := listing("harborview.com")
	if !ok || *l.BINCents != 125_050 || *l.FloorCents != 90_000 || !l.Approved || !l.MarketplaceVisible {
		t.Fatalf("listed = %+v (found %t), want 125050 and 90000 cents, in the marketplace", l, ok)
	}
	checkPage(t, ctx, "ops-listings")
	row := `tr[id="` + l.ID + `"]` // ids are UUIDs, which may start with a digit
	if got := text(row); !strings.Contains(got, "1,250.50 USD") {
		t.Errorf("the new row = %q", got)
	}
	price := func(bin, floor string) {
		t.Helper()
		submit("pricing "+bin, setInput(row+` .set-price input[name="bin"]`, bin),
			setInput(row+` .set-price input[name="floor"]`, floor), chromedp.Click(chromedp.CSS(row+" .set-price button")))
	}
	price("1000", "1200")
	if got := text(".error"); !strings.Contains(got, "floor") {
		t.Errorf("a floor above the price shows %q", got)
	}
	if l, _ := listing("harborview.com"); *l.BINCents != 125_050 {
		t.Errorf("a refused price changed it to %d", *l.BINCents)
	}
	price("1100", "")
	if l, _ := listing("harborview.com"); *l.BINCents != 110_000 || l.FloorCents != nil {
		t.Errorf("prices after the change = %v, %v; want 110000 and no floor", *l.BINCents, l.FloorCents)
	}

	csvFile := filepath.Join(t.TempDir(), "names.csv")
	if err := os.WriteFile(csvFile, []byte("domain,bin_cents,floor_cents\nimported-one.com,5000,\nnot a name,100,\nimported-two.io,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	submit("importing", chromedp.Evaluate[chromedp.Void](`document.querySelector("#import").closest("details").open = true`),
		chromedp.SetUploadFiles(chromedp.CSS("#import-file"), []string{csvFile}), chromedp.Click(chromedp.CSS("#import button")))
	if got := text(".notice"); got != "2 names listed in live, 1 lines not" {
		t.Errorf("the import's notice = %q", got)
	}
	if got := text("#import-failures tbody"); !strings.HasPrefix(got, "3") || !strings.Contains(got, "not a name") {
		t.Errorf("the import's failures = %q, want line 3 with its reason", got)
	}
	for _, d := range []string{"imported-one.com", "imported-two.io"} {
		if _, ok := listing(d); !ok {
			t.Errorf("%s was not imported", d)
		}
	}

	submit("withdrawing", chromedp.Click(chromedp.CSS(row+" .withdraw button")))
	if _, ok := listing("harborview.com"); ok {
		t.Error("the withdrawn name is still listed")
	}
	if hits, err := env.srv.svc.Inventory.Search(context.Background(), models.EnvLive, "harbor view"); err != nil || len(hits) != 0 {
		t.Errorf("partner search after withdrawing = %+v, %v", hits, err)
	}
}

// The import page takes files up to its own limit (4 MiB), past the 1 MiB
// of other bodies: a file over a mebibyte is answered by the page, in
// words, not refused as too large.
func TestOpsImportTakesFilesOverAMebibyte(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	csv := "domain,bin_cents,floor_cents\n" + strings.Repeat("a-name-long-enough-to-fill-a-mebibyte-soon.com,5000,\n", 25_000)
	if len(csv) <= 1<<20 || len(csv) > console.MaxImportBytes {
		t.Fatalf("the file is %d bytes; the test needs one between 1 and 4 MiB", len(csv))
	}
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	form.WriteField("environment", models.EnvSandbox)
	file, _ := form.CreateFormFile("file", "names.csv")
	file.Write([]byte(csv))
	form.Close()
	r := httptest.NewRequest("POST", "/ops/listings/import", &body)
	r.Header.Set("Content-Type", form.FormDataContentType())
	r.SetBasicAuth("ops", "ops-secret")
	w := env.do(r)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "at most 10000") {
		t.Errorf("a %d-byte import of 25000 names = %d %.300s; want the page saying at most 10000 names", len(csv), w.Code, w.Body)
	}
}
