package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
)

// whoisQuota is SPEC §8's anonymous WHOIS quota.
var whoisQuota = ratelimit.PerDay("whois", 10)

type whoisRequest struct {
	Domain *string `json:"domain"`
}

// whoisResponse is SPEC §2.6.
type whoisResponse struct {
	Lookup    whoisLookup `json:"lookup"`
	Used      int         `json:"used"`
	Cap       int         `json:"cap"`
	Remaining int         `json:"remaining"`
}

type whoisLookup struct {
	ID        string            `json:"id"`
	Domain    string            `json:"domain"`
	Result    domaininfo.Result `json:"result"`
	CreatedAt time.Time         `json:"created_at"`
}

// createWhoisLookup answers POST /api/tools/whois: the cached answer of the
// last hour, or a new lookup run on the rdap queue and waited for. The name
// looked up is the registrable domain of the input (www.example.com asks
// about example.com).
func (s *Server) createWhoisLookup(c *gin.Context) error {
	var req whoisRequest
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	if req.Domain == nil || strings.TrimSpace(*req.Domain) == "" {
		return fault.Invalid("domain", "is required")
	}
	name, err := domainname.Parse(*req.Domain)
	if err != nil {
		return fault.InvalidErr("domain", err)
	}
	a, failed, err := s.svc.Whois.LookUp(c.Request.Context(), name.Registrable)
	if failed {
		refundQuota(c)
	}
	if err != nil {
		return err
	}
	q := c.MustGet(quotaCtxKey).(ratelimit.Result)
	c.JSON(http.StatusCreated, whoisResponse{
		Lookup: whoisLookup{ID: a.LookupID, Domain: a.Domain, Result: a.Record.Result(), CreatedAt: a.CreatedAt},
		Used:   q.Used, Cap: q.Limit, Remaining: q.Remaining,
	})
	return nil
}
