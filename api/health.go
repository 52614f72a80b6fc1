package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
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
