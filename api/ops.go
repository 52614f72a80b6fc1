package api

import (
	"context"
	"crypto/sha256"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/opsauth"
	"github.com/domaind/domaind/internal/ratelimit"
)

// opsFailureLimit bounds wrong ops logins per client address: the ops
// login opens the queues and every partner's data.
var opsFailureLimit = ratelimit.Policy{Name: "ops-failures", Kind: ratelimit.Rate, Limit: 10, Window: 15 * time.Minute}

var errCrossSite = &fault.Error{Code: fault.Forbidden,
	Message: "ops actions are taken from the service's own pages or from a program, not from another site"}

// opsOnly guards the dashboard (/monitoring) and the ops API (/api/ops):
//   - an unsafe method (anything but GET, HEAD, OPTIONS) must come from
//     this site, or from a program (sameOrigin): a browser sends the Basic
//     login it remembers with any site's form, so without this check
//     another site could pause a queue or approve a partner;
//   - the ops login (HTTP Basic) is checked, each wrong one counted per
//     client address before the check (so parallel guesses cannot slip
//     under the limit), and past opsFailureLimit refused unchecked; a
//     login the address has signed in with lately is not counted
//     (opsLogins);
//   - no answer is kept by a cache (no-store): ops' pages and downloads
//     hold every partner's data, payouts and bank references included.
func (s *Server) opsOnly(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	if !safeMethod(c.Request.Method) && !s.sameOrigin(c.Request) {
		s.resp.Error(c, errCrossSite)
		return
	}
	if _, _, ok := c.Request.BasicAuth(); !ok {
		c.Header("WWW-Authenticate", opsauth.Challenge)
		s.resp.Error(c, fault.New(fault.Unauthorized, "ops credentials required"))
		return
	}
	login := s.opsLogins.key(httpjson.Client(c), c.GetHeader("Authorization"))
	if s.opsLogins.known(login, s.now()) && s.ops.Check(c.Request) {
		s.opsLogins.remember(login, s.now()) // while the dashboard is in use
		c.Set(opsCtxKey, true)
		c.Next()
		return
	}
	ctx := c.Request.Context()
	failure, err := s.svc.Limiter.Allow(ctx, opsFailureLimit, httpjson.Client(c))
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	if !failure.Allowed {
		rateHeaders(c, opsFailureLimit, failure)
		s.resp.Error(c, fault.New(fault.RateLimited, "too many wrong ops logins from this address; retry after the Retry-After seconds"))
		return
	}
	if !s.ops.Check(c.Request) {
		c.Header("WWW-Authenticate", opsauth.Challenge)
		s.resp.Error(c, fault.New(fault.Unauthorized, "ops credentials are wrong"))
		return
	}
	if err := s.svc.Limiter.Refund(context.WithoutCancel(ctx), opsFailureLimit, httpjson.Client(c), failure); err != nil {
		s.log.WarnContext(ctx, "ops login unit not given back", "err", err)
	}
	s.opsLogins.remember(login, s.now())
	c.Set(opsCtxKey, true)
	c.Next()
}

// opsLogins remembers, for opsLoginMemory, the right ops logins and the
// client addresses that signed in with them. Every request of a dashboard
// carries the login, many at once, and each took a unit of the failures'
// limit until it was checked, so a dozen at once were refused as guesses;
// a remembered one is checked without the count. Only right logins are
// remembered, each with its address: an address that has not signed in is
// refused unchecked past the limit, whatever it sends.
type opsLogins struct {
	mu    sync.Mutex
	until map[[32]byte]time.Time
}

// opsLoginMemory is how long a right ops login is remembered.
const opsLoginMemory = 5 * time.Minute

// key names the login header sent from address.
func (l *opsLogins) key(address, header string) [32]byte {
	return sha256.Sum256([]byte(address + "\x00" + header))
}

func (l *opsLogins) known(k [32]byte, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Before(l.until[k])
}

// remember keeps k for opsLoginMemory, and forgets the expired ones once
// there are many (each is an address ops signed in from).
func (l *opsLogins) remember(k [32]byte, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until = map[[32]byte]time.Time{}
	}
	if len(l.until) >= 256 {
		maps.DeleteFunc(l.until, func(_ [32]byte, until time.Time) bool { return !now.Before(until) })
	}
	l.until[k] = now.Add(opsLoginMemory)
}

// opsCtxKey marks a request that passed the ops login.
const opsCtxKey = "domaind.ops"

// sameOrigin reports whether r comes from this site's own pages, or from
// a program rather than a browser. Browsers say where a request comes from
// with Sec-Fetch-Site (and Origin, on older ones); a request with neither
// header is not a browser's, so it cannot be a forged cross-site one.
func (s *Server) sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Scheme, s.cfg.BaseURL.Scheme) && strings.EqualFold(u.Host, s.cfg.BaseURL.Host)
}
