package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/opsauth"
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

// opsOnly lets through requests with the ops credentials.
func (s *Server) opsOnly(c *gin.Context) {
	if !s.ops.Check(c.Request) {
		c.Header("WWW-Authenticate", opsauth.Challenge)
		s.writeError(c, Errorf(http.StatusUnauthorized, "unauthorized", "ops credentials required"))
		return
	}
	c.Next()
}
