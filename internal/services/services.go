// Package services builds the service layer from the platform's
// connections: one Set per process, which the HTTP API, the MCP server,
// the console pages and the worker call the same way.
package services

import (
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/account"
	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/backlog"
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
	"github.com/domaind/domaind/internal/oauth"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/password"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/payment/stripepay"
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

// CheckTimeout bounds one registry check of the search and the brokerage
// probe; a check that takes longer is reported as unknown.
const CheckTimeout = 5 * time.Second

// catalogTTL is how old the in-memory TLD catalog may get: a TLD sync shows
// on the read endpoints within this time.
const catalogTTL = 5 * time.Second

// Deps are what the services are built from.
type Deps struct {
	Config *config.Config
	DB     *gorm.DB
	Redis  redis.UniversalClient
	Outbox *outbox.Outbox
	Log    *slog.Logger
	// Now is the services' clock; nil means time.Now.
	Now func() time.Time
	// Registry answers availability checks.
	Registry registry.Provider
	// Passwords are the argon2id costs of new password hashes; zero means
	// password.Default.
	Passwords password.Params
	// Tools are the free tools; nil means none.
	Tools *tools.Registry
	// Resources are the protected resources (RFC 9728) the OAuth
	// server's tokens may be bound to (api.Resources).
	Resources []string
	// Payments are the hosted checkout's card processors by environment;
	// nil means Processors of the configuration.
	Payments map[string]payment.Provider
}

// Set is every service of one process.
type Set struct {
	// Accounts are people's accounts, sessions and developer keys.
	Accounts *account.Service
	// OAuth is the OAuth 2.1 authorization server.
	OAuth *oauth.Server
	// Limiter spends the rate limits and quotas.
	Limiter *ratelimit.Limiter
	// Catalog is the synced TLDs and prices.
	Catalog *catalog.Catalog
	// Checker asks the registry whether names are free.
	Checker *availability.Checker
	// Lookups are the cached WHOIS answers; Whois runs lookups on the
	// worker and waits for them.
	Lookups *lookup.Cache
	Whois   *lookup.Queue
	// Market is the live marketplace's public listings.
	Market *market.Service
	// Search is the streamed domain search, with its WHOIS warm-ups.
	Search *search.Service
	// Domains are people's own domains, their bulk operations and carts.
	Domains *domains.Service
	// Jobs are the async free tools' jobs; Inline runs the inline ones.
	Jobs   *tools.Jobs
	Inline *tools.Inline
	// Canaries are ops' canaries through the pipeline.
	Canaries *canary.Service
	// Partners, Inventory, Webhooks, Orders and Checkout are the partner
	// API's, the ops routes' around it and the checkout page's.
	Partners  *partner.Service
	Inventory *inventory.Service
	Webhooks  *webhook.Service
	Orders    *order.Service
	Checkout  *checkout.Service
	// Payments are the checkout's charges, as finance reconciles them;
	// Processors are the card processors by environment.
	Payments   *payment.Book
	Processors map[string]payment.Provider
	// Settlements are finance's settlement runs and the partners'
	// statements; Payouts what the service owes partners.
	Settlements *settlement.Service
	Payouts     *payout.Service
	// Brokerage is the partners' brokerage cases, worked by ops.
	Brokerage *brokerage.Service
	// Backlog is the work left for ops (transfers unconfirmed, card
	// refunds failed, returns given up), as the ops index and the
	// metrics read it.
	Backlog *backlog.Service
	// Referrals is the affiliate program: links, clicks, attribution.
	Referrals *referral.Service
	// Idempotency keeps the answers of requests sent with an
	// Idempotency-Key, partners' in the database.
	Idempotency *idempotency.Store
}

// New builds the services of d.
func New(d Deps) *Set {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	if d.Passwords == (password.Params{}) {
		d.Passwords = password.Default
	}
	if d.Payments == nil {
		d.Payments = Processors(d.DB, d.Config)
	}
	cfg, key := d.Config, d.Config.SecretKey
	base := BaseURL(cfg)
	s := &Set{
		Accounts:   account.New(d.DB, d.Passwords, now),
		OAuth:      oauth.New(d.DB, now, d.Resources),
		Limiter:    ratelimit.New(d.Redis, now),
		Catalog:    catalog.New(d.DB, catalogTTL),
		Checker:    availability.New(d.Registry, d.Redis, CheckTimeout),
		Lookups:    lookup.NewCache(d.Redis, d.Log),
		Market:     market.New(d.DB, key),
		Jobs:       tools.NewJobs(d.DB, d.Outbox, now),
		Inline:     tools.NewInline(d.Tools, d.Redis, d.Log),
		Canaries:   canary.New(d.DB, d.Outbox),
		Partners:   partner.New(d.DB, key, now),
		Inventory:  inventory.New(d.DB, key, now),
		Webhooks:   webhook.New(d.DB, key, cfg.FetchAllowCIDRs, now),
		Payouts:    payout.New(d.DB, key, now),
		Backlog:    backlog.New(d.DB),
		Processors: d.Payments,
		Payments:   payment.NewBook(d.DB, d.Outbox, d.Payments, key, d.Log, now),
		Orders:     order.New(d.DB, d.Outbox, key, order.Options{QuoteTTL: cfg.QuoteTTL, ReviewThresholdCents: cfg.ReviewThresholdCents, QuoteHoldLimit: cfg.QuoteHoldLimit}, now),
	}
	s.Idempotency = idempotency.New(d.Redis, d.DB, secret.NewSealer(key, "idempotency records"))
	s.Idempotency.Now = now
	s.Inventory.Share(d.Redis, d.Log) // every replica's partner search sees a listing change at once
	s.Whois = lookup.NewQueue(d.DB, d.Outbox, s.Lookups)
	s.Domains = domains.New(d.DB, d.Outbox, s.Catalog, key, d.Log, now)
	s.Settlements = settlement.New(d.DB, d.Outbox, s.Orders, cfg.SettlementPeriod, key, now)
	s.Brokerage = brokerage.New(d.DB, d.Outbox, s.Checker, s.Inventory, brokerage.Options{BaseURL: base, SecretKey: key}, now)
	s.Referrals = referral.New(d.DB, s.Inventory, referral.Options{BaseURL: base, SecretKey: key}, now)
	s.Checkout = checkout.New(d.DB, s.Orders, checkout.Options{BaseURL: base, SecretKey: key, Providers: d.Payments,
		Referrals: s.Referrals}, now)
	s.Search = search.New(search.Deps{Checker: s.Checker, Catalog: s.Catalog, Market: s.Market, Lookups: s.Lookups,
		Whois: s.Whois, Limiter: s.Limiter, TLDs: cfg.SearchTLDs, Log: d.Log})
	return s
}

// Close stops the work the services run in the background (the search's
// warm-ups, the inventory's index rebuilds and its subscription to other
// processes' changes, the subscription to the ends of lookups) and waits
// for it. Call it once nothing calls the services any more.
func (s *Set) Close() {
	s.Search.Close()
	s.Inventory.Close()
	s.Lookups.Close()
}

// BaseURL is the service's public base URL, without a trailing slash.
func BaseURL(cfg *config.Config) string { return strings.TrimSuffix(cfg.BaseURL.String(), "/") }

// Processors returns the hosted checkout's payment providers of cfg, by
// environment (payment.Providers): Stripe takes the live payments when
// DOMAIND_PAYMENT_PROVIDER is stripe.
func Processors(db *gorm.DB, cfg *config.Config) map[string]payment.Provider {
	var live payment.Provider
	if cfg.PaymentProvider == stripepay.Name {
		live = stripepay.New(stripepay.Options{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret, APIURL: cfg.StripeAPIURL})
	}
	return payment.Providers(db, cfg.Embedded(), payment.SandboxOptions{Latency: cfg.SandboxLatency, LostAnswers: cfg.SandboxPaymentFailures}, live)
}
