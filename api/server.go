// Package api is the HTTP face of the service: the gin engine, its
// middleware and one file per resource of the public API. Errors become
// HTTP answers in api/httpjson, which the partner API shares.
package api

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/opsauth"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/services"
	"github.com/domaind/domaind/internal/signedtoken"
	"github.com/domaind/domaind/internal/tools"
)

// Deps is what the API is built from.
type Deps struct {
	Config *config.Config
	// Services are the service layer the handlers call.
	Services *services.Set
	Redis    redis.UniversalClient
	Outbox   *outbox.Outbox
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	// Check reports the health of the database and Redis by name.
	Check func(ctx context.Context) map[string]error
	// Monitoring, when set, is served under /monitoring (the dashboard, in `domaind all`).
	Monitoring http.Handler
	// Now is the clock of daily quotas; nil means time.Now.
	Now func() time.Time
	// Tools are the free tools of POST /api/tools/{slug}.
	Tools *tools.Registry
	// HealthOnly serves only /healthz, /readyz, /metrics and /monitoring:
	// the HTTP face of the worker, scheduler and dashboard roles.
	HealthOnly bool
}

// Server is the API's gin engine and what its handlers use.
type Server struct {
	cfg     *config.Config
	svc     *services.Set
	redis   redis.UniversalClient
	tools   *tools.Registry
	outbox  *outbox.Outbox
	metrics *metrics.Metrics
	log     *slog.Logger
	resp    httpjson.Responder
	check   func(ctx context.Context) map[string]error
	now     func() time.Time
	ops     opsauth.Credentials
	// opsLogins are the right ops logins lately seen (ops.go).
	opsLogins opsLogins
	// devices signs the cookies of browsers that signed in (auth.go).
	devices *signedtoken.Signer
	// monitoring says this process serves the queue dashboard.
	monitoring bool
	// deprecations are the deprecated operations (deprecation.go).
	deprecations map[string]httpjson.Deprecation
	engine       *gin.Engine
}

// New builds the engine with every route.
func New(d Deps) *Server {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		cfg:          d.Config,
		svc:          d.Services,
		redis:        d.Redis,
		monitoring:   d.Monitoring != nil,
		tools:        d.Tools,
		outbox:       d.Outbox,
		metrics:      d.Metrics,
		log:          d.Log,
		resp:         httpjson.Responder{Log: d.Log},
		check:        d.Check,
		now:          now,
		ops:          opsauth.Credentials{User: d.Config.OpsUser, Password: d.Config.OpsPassword},
		devices:      signedtoken.New(d.Config.SecretKey, "sign-in devices", "dv1."),
		deprecations: maps.Clone(deprecations),
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.RemoveExtraSlash = true
	if err := e.SetTrustedProxies(nil); err != nil { // client addresses are resolved by clientIdentity
		panic(err)
	}
	s.engine = e
	s.routes(d.Monitoring, d.HealthOnly)
	return s
}

// ServeHTTP makes the server an http.Handler. HEAD works wherever GET
// does: it is answered as the GET, headers and status, without the body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		s.engine.ServeHTTP(headWriter{w}, httpjson.AsGet(r))
		return
	}
	s.engine.ServeHTTP(w, r)
}

// headWriter answers a HEAD: what a GET writes, but the body.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

// Unwrap lets http.ResponseController reach the connection.
func (h headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
