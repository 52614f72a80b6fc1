package partner

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/brokerage"
)

// getEligibility answers GET /brokerage/eligibility?domain=: can the
// domain be brokered; pending while its site is looked at.
func (a *API) getEligibility(c *gin.Context) error {
	e, err := a.Brokerage.Eligibility(c.Request.Context(), credential(c).Environment, c.Query("domain"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, e)
	return nil
}

// budgetCentsDeprecation is that of POST /brokerage's budget_cents, the
// old name of budget.
var budgetCentsDeprecation = httpjson.Deprecation{Since: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC),
	Link: "/docs#op-partnerOpenBrokerageCase"}

// createCase answers POST /brokerage: a case opened for the partner's
// buyer, with its progress link.
func (a *API) createCase(c *gin.Context) error {
	var body brokerage.NewCase
	if err := httpjson.DecodeJSON(c, &body, false); err != nil {
		return err
	}
	if body.BudgetCentsDeprecated() {
		budgetCentsDeprecation.Announce(c.Writer.Header())
	}
	cred := credential(c)
	v, err := a.Brokerage.Open(c.Request.Context(), cred.PartnerID, cred.Environment, body)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, v)
	return nil
}

// getCase answers GET /brokerage/{case_id}: one of the partner's cases
// with its timeline.
func (a *API) getCase(c *gin.Context) error {
	cred := credential(c)
	v, err := a.Brokerage.Get(c.Request.Context(), cred.PartnerID, cred.Environment, c.Param("case_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, v)
	return nil
}

// listCases answers GET /brokerage: the partner's cases in its
// environment and their outcomes, newest first.
func (a *API) listCases(c *gin.Context) error {
	cred := credential(c)
	f := brokerage.Filter{PartnerID: cred.PartnerID, Environment: cred.Environment, Status: c.Query("status"), Cursor: c.Query("cursor")}
	var err error
	if f.Limit, err = httpjson.PageLimit(c); err != nil {
		return err
	}
	cases, next, err := a.Brokerage.List(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"cases": cases, "next_cursor": httpjson.Nullable(next)})
	return nil
}
