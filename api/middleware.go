package api

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/console"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/httpserver"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
)

// HeaderRequestID carries the request id in both directions. A client's own
// id is kept when it is short and printable, so its logs and ours join.
const HeaderRequestID = "X-Request-Id"

// DefaultBodyLimit caps request bodies of routes that set no limit of their own.
const DefaultBodyLimit = 1 << 20

// printable reports whether s is 1 to maxLen printable ASCII characters without spaces.
func printable(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// requestID gives every request an id, in its context and response header.
func requestID(c *gin.Context) {
	id := c.GetHeader(HeaderRequestID)
	if !printable(id, 64) {
		id = requestid.New()
	}
	c.Header(HeaderRequestID, id)
	c.Request = c.Request.WithContext(requestid.With(c.Request.Context(), id))
	c.Next()
}

// securityHeaders are sent with every answer: no content-type sniffing (a
// JSON or NDJSON body is never run as a script or a page), no Referer
// leaving our pages (URLs may carry OAuth codes and states), and, when the
// service is served over https, HSTS. Pages add their own CSP (render).
func (s *Server) securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if s.servedOverHTTPS() {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	c.Next()
}

// accessLog logs each request once it is answered and records its latency.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	d := time.Since(start)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	s.metrics.ObserveHTTP(c.Request.Method, route, status, d)
	level := slog.LevelInfo
	switch {
	case route == "/healthz" || route == "/readyz" || route == "/metrics":
		level = slog.LevelDebug // probes; readyz logs its own failures
	case status >= 500:
		level = slog.LevelError
	}
	s.log.Log(c.Request.Context(), level, "http request",
		"method", c.Request.Method, "route", route, "status", status,
		"duration", d, "bytes", c.Writer.Size(), "client", httpjson.Client(c))
}

// recovery turns a panic in a handler into a logged 500.
func (s *Server) recovery(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.ErrorContext(c.Request.Context(), "handler panicked", "panic", r, "stack", string(debug.Stack()))
			s.resp.Error(c, fmt.Errorf("panic: %v", r))
		}
	}()
	c.Next()
}

// bodyLimits are the limits of the routes whose bodies may be larger than
// DefaultBodyLimit: the ops' CSV import.
var bodyLimits = map[string]int64{"/ops/listings/import": console.MaxImportBytes}

// routeBodyLimit caps each request's body at its route's limit
// (bodyLimits), DefaultBodyLimit for the others.
func (s *Server) routeBodyLimit(c *gin.Context) {
	n, ok := bodyLimits[c.FullPath()]
	if !ok {
		n = DefaultBodyLimit
	}
	s.bodyLimit(n)(c)
}

// bodyLimit caps the request body; reading past n fails with an error the
// error table answers with 413. A declared Content-Length over n is refused at once.
func (s *Server) bodyLimit(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			s.resp.Error(c, &http.MaxBytesError{Limit: n})
			return
		}
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		c.Next()
	}
}

// utf8Only refuses a request whose path, query or form body, decoded, is
// not UTF-8 or holds a NUL (400, in the route's error shape): every text
// the service stores or looks up is UTF-8 without NUL, and Postgres
// refuses to compare a column with bytes that are not (a failed query, a
// 500, where the caller sent a malformed request). JSON bodies are checked
// by httpjson.DecodeJSON (its decoder makes every string UTF-8). It runs
// after the body limit, and leaves a form body in place for the handler.
func (s *Server) utf8Only(c *gin.Context) {
	field := ""
	switch {
	case !models.Storable(c.Request.URL.Path):
		field = "path"
	case !utf8Values(c.Request.URL.Query()):
		field = "query"
	case isForm(c.Request):
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			s.resp.Error(c, err)
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		// Parsed as the handler's PostForm will be: what parses before an
		// error reaches the handler too. The body is in memory already, so
		// its files are parsed there: past a smaller limit they went to
		// temporary files, which no one removed for this copy.
		peek := c.Request.Clone(c.Request.Context())
		peek.Body = io.NopCloser(bytes.NewReader(body))
		peek.ParseMultipartForm(int64(len(body)))
		if !utf8Values(peek.PostForm) {
			field = "body"
		}
	}
	if field != "" { // on a page's route too, where a browser gets a page
		s.browsableError(c, fault.Invalid(field, "must be UTF-8 without NUL characters once its percent-escapes are decoded"))
		return
	}
	c.Next()
}

// isForm says r's body is a form, URL-encoded or multipart.
func isForm(r *http.Request) bool {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data"
}

// utf8Values reports whether every name and value of vs is UTF-8.
func utf8Values(vs url.Values) bool {
	for k, v := range vs {
		if !models.Storable(k) {
			return false
		}
		for _, x := range v {
			if !models.Storable(x) {
				return false
			}
		}
	}
	return true
}

// writeTimeout gives a route's answer d from now to be written, in place of
// the server's WriteTimeout (for routes that wait on slow work inline).
func writeTimeout(d time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		http.NewResponseController(c.Writer).SetWriteDeadline(time.Now().Add(d)) // unsupported in tests' recorders
		c.Next()
	}
}

// clientIdentity resolves the client address: the socket peer, unless the
// peer is a trusted proxy, in which case X-Forwarded-For is walked from the
// right past trusted hops. IPv6 clients are grouped by /64, since one
// subscriber usually holds a whole /64.
func clientIdentity(trusted []netip.Prefix) gin.HandlerFunc {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(c *gin.Context) {
		addr := peerAddr(c.Request.RemoteAddr)
		if addr.IsValid() && isTrusted(addr) {
			hops := strings.Split(strings.Join(c.Request.Header.Values("X-Forwarded-For"), ","), ",")
			for i := len(hops) - 1; i >= 0; i-- {
				a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
				if err != nil {
					break
				}
				addr = a.Unmap()
				if !isTrusted(addr) {
					break
				}
			}
		}
		httpjson.SetClient(c, httpserver.ClientKey(addr))
		c.Next()
	}
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}
