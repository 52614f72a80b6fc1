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
	"gorm.io/gorm"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/canary"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/domains"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/opsauth"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/search"
	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/internal/tools"
	"github.com/domaind/domaind/internal/webhook"
)

// Deps is what the API is built from.
type Deps struct {
	Config  *config.Config
	DB      *gorm.DB
	Redis   redis.UniversalClient
	Outbox  *outbox.Outbox
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// Check reports the health of the database and Redis by name.
	Check func(ctx context.Context) map[string]error
	// Monitoring, when set, is served under /monitoring (the dashboard, in `domaind all`).
	Monitoring http.Handler
	// Now is the clock of daily quotas; nil means time.Now.
	Now func() time.Time
	// Registry answers availability checks of the search.
	Registry registry.Provider
	// Passwords are the argon2id costs of new password hashes.
	Passwords password.Params
	// Tools are the free tools of POST /api/tools/{slug}.
	Tools *tools.Registry
	// Payments are the hosted checkout's card processors by environment;
	// nil means payment.Providers' defaults for the configuration.
	Payments map[string]payment.Provider
	// HealthOnly serves only /healthz, /readyz, /metrics and /monitoring:
	// the HTTP face of the worker, scheduler and dashboard roles.
	HealthOnly bool
}

// checkTimeout bounds one registry check of the search; a check that takes
// longer is reported as unknown.
const checkTimeout = 5 * time.Second

// catalogTTL is how old the in-memory TLD catalog may get: a TLD sync shows
// on the read endpoints within this time.
const catalogTTL = 5 * time.Second

// Server is the API's gin engine and what its handlers use.
type Server struct {
	cfg      *config.Config
	redis    redis.UniversalClient
	tools    *tools.Registry
	outbox   *outbox.Outbox
	limiter  *ratelimit.Limiter
	accounts *account.Service
	oauth    *oauth.Server
	idem     *idempotency.Store
	lookups  *lookup.Cache
	checker  *availability.Checker
	catalog  *catalog.Catalog
	search   *search.Service
	metrics  *metrics.Metrics
	log      *slog.Logger
	resp     httpjson.Responder
	check    func(ctx context.Context) map[string]error
	now      func() time.Time
	ops      opsauth.Credentials
	// partners, inventory, webhooks, orders and checkout serve the partner
	// API (api/partner), the ops routes around it and the checkout page.
	partners  *partner.Service
	inventory *inventory.Service
	webhooks  *webhook.Service
	orders    *order.Service
	checkout  *checkout.Service
	// settlements are finance's settlement runs and the partners' statements.
	settlements *settlement.Service
	// payouts are what the service owes partners, marked paid by finance.
	payouts *payout.Service
	// payments are the hosted checkout's charges, as finance reconciles them.
	payments *payment.Book
	// market is the live marketplace's public listings.
	market *market.Service
	// domains are people's own domains, their bulk operations and carts.
	domains *domains.Service
	// whois runs WHOIS lookups on the worker and waits for them.
	whois *lookup.Queue
	// canaries are ops' canaries through the pipeline.
	canaries *canary.Service
	// jobs are the async free tools' jobs.
	jobs *tools.Jobs
	// inline runs the inline free tools, through their cache.
	inline *tools.Inline
	// brokerage is the partners' brokerage cases, worked by ops.
	brokerage *brokerage.Service
	// referrals is the affiliate program: links, clicks, attribution.
	referrals *referral.Service
	// deprecations are the deprecated operations (deprecation.go).
	deprecations map[string]Deprecation
	engine       *gin.Engine
}

// New builds the engine with every route.
func New(d Deps) *Server {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	if d.Passwords == (password.Params{}) {
		d.Passwords = password.Default
	}
	s := &Server{
		cfg:      d.Config,
		redis:    d.Redis,
		tools:    d.Tools,
		outbox:   d.Outbox,
		limiter:  ratelimit.New(d.Redis, now),
		accounts: account.New(d.DB, d.Passwords, now),
		oauth:    oauth.New(d.DB, now, resources(d.Config)),
		idem:     idempotency.New(d.Redis, secret.NewSealer(d.Config.SecretKey, "idempotency records")),
		lookups:  lookup.NewCache(d.Redis),
		checker:  availability.New(d.Registry, d.Redis, checkTimeout),
		catalog:  catalog.New(d.DB, catalogTTL),
		market:   market.New(d.DB, d.Config.SecretKey),
		metrics:  d.Metrics,
		log:      d.Log,
		resp:     httpjson.Responder{Log: d.Log},
		check:    d.Check,
		now:      now,
		ops:      opsauth.Credentials{User: d.Config.OpsUser, Password: d.Config.OpsPassword},

		partners:  partner.New(d.DB, d.Config.SecretKey, now),
		inventory: inventory.New(d.DB, now),
		webhooks:  webhook.New(d.DB, d.Config.SecretKey, d.Config.FetchAllowCIDRs, now),
		orders: order.New(d.DB, d.Outbox, d.Config.SecretKey,
			order.Options{QuoteTTL: d.Config.QuoteTTL, ReviewThresholdCents: d.Config.ReviewThresholdCents, QuoteHoldLimit: d.Config.QuoteHoldLimit}, now),

		deprecations: maps.Clone(deprecations),
	}
	s.settlements = settlement.New(d.DB, d.Outbox, s.orders, d.Config.SettlementPeriod, d.Config.SecretKey, now)
	s.payouts = payout.New(d.DB, d.Config.SecretKey, now)
	s.brokerage = brokerage.New(d.DB, d.Outbox, s.checker, s.inventory, brokerage.Options{BaseURL: s.base(), SecretKey: d.Config.SecretKey}, now)
	s.referrals = referral.New(d.DB, s.inventory, referral.Options{BaseURL: s.base(), SecretKey: d.Config.SecretKey}, now)
	if d.Payments == nil {
		d.Payments = payment.Providers(d.DB, d.Config.Embedded(), payment.SandboxOptions{})
	}
	s.canaries = canary.New(d.DB, d.Outbox)
	s.jobs = tools.NewJobs(d.DB, d.Outbox, now)
	s.inline = tools.NewInline(d.Tools, d.Redis, s.log)
	s.whois = lookup.NewQueue(d.DB, d.Outbox, s.lookups)
	s.domains = domains.New(d.DB, d.Outbox, s.catalog, d.Config.SecretKey, d.Log, now)
	s.payments = payment.NewBook(d.DB, d.Outbox, d.Payments, d.Config.SecretKey, d.Log, now)
	s.checkout = checkout.New(d.DB, s.orders, checkout.Options{BaseURL: s.base(), SecretKey: d.Config.SecretKey,
		Providers: d.Payments, Referrals: s.referrals}, now)
	s.search = search.New(s.searchDeps())
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

// searchDeps are what the server's search is built from.
func (s *Server) searchDeps() search.Deps {
	return search.Deps{Checker: s.checker, Catalog: s.catalog, Market: s.market, Lookups: s.lookups, Whois: s.whois,
		Limiter: s.limiter, TLDs: s.cfg.SearchTLDs, Log: s.log}
}

// Close stops the work the server runs after its responses (the search's
// warm-ups) and waits for it. Call it once the http.Server has shut down.
func (s *Server) Close() error {
	s.search.Close()
	s.inventory.Close()
	return nil
}

// ServeHTTP makes the server an http.Handler. HEAD works wherever GET
// does: it is answered as the GET, headers and status, without the body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		s.engine.ServeHTTP(headWriter{w}, get)
		return
	}
	s.engine.ServeHTTP(w, r)
}

// headWriter answers a HEAD: what a GET writes, but the body.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

// Unwrap lets http.ResponseController reach the connection.
func (h headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
