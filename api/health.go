package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
)

// healthz answers while the process is alive.
func (s *Server) healthz(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }

// readyz answers 200 when the database and Redis both answer, and 503
// naming the one that does not.
func (s *Server) readyz(c *gin.Context) {
	checks := gin.H{}
	status, code := "ok", http.StatusOK
	for name, err := range s.check(c.Request.Context()) {
		checks[name] = "ok"
		if err != nil {
			checks[name] = "unreachable"
			status, code = "unavailable", http.StatusServiceUnavailable
			s.log.WarnContext(c.Request.Context(), "readiness check failed", "dependency", name, "err", err)
		}
	}
	c.JSON(code, gin.H{"status": status, "checks": checks})
}

// metricsGuard keeps /metrics from the public in production: with
// DOMAIND_METRICS_TOKEN set it asks for that bearer token; without one it
// serves metrics only in the embedded mode (a machine of one's own), and
// production answers 404 saying how to turn them on.
func (s *Server) metricsGuard(c *gin.Context) {
	want := s.cfg.MetricsToken
	switch {
	case want != "":
		scheme, got, _ := strings.Cut(c.GetHeader("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="domaind metrics"`)
			s.resp.Error(c, fault.New(fault.Unauthorized, "metrics need the bearer token of DOMAIND_METRICS_TOKEN"))
			return
		}
	case !s.cfg.Embedded():
		s.resp.Error(c, fault.New(fault.NotFound, "metrics are off: set DOMAIND_METRICS_TOKEN and scrape with it as a bearer token"))
		return
	}
	c.Next()
}
