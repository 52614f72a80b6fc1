package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/ratelimit"
)

// quotaCtxKey holds the ratelimit.Result of a route's DayQuota, for handlers
// that report used/cap/remaining in their body.
const quotaCtxKey = "domaind.quota"

// refundCtxKey marks a request whose DayQuota unit goes back although its
// status would keep it: the service, not the caller, failed.
const refundCtxKey = "domaind.refund_quota"

// refundQuota gives the request's DayQuota unit back when it ends.
func refundQuota(c *gin.Context) { c.Set(refundCtxKey, true) }

// refundBudgets bound, per client and day, the quota units given back for
// work that failed on our side after it had gone out (a lookup that RDAP
// and WHOIS both failed): without it, a client could make the service ask
// registries without end, each failure refunded.
var refundBudgets = map[string]ratelimit.Policy{
	whoisQuota.Name: ratelimit.PerDay("whois-refunds", 20),
}

// limit spends one unit of p for the client and sets the RateLimit headers.
// A refused request gets 429 with Retry-After. A DayQuota unit is given back
// when the request was refused before any work (a 400 or 413), and when the
// work failed on our side (a 5xx, or the handler says so with refundQuota)
// while the client's refund budget for p lasts.
func (s *Server) limit(p ratelimit.Policy) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		client := httpjson.Client(c)
		r, err := s.spend(c, p, client)
		if err != nil {
			s.resp.Error(c, err)
			return
		}
		if p.Kind != ratelimit.DayQuota {
			c.Next()
			return
		}
		c.Set(quotaCtxKey, r)
		c.Next()
		status := c.Writer.Status()
		refused := status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge
		failed := status >= 500 || c.GetBool(refundCtxKey)
		if refused || failed {
			s.giveBackQuota(ctx, p, client, r, refused)
		}
	}
}

// giveBackQuota gives back r, the unit of day quota p that client spent
// on a request that turned out not to count: always for one refused as
// invalid, and for one that failed on our side or the registries' while
// client's refund budget for p lasts.
func (s *Server) giveBackQuota(ctx context.Context, p ratelimit.Policy, client string, r ratelimit.Result, refused bool) {
	ctx = context.WithoutCancel(ctx)
	if budget, ok := refundBudgets[p.Name]; ok && !refused {
		if b, err := s.svc.Limiter.Allow(ctx, budget, client); err != nil || !b.Allowed {
			return // the unit stays spent
		}
	}
	if err := s.svc.Limiter.Refund(ctx, p, client, r); err != nil {
		s.log.WarnContext(ctx, "quota refund failed", "policy", p.Name, "err", err)
	}
}

// spend spends one unit of p for key and sets the RateLimit headers. It
// returns a 429 *Error (with Retry-After set) when the unit is refused.
func (s *Server) spend(c *gin.Context, p ratelimit.Policy, key string) (ratelimit.Result, error) {
	r, err := s.svc.Limiter.Allow(c.Request.Context(), p, key)
	if err != nil {
		return r, err
	}
	return r, rateHeaders(c, p, r)
}

// rateHeaders sets the RateLimit headers of r and returns the 429 error
// (with Retry-After set) when r is a refusal; the idempotency replay sends
// the same headers again.
func rateHeaders(c *gin.Context, p ratelimit.Policy, r ratelimit.Result) error {
	c.Set(policyCtxKey, p)
	return httpjson.RateHeaders(c.Writer.Header(), p, r)
}
