package api

import (
	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
)

// deprecations lists the deprecated operations, by method and route as
// they appear in routes.go ("GET /api/pricing/tld"). None is deprecated
// today.
var deprecations = map[string]httpjson.Deprecation{}

// deprecationHeaders announces the deprecation of the matched operation.
func (s *Server) deprecationHeaders(c *gin.Context) {
	if d, ok := s.deprecations[c.Request.Method+" "+c.FullPath()]; ok {
		d.Announce(c.Writer.Header())
	}
	c.Next()
}
