package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// MinSunsetNotice is the least time between an operation's deprecation and
// its removal (SPEC §8: at least 90 days).
const MinSunsetNotice = 90 * 24 * time.Hour

// Deprecation marks an operation on its way out. Its answers carry the
// Deprecation header (RFC 9745), Sunset (RFC 8594) once a removal date is
// set, and Link headers to the notes; the OpenAPI document marks it
// deprecated. The public surface is additive-only: an operation is removed
// only after its sunset, announced in CHANGELOG.md.
type Deprecation struct {
	Since      time.Time // when it was deprecated
	Sunset     time.Time // when it goes away; zero until decided
	Link       string    // what to use instead (rel="deprecation")
	SunsetLink string    // the removal's notice (rel="sunset"); optional
}

// check refuses a deprecation the spec does not allow.
func (d Deprecation) check() error {
	switch {
	case d.Since.IsZero():
		return fmt.Errorf("no deprecation date")
	case d.Link == "":
		return fmt.Errorf("no link to what replaces it")
	case !d.Sunset.IsZero() && d.Sunset.Sub(d.Since) < MinSunsetNotice:
		return fmt.Errorf("sunset %s is less than 90 days after the deprecation on %s",
			d.Sunset.Format(time.DateOnly), d.Since.Format(time.DateOnly))
	}
	return nil
}

// deprecations lists the deprecated operations, by method and route as
// they appear in routes.go ("GET /api/pricing/tld"). None is deprecated
// today.
var deprecations = map[string]Deprecation{}

// deprecationHeaders announces the deprecation of the matched operation.
func (s *Server) deprecationHeaders(c *gin.Context) {
	d, ok := s.deprecations[c.Request.Method+" "+c.FullPath()]
	if ok {
		h := c.Writer.Header()
		h.Set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
		if !d.Sunset.IsZero() {
			h.Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
		}
		h.Add("Link", fmt.Sprintf(`<%s>; rel="deprecation"`, d.Link))
		if d.SunsetLink != "" {
			h.Add("Link", fmt.Sprintf(`<%s>; rel="sunset"`, d.SunsetLink))
		}
	}
	c.Next()
}
