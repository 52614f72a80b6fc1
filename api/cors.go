package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// CORS lets pages on other sites call the public endpoints (the read API,
// the free tools, batch, OAuth discovery and the token endpoints of public
// clients) from a browser: any origin, no cookies (Access-Control-Allow-
// Origin: *, never with credentials), the request headers those endpoints
// read, and the answer headers a client needs. Cookie-authenticated routes
// send no CORS headers, so browsers keep them to our own pages.
var (
	corsAllowHeaders  = strings.Join([]string{"Content-Type", "Authorization", HeaderIdempotencyKey, HeaderRequestID}, ", ")
	corsExposeHeaders = strings.Join([]string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
		"Retry-After", HeaderIdempotentReplayed, HeaderRequestID, "Location", "Link", "WWW-Authenticate", "Deprecation", "Sunset"}, ", ")
)

// corsMaxAge is how long a browser may keep a preflight's answer (seconds).
const corsMaxAge = "600"

// cors adds the CORS headers to a public route's answers to browsers (the
// requests that carry an Origin) and answers its preflight requests
// (OPTIONS with Access-Control-Request-Method). Other callers, servers and
// scripts, are sent none of them: nothing reads them there, and they were
// the longest headers of the smallest answers. Vary: Origin tells caches
// that the two kinds of answer differ.
func cors(c *gin.Context) {
	h := c.Writer.Header()
	preflight := c.Request.Method == http.MethodOptions
	if !preflight {
		h.Add("Vary", "Origin")
		if c.Request.Header.Get("Origin") == "" {
			c.Next()
			return
		}
	}
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	if preflight {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// publicRoutes registers the routes of the public surface: with CORS on
// them, and each path's preflight once.
type publicRoutes struct {
	r    gin.IRoutes
	seen map[string]bool
}

func (p *publicRoutes) handle(method, path string, handlers ...gin.HandlerFunc) {
	p.r.Handle(method, path, append([]gin.HandlerFunc{cors}, handlers...)...)
	if !p.seen[path] {
		p.seen[path] = true
		p.r.OPTIONS(path, cors)
	}
}
