package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/referral"
)

// clickLimit bounds the clicks one address makes a minute: far above a
// person's, low enough that a flood of them costs little.
var clickLimit = ratelimit.PerMinute("referral-click", 120)

// followLink answers GET /r/{code}, a partner's referral link: the click
// is counted (once per visitor and hour; crawlers not at all), the
// attribution cookie set for referral.CookieTTL, and the visitor sent to
// the link's target. An unknown code is not_found.
func (s *Server) followLink(c *gin.Context) error {
	l, err := s.svc.Referrals.Click(c.Request.Context(), referral.Visit{Code: c.Param("code"), Address: httpjson.Client(c),
		UserAgent: c.Request.UserAgent()})
	if err != nil {
		return err
	}
	if l.Cookie != "" {
		s.setCookie(c, referral.CookieName, l.Cookie, s.now().Add(referral.CookieTTL))
	}
	c.Header("Cache-Control", "no-store") // every click must reach us to be counted
	c.Redirect(http.StatusFound, l.URL)
	return nil
}

// referralCookie is the request's attribution cookie, "" without one.
// Over https a click made before the cookies took the __Host- prefix
// still counts, under its plain name, so that no sale it led to loses its
// partner's commission. Its value is signed and names the click's time,
// which the referral service holds to CookieTTL, so the old name counts
// for nothing 30 days after the upgrade and can then go.
func (s *Server) referralCookie(c *gin.Context) string {
	if v := s.cookie(c, referral.CookieName); v != "" || !s.servedOverHTTPS() {
		return v
	}
	v, _ := c.Cookie(referral.CookieName)
	return v
}
