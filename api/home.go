package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/search"
)

// homePage is what the home page shows: the search box, the results of
// a search asked by GET /search (the page without JavaScript), and where
// to go from here.
type homePage struct {
	Title, Base, Query, Error string
	Monitoring                bool
	// Searched says Rows answer Query (the results table shows).
	Searched bool
	Rows     []searchPageRow
}

// searchPageRow is a search row as the page shows it (search.js writes
// the same cells from the stream's rows).
type searchPageRow struct {
	Domain, Name, State, Label, Price, Market string
}

// home answers GET /: the search box, and where to go from here (the API
// reference, the OpenAPI document, sign-in, the ops pages, the queue
// dashboard where this process serves it, the probes).
func (s *Server) home(c *gin.Context) {
	s.renderHome(c, http.StatusOK, s.homePage())
}

func (s *Server) homePage() homePage {
	return homePage{Title: "Domain search", Base: s.base(), Monitoring: s.monitoring}
}

// renderHome writes the home page, which runs search.js: with it a search
// streams its rows into the page as POST /api/domain/search sends them.
func (s *Server) renderHome(c *gin.Context, status int, view homePage) {
	if err := page.RenderScripted(c.Writer, status, "home.html", view); err != nil {
		s.log.ErrorContext(c.Request.Context(), "render page", "page", "home.html", "err", err)
	}
}

// searchPage answers GET /search?q=: the home page with every row of the
// search at once, as a browser without JavaScript asks for it, under the
// search's rate limit; a refused query shows on the page in words.
func (s *Server) searchPage(c *gin.Context) {
	view := s.homePage()
	view.Query = strings.TrimSpace(c.Query("q"))
	if view.Query == "" {
		c.Redirect(http.StatusSeeOther, "/")
		return
	}
	client := httpjson.Client(c)
	_, err := s.spend(c, searchLimit, client)
	var rows []search.Row
	if err == nil {
		rows, err = s.svc.Search.Rows(c.Request.Context(), view.Query, false, client)
	}
	status := http.StatusOK
	if err != nil {
		status, view.Error = s.formError(c, err)
	}
	view.Searched = err == nil
	for _, r := range rows {
		row := searchPageRow{Domain: r.Domain, Name: r.DomainUnicode, State: r.State, Label: r.StateLabel}
		if r.Price != nil && r.Price.RegisterCents != nil && r.Available {
			row.Price = page.Money(r.Price.Currency, *r.Price.RegisterCents) + " a year"
		}
		if r.Listing != nil {
			row.Market = "/market/" + r.Domain
		}
		view.Rows = append(view.Rows, row)
	}
	s.renderHome(c, status, view)
}
