package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// home answers GET /: what the service is, and where to go from here (the
// API reference, the OpenAPI document, sign-in, the dashboard, the probes).
func (s *Server) home(c *gin.Context) {
	s.render(c, http.StatusOK, "home.html", struct{ Title, Base string }{"Domain search API", s.base()})
}
