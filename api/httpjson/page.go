package httpjson

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
)

// Page sizes and the deepest offset of the lists (SPEC §2.3, §8); past
// MaxOffset a list is walked with cursors.
const (
	DefaultLimit = 24
	MaxLimit     = 200
	MaxOffset    = 1_000_000
)

// Page is the paging block of a list (SPEC §2.3).
type Page struct {
	Limit      int     `json:"limit"`
	Offset     int     `json:"offset"`
	Total      int64   `json:"total"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// ParsePaging reads the limit, offset and cursor parameters.
func ParsePaging(c *gin.Context) (limit, offset int, cursor string, err error) {
	if limit, err = IntParam(c, "limit", DefaultLimit, 1, MaxLimit); err != nil {
		return 0, 0, "", err
	}
	if v, ok := c.GetQuery("offset"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxOffset {
			return 0, 0, "", fault.Invalid("offset", "must be an integer from 0 to %d (walk further with next_cursor)", MaxOffset)
		}
		offset = n
	}
	return limit, offset, c.Query("cursor"), nil
}

// IntParam reads the integer query parameter name, def when it is absent;
// one outside lo..hi is a validation error naming it.
func IntParam(c *gin.Context, name string, def, lo, hi int) (int, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fault.Invalid(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// PageLimit reads the limit of a cursor-paged list (the partner API's
// and the ops'): pagecursor.DefaultLimit when absent, at most
// pagecursor.MaxLimit.
func PageLimit(c *gin.Context) (int, error) {
	return IntParam(c, "limit", pagecursor.DefaultLimit, 1, pagecursor.MaxLimit)
}

// NextLink sends the RFC 8288 Link header of a page's next page: the same
// request, at base, with the cursor in place of any offset.
func NextLink(c *gin.Context, base, cursor string) {
	q := c.Request.URL.Query()
	q.Del("offset")
	q.Set("cursor", cursor)
	c.Writer.Header().Add("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, base, c.Request.URL.Path, q.Encode()))
}

// Nullable is s, or null (nil) when empty: a next_cursor after the last page.
func Nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NonNil is s, or an empty slice for nil, so that a list is [] in JSON.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// TimeParam reads the query parameter name, an RFC 3339 time or a date
// (nil when absent); a date as an end bound means the end of that day.
func TimeParam(c *gin.Context, name string, end bool) (*time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return &t, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return nil, fault.Invalid(name, "must be an RFC 3339 time (2026-11-25T12:00:00Z) or a date (2026-11-25)")
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return &t, nil
}
