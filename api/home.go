package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// home answers GET /: what the service is, and where to go from here (the
// API reference, the OpenAPI document, sign-in, the ops pages, the queue
// dashboard where this process serves it, the probes).
func (s *Server) home(c *gin.Context) {
	s.render(c, http.StatusOK, "home.html", struct {
		Title, Base string
		Monitoring  bool
	}{"Domain search API", s.base(), s.monitoring})
}
