package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/models"
)

// opsListingsPageData is what the ops listings page shows.
type opsListingsPageData struct {
	Title, Error, Done string
	// The filters as asked.
	Environment, Query string
	Environments       []string
	Listings           []opsListingRow
	// Imported is what an import just did.
	Imported *inventory.ImportResult
	// Next is the link to the next page ("" on the last).
	Next string
}

// opsListingRow is a listing as a row of the page, its prices in dollars
// as the forms take them.
type opsListingRow struct {
	ID, Domain, BIN, Floor, Price, Created, Sold string
}

// MaxImportBytes bounds an uploaded import (MaxImportLines lines of a
// long name and two prices fit in it); the API lets its route's bodies
// grow so far.
const MaxImportBytes = 4 << 20

// opsListingsPage answers GET /ops/listings: an environment's listings
// (live unless environment=sandbox), newest first, filtered by a part of
// the name, with forms to add one, change a price, withdraw one and
// import a CSV, as the ops API's listing routes do.
func (con *Console) opsListingsPage(c *gin.Context) {
	con.renderOpsListings(c, http.StatusOK, opsListingsPageData{Environment: c.Query("environment"), Query: c.Query("q"), Done: con.notice(c)})
}

// renderOpsListings shows the listings of view's environment (live when
// none) and name filter, with status beside what view says.
func (con *Console) renderOpsListings(c *gin.Context, status int, view opsListingsPageData) {
	view.Title, view.Environments = "Listings", []string{models.EnvLive, models.EnvSandbox}
	view.Environment = cmp.Or(view.Environment, models.EnvLive)
	limit, err := httpjson.PageLimit(c)
	var listings []inventory.Managed
	var next string
	if err == nil {
		listings, next, err = con.svc.Inventory.List(c.Request.Context(), view.Environment, view.Query, c.Query("cursor"), limit)
	}
	if err != nil && view.Error == "" {
		status, view.Error = con.problem(c, err)
	}
	dollars := func(cents *int64) string {
		if cents == nil {
			return ""
		}
		return fmt.Sprintf("%d.%02d", *cents/100, *cents%100)
	}
	for _, l := range listings {
		row := opsListingRow{ID: l.ID, Domain: l.Domain, BIN: dollars(l.BINCents), Floor: dollars(l.FloorCents), Created: l.CreatedAt.UTC().Format(page.Time)}
		if l.BINCents != nil {
			row.Price = page.Money(l.Currency, *l.BINCents)
		}
		if l.SoldAt != nil {
			row.Sold = l.SoldAt.UTC().Format(page.Time)
		}
		view.Listings = append(view.Listings, row)
	}
	view.Next = page.Older(c.Request.URL.Query(), "/ops/listings", next, "environment", "q")
	con.render(c, status, "ops_listings.html", view)
}

// formPrices reads the buy-it-now price and floor typed in dollars; an
// empty one is none.
func formPrices(c *gin.Context) (bin, floor *int64, err error) {
	read := func(field, form string) (*int64, error) {
		v := c.PostForm(form)
		if v == "" {
			return nil, nil
		}
		cents, err := formCents(field, v)
		return &cents, err
	}
	if bin, err = read("bin_cents", "bin"); err == nil {
		floor, err = read("floor_cents", "floor")
	}
	return bin, floor, err
}

// opsListingSubmit answers the page's forms that add, price and withdraw
// a listing: back to the page of its environment (303) saying what was
// done, or the page with what went wrong.
func (con *Console) opsListingSubmit(c *gin.Context) {
	ctx, env, id := c.Request.Context(), c.PostForm("environment"), c.Param("id")
	var done string
	bin, floor, err := formPrices(c)
	if err == nil {
		switch cmp.Or(c.Param("action"), "add") { // POST /ops/listings adds one
		case "add":
			var it inventory.Item
			if it, err = con.svc.Inventory.Add(ctx, env, c.PostForm("domain"), bin, floor); err == nil {
				done = fmt.Sprintf("%s listed in %s", it.Domain, env)
			}
		case "price":
			if err = con.svc.Inventory.SetPrices(ctx, env, id, bin, floor); err == nil {
				done = fmt.Sprintf("%s: prices changed", c.PostForm("domain"))
			}
		case "withdraw":
			if err = con.svc.Inventory.Remove(ctx, env, id); err == nil {
				done = fmt.Sprintf("%s withdrawn from %s", c.PostForm("domain"), env)
			}
		default:
			err = fault.New(fault.NotFound, "%q is not a change of a listing", c.Param("action"))
		}
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsListings(c, status, opsListingsPageData{Environment: env, Error: problem})
		return
	}
	con.done(c, "/ops/listings?"+url.Values{"environment": {env}}.Encode(), done)
}

// opsListingImport answers the page's import form: the page of the
// environment with what the CSV listed and each line it could not.
func (con *Console) opsListingImport(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, MaxImportBytes)
	env := c.PostForm("environment")
	f, err := c.FormFile("file")
	if err != nil {
		con.renderOpsListings(c, http.StatusBadRequest, opsListingsPageData{Environment: env,
			Error: fmt.Sprintf("Choose a CSV file of at most %d MiB to import.", MaxImportBytes>>20)})
		return
	}
	file, err := f.Open()
	var res inventory.ImportResult
	if err == nil {
		defer file.Close()
		res, err = con.svc.Inventory.Import(c.Request.Context(), env, file)
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsListings(c, status, opsListingsPageData{Environment: env, Error: problem})
		return
	}
	con.renderOpsListings(c, http.StatusOK, opsListingsPageData{Environment: env, Imported: &res,
		Done: fmt.Sprintf("%d names listed in %s, %d lines not", res.Added, env, len(res.Failed))})
}
