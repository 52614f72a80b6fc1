package api

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/models"
)

// marketPageSize is how many names the marketplace page shows.
const marketPageSize = 24

// marketPage is what the marketplace pages show: the search and its
// results, or one listed name.
type marketPage struct {
	Title, Query, Error string
	// TLD, Sort and Max are the search's other filters as asked; Sorts
	// what Sort can be.
	TLD, Sort, Max string
	Sorts          []string
	Results        []marketName
	// Total is how many names match the search; Next the link to the
	// page after Results ("" on the last).
	Total int64
	Next  string
	// Prices says prices show: to a signed-in person, as the API shows
	// them to a token holding pricing:read.
	Prices bool
	// Name is the listed name of a name's page; Missing the name asked
	// for when it is not listed; Bought thanks a buyer back from paying.
	Name            *marketName
	Missing, Bought string
	// CSRF is the Buy form's token.
	CSRF string
}

// marketName is a listed name as the pages show it; Price is set only
// when prices show ("" for a name that takes offers only).
type marketName struct {
	Domain, TLD string
	Listed      string
	Price       string
	Sold        bool
	// Buyable says it can be bought now at a buy-now price.
	Buyable bool
}

func newMarketName(l models.Listing, prices bool) marketName {
	n := marketName{Domain: l.Domain, TLD: l.TLD, Listed: l.CreatedAt.UTC().Format(time.DateOnly), Sold: l.SoldAt != nil,
		Buyable: l.SoldAt == nil && l.BINCents != nil}
	if prices && l.BINCents != nil {
		n.Price = page.Money(l.Currency, *l.BINCents)
	}
	return n
}

// marketSearchPage answers GET /market: the live marketplace's names, as
// GET /api/market/listings finds them (q, tld, sort, max, a page at a
// time), with prices for a signed-in person; a referral link of a domain
// sends its visitors here. A refused filter shows on the page in words.
func (s *Server) marketSearchPage(c *gin.Context) {
	dropEmptyParams(c) // the form sends every field, the empty ones too
	_, signedIn := currentUser(c)
	p := marketPage{Title: "Marketplace", Query: strings.ToLower(strings.TrimSpace(c.Query("q"))), TLD: c.Query("tld"), Sort: cmp.Or(c.Query("sort"), market.Sorts[0]),
		Max: c.Query("max"), Sorts: market.Sorts, Prices: signedIn}
	q, err := parseListingsQuery(c)
	if err == nil {
		if _, given := c.GetQuery("limit"); !given {
			q.Limit = marketPageSize
		}
		p.Results, p.Total, p.Next, err = s.marketSearch(c, q, signedIn)
	}
	status := http.StatusOK
	if err != nil {
		status, p.Error = s.formError(c, err)
	}
	s.render(c, status, "market.html", p)
}

// dropEmptyParams takes the query's empty parameters out, as if a form had
// not sent them.
func dropEmptyParams(c *gin.Context) {
	q := c.Request.URL.Query()
	for k, v := range q {
		if len(v) == 1 && v[0] == "" {
			q.Del(k)
		}
	}
	c.Request.URL.RawQuery = q.Encode()
}

// marketSearch returns the names for sale q picks, as GET
// /api/market/listings finds them, how many there are in all, and the
// link to the next page.
func (s *Server) marketSearch(c *gin.Context, q market.Query, prices bool) ([]marketName, int64, string, error) {
	view, err := s.svc.Market.Listings(c.Request.Context(), q, prices)
	if err != nil {
		return nil, 0, "", err
	}
	out := make([]marketName, len(view.Listings))
	for i, l := range view.Listings {
		out[i] = newMarketName(l, prices)
	}
	var next string
	if view.NextCursor != nil {
		next = page.Older(c.Request.URL.Query(), referral.MarketPath, *view.NextCursor, "q", "tld", "sort", "max", "limit")
	}
	return out, view.Total, next, nil
}

// marketNamePage answers GET /market/{domain}: one name of the live
// marketplace (also once sold), with a form to buy it at its buy-now
// price on the hosted checkout, where a referral link of a product sends
// its visitors; 404 with a search for it when it is not listed. Back from
// paying, it thanks the buyer with the order's status.
func (s *Server) marketNamePage(c *gin.Context) {
	s.renderMarketName(c, c.Param("domain"), http.StatusOK, "")
}

// renderMarketName shows the page of the name domain with status and, after
// a refused form, what went wrong.
func (s *Server) renderMarketName(c *gin.Context, domain string, status int, problem string) {
	_, signedIn := currentUser(c)
	p := marketPage{Title: "Marketplace", Prices: signedIn, Error: problem, CSRF: s.formCSRF(c)}
	name, err := domainname.Parse(domain)
	if err != nil {
		p.Missing = domain
		s.render(c, http.StatusNotFound, "market.html", p)
		return
	}
	l, err := s.svc.Market.Name(c.Request.Context(), name.ASCII)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		// Names like it: those sharing its first label.
		p.Missing, p.Query = name.ASCII, strings.SplitN(name.ASCII, ".", 2)[0]
		if p.Results, p.Total, p.Next, err = s.marketSearch(c, market.Query{Q: p.Query, Limit: marketPageSize}, signedIn); err != nil {
			s.resp.Error(c, err)
			return
		}
		s.render(c, http.StatusNotFound, "market.html", p)
		return
	}
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	n := newMarketName(l, signedIn)
	p.Name, p.Title = &n, n.Domain
	p.Bought = s.boughtHere(c, l)
	s.render(c, status, "market.html", p)
}

// boughtHere is the sentence that thanks a buyer back from paying for l on
// the hosted checkout (its return adds order_id), when that order is the
// house's sale of l; "" otherwise.
func (s *Server) boughtHere(c *gin.Context, l models.Listing) string {
	id := c.Query("order_id")
	if id == "" {
		return ""
	}
	o, err := s.svc.Orders.Ops(c.Request.Context(), id)
	if err != nil || o.PartnerID != models.HousePartnerID || o.Domain != l.Domain {
		return ""
	}
	return fmt.Sprintf("Thank you: your order %s for %s is %s. We start the transfer to you now; the email you gave will hear from us.",
		o.PublicID, o.Domain, strings.ToLower(strings.ReplaceAll(o.Status, "_", " ")))
}

// marketBuyLimit and marketBuyHourly bound the checkouts one client
// address opens from the marketplace pages: anyone may open one, and
// one whose buyer goes on to the processor's page holds its name from
// everyone else for as long as the page takes a payment
// (payment.PageHold, 35 minutes). Twenty an hour leave a buyer room to
// change their mind many times, and an address at most about a dozen
// names held at once, where ten a minute let it hold hundreds.
var (
	marketBuyLimit  = ratelimit.PerMinute("market-buy", 10)
	marketBuyHourly = ratelimit.PerHour("market-buy-hour", 20)
)

// marketBuySubmit answers a listed name's Buy form: a hosted checkout of
// the name at its buy-now price, sold by the house (models.HousePartnerID),
// to which the browser goes (303); back on the name's page after paying.
// A refusal (the name sold meanwhile, no price, no payment provider for
// live sales) shows on the name's page.
func (s *Server) marketBuySubmit(c *gin.Context) {
	name, err := domainname.Parse(c.Param("domain"))
	if err != nil {
		s.marketNamePage(c)
		return
	}
	if !s.validFormCSRF(c) {
		s.renderMarketName(c, name.ASCII, http.StatusForbidden, "The form expired. Please try again.")
		return
	}
	back := s.base() + referral.MarketPath + "/" + name.ASCII
	if _, err = s.spend(c, marketBuyLimit, httpjson.Client(c)); err == nil {
		_, err = s.spend(c, marketBuyHourly, httpjson.Client(c))
	}
	if err == nil {
		var cs checkout.Session
		cs, err = s.svc.Checkout.Create(c.Request.Context(), models.HousePartnerID, models.EnvLive,
			checkout.NewSession{Domain: name.ASCII, ReturnURL: back, CancelURL: back})
		if err == nil {
			c.Redirect(http.StatusSeeOther, cs.CheckoutURL)
			return
		}
	}
	status, problem := s.formError(c, err)
	s.renderMarketName(c, name.ASCII, status, problem)
}
