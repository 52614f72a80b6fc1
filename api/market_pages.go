package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/models"
)

// marketPageSize is how many names the marketplace page shows.
const marketPageSize = 24

// marketPage is what the marketplace pages show: the search and its
// results, or one listed name.
type marketPage struct {
	Title, Query string
	Results      []marketName
	// Total is how many names match the search (Results are the newest).
	Total int64
	// Name is the listed name of a name's page; Missing the name asked
	// for when it is not listed.
	Name    *marketName
	Missing string
}

// marketName is a listed name as the pages show it: prices are for
// partners and holders of pricing:read, as in the API.
type marketName struct {
	Domain, TLD string
	Listed      string
	Sold        bool
}

func newMarketName(l models.Listing) marketName {
	return marketName{Domain: l.Domain, TLD: l.TLD, Listed: l.CreatedAt.UTC().Format(time.DateOnly), Sold: l.SoldAt != nil}
}

// marketSearchPage answers GET /market?q=: the live marketplace's names
// containing q (the newest when q is empty), where a referral link of a
// domain sends its visitors.
func (s *Server) marketSearchPage(c *gin.Context) {
	q := strings.ToLower(strings.TrimSpace(c.Query("q")))
	if len(q) > 253 {
		q = q[:253]
	}
	p := marketPage{Title: "Marketplace", Query: q}
	var err error
	if p.Results, p.Total, err = s.marketSearch(c, q); err != nil {
		s.resp.Error(c, err)
		return
	}
	s.render(c, http.StatusOK, "market.html", p)
}

// marketSearch returns the newest names for sale containing q, as GET
// /api/market/listings finds them, and how many there are in all.
func (s *Server) marketSearch(c *gin.Context, q string) ([]marketName, int64, error) {
	view, err := s.svc.Market.Listings(c.Request.Context(), market.Query{Q: q, Limit: marketPageSize}, false)
	if err != nil {
		return nil, 0, err
	}
	out := make([]marketName, len(view.Listings))
	for i, l := range view.Listings {
		out[i] = newMarketName(l)
	}
	return out, view.Total, nil
}

// marketNamePage answers GET /market/{domain}: one name of the live
// marketplace (also once sold), where a referral link of a product sends
// its visitors; 404 with a search for it when it is not listed.
func (s *Server) marketNamePage(c *gin.Context) {
	p := marketPage{Title: "Marketplace"}
	name, err := domainname.Parse(c.Param("domain"))
	if err != nil {
		p.Missing = c.Param("domain")
		s.render(c, http.StatusNotFound, "market.html", p)
		return
	}
	l, err := s.svc.Market.Name(c.Request.Context(), name.ASCII)
	if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
		// Names like it: those sharing its first label.
		p.Missing, p.Query = name.ASCII, strings.SplitN(name.ASCII, ".", 2)[0]
		if p.Results, p.Total, err = s.marketSearch(c, p.Query); err != nil {
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
	n := newMarketName(l)
	p.Name, p.Title = &n, n.Domain
	s.render(c, http.StatusOK, "market.html", p)
}
