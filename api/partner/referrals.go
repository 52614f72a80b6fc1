package partner

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/referral"
)

// requireAffiliate refuses the referral endpoints to a partner that is
// not an affiliate (403 forbidden, saying so).
func (a *API) requireAffiliate(c *gin.Context) {
	if err := a.Referrals.RequireAffiliate(c.Request.Context(), credential(c).PartnerID); err != nil {
		a.resp.Error(c, err)
		return
	}
	c.Next()
}

// createLink answers POST /links {kind, target?}: 201 with the new link.
func (a *API) createLink(c *gin.Context) error {
	var req referral.NewLink
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	cred := credential(c)
	l, err := a.Referrals.CreateLink(c.Request.Context(), cred.PartnerID, cred.Environment, req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, l)
	return nil
}

// listLinks answers GET /links: the partner's links with their clicks,
// sales and commission.
func (a *API) listLinks(c *gin.Context) error {
	cred := credential(c)
	links, err := a.Referrals.Links(c.Request.Context(), cred.PartnerID, cred.Environment)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"links": httpjson.NonNil(links)})
	return nil
}

// window reads from and to (dates or RFC 3339 times) as a window of whole
// days.
func (a *API) window(c *gin.Context) (referral.Window, error) {
	from, err := timeParam(c, "from", false)
	if err != nil {
		return referral.Window{}, err
	}
	to, err := timeParam(c, "to", true)
	if err != nil {
		return referral.Window{}, err
	}
	return referral.NewWindow(from, to, a.Now())
}

// getClicks answers GET /me/clicks?from=&to=: counted clicks in total and
// per day.
func (a *API) getClicks(c *gin.Context) error {
	w, err := a.window(c)
	if err != nil {
		return err
	}
	cred := credential(c)
	r, err := a.Referrals.Clicks(c.Request.Context(), cred.PartnerID, cred.Environment, w)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}

// listReferredSales answers GET /me/sales?from=&to=: the sales the
// partner's links brought, newest first, with limit and cursor.
func (a *API) listReferredSales(c *gin.Context) error {
	w, err := a.window(c)
	if err != nil {
		return err
	}
	limit, err := httpjson.IntParam(c, "limit", referral.DefaultLimit, 1, referral.MaxLimit)
	if err != nil {
		return err
	}
	cred := credential(c)
	sales, next, err := a.Referrals.Sales(c.Request.Context(), cred.PartnerID, cred.Environment, w, limit, c.Query("cursor"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"sales": httpjson.NonNil(sales), "next_cursor": httpjson.Nullable(next)})
	return nil
}

// listCommissions answers GET /me/commissions?from=&to=: the partner's
// commission lines, oldest first, each with the balance after it, with
// the window's totals.
func (a *API) listCommissions(c *gin.Context) error {
	w, err := a.window(c)
	if err != nil {
		return err
	}
	limit, err := httpjson.IntParam(c, "limit", referral.DefaultLimit, 1, referral.MaxLimit)
	if err != nil {
		return err
	}
	cred := credential(c)
	lines, next, totals, err := a.Referrals.Commissions(c.Request.Context(), cred.PartnerID, cred.Environment, w, limit, c.Query("cursor"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"commissions": httpjson.NonNil(lines), "next_cursor": httpjson.Nullable(next),
		"totals": httpjson.NonNil(totals)})
	return nil
}

// getAnalytics answers GET /analytics?from=&to=: the referral funnel.
func (a *API) getAnalytics(c *gin.Context) error {
	w, err := a.window(c)
	if err != nil {
		return err
	}
	cred := credential(c)
	r, err := a.Referrals.Analytics(c.Request.Context(), cred.PartnerID, cred.Environment, w)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}
