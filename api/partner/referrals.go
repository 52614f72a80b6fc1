package partner

import (
	"context"
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

// referralReport answers a referral report: get's answer to the query of the
// request (the credential's partner and environment, from and to, and
// for a paged report limit and cursor).
func referralReport[T any](a *API, paged bool, get func(context.Context, referral.Query) (T, error)) func(*gin.Context) error {
	return func(c *gin.Context) error {
		cred := credential(c)
		q := referral.Query{PartnerID: cred.PartnerID, Environment: cred.Environment, Cursor: c.Query("cursor")}
		from, err := httpjson.TimeParam(c, "from", false)
		if err != nil {
			return err
		}
		to, err := httpjson.TimeParam(c, "to", true)
		if err != nil {
			return err
		}
		if q.Window, err = referral.NewWindow(from, to, a.Now()); err != nil {
			return err
		}
		if paged {
			if q.Limit, err = httpjson.PageLimit(c); err != nil {
				return err
			}
		}
		r, err := get(c.Request.Context(), q)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, r)
		return nil
	}
}
