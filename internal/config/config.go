// Package config loads the service's configuration from DOMAIND_* environment
// variables, once, and validates it before anything connects anywhere.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/period"
)

// DefaultDatabaseMaxConns is each process's default cap on Postgres
// connections. More is not faster: past a few per database core, the
// backends compete for the CPU while holding their transactions open.
// 200 concurrent partner orders with their webhooks, on 2 cores, took a
// p99 of about 90 ms from commit to delivery at 10, 200 to 300 ms at 20
// and 500 ms at 40.
const DefaultDatabaseMaxConns = 10

// Config is every setting of every role. The zero value is not useful; use Load.
type Config struct {
	HTTPAddr    string
	BaseURL     *url.URL
	DataDir     string
	DatabaseURL string // empty: embedded SQLite in DataDir
	// DatabaseReplicaURL, when set, is a streaming replica of the database
	// that the reads which may lag (public listings, reports) go to.
	DatabaseReplicaURL string
	// DatabaseMaxConns caps each process's connections to Postgres (and as
	// many again to the replica).
	DatabaseMaxConns int
	RedisURL         string // empty: in-process Redis
	SecretKey        []byte

	// MetricsToken, when set, is the bearer token /metrics asks for; in
	// production /metrics is off without one.
	MetricsToken string

	OpsUser           string
	OpsPassword       string
	OpsCredsGenerated bool // true when OpsUser/OpsPassword were made up at start
	DashboardReadOnly bool

	Registry       string
	RTRURL         string
	RTRAPIKey      string
	RTRCustomer    string
	SandboxLatency time.Duration
	// SandboxPaymentFailures is the share of sandbox charges (0 to 1)
	// whose answer is lost after the charge was taken, as a processor's
	// timeout loses it: the service must still give such charges back.
	SandboxPaymentFailures float64
	// PaymentProvider takes the live hosted checkout's payments: sandbox
	// (the built-in test processor, live only on the embedded default) or
	// stripe, with StripeSecretKey and StripeWebhookSecret; StripeAPIURL
	// points the Stripe calls elsewhere (stripe-mock, in tests).
	PaymentProvider     string
	StripeSecretKey     string
	StripeWebhookSecret string
	StripeAPIURL        string
	RDAPBootstrap       string
	WhoisIANAAddr       string
	// DNSResolver is where the dns-lookup tool sends its queries (host:port);
	// empty means the first nameserver of /etc/resolv.conf.
	DNSResolver     string
	FetchAllowCIDRs []netip.Prefix
	TrustedProxies  []netip.Prefix
	// SearchTLDs are the TLDs a plain label.tld search also checks.
	SearchTLDs []string
	// AutoMigrate lets api, worker, scheduler and dashboard migrate a
	// database that lacks migrations at start rather than refuse it (all,
	// migrate and seed always migrate).
	AutoMigrate bool

	// QuoteTTL is how long a partner's quote holds its listing.
	QuoteTTL time.Duration
	// QuoteHoldLimit is how many live quotes one partner may have in one
	// environment at once.
	QuoteHoldLimit int
	// ReviewThresholdCents holds partner orders at or above it for ops'
	// manual review before the transfer.
	ReviewThresholdCents int64
	// SettlementPeriod is how long a settlement period is.
	SettlementPeriod period.Length

	SeedDemo  bool
	LogLevel  slog.Level
	LogFormat string // "text" or "json"
}

// DefaultSearchTLDs are the common TLDs a plain label.tld search checks
// besides the one asked for.
const DefaultSearchTLDs = "com,net,org,io,co,ai,app,dev,xyz,me,info,shop"

// maxSearchTLDs bounds the checks one search makes.
const maxSearchTLDs = 30

// Embedded reports whether the process runs on the embedded default (SQLite
// and in-process Redis) rather than on external Postgres and Redis.
func (c *Config) Embedded() bool { return c.DatabaseURL == "" && c.RedisURL == "" }

// Error is a configuration problem, naming the variable at fault.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// Load reads the configuration through getenv. It fails on the first bad
// variable with an *Error that names it. isTerminal decides the default log
// format. In embedded mode a secret key is read from (or generated into)
// DataDir, and ops credentials are generated when unset.
func Load(getenv func(string) string, isTerminal bool) (*Config, error) {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := &Config{
		HTTPAddr:            env("DOMAIND_HTTP_ADDR", ":8080"),
		DataDir:             env("DOMAIND_DATA_DIR", "./data"),
		DatabaseURL:         env("DOMAIND_DATABASE_URL", ""),
		DatabaseReplicaURL:  env("DOMAIND_DATABASE_REPLICA_URL", ""),
		RedisURL:            env("DOMAIND_REDIS_URL", ""),
		OpsUser:             env("DOMAIND_OPS_USER", ""),
		OpsPassword:         getenv("DOMAIND_OPS_PASSWORD"),
		Registry:            env("DOMAIND_REGISTRY", "sandbox"),
		RTRURL:              env("DOMAIND_RTR_URL", "https://api.yoursrs-ote.com/v2"),
		RTRAPIKey:           getenv("DOMAIND_RTR_API_KEY"),
		RTRCustomer:         env("DOMAIND_RTR_CUSTOMER", ""),
		PaymentProvider:     env("DOMAIND_PAYMENT_PROVIDER", "sandbox"),
		StripeSecretKey:     getenv("DOMAIND_STRIPE_SECRET_KEY"),
		StripeWebhookSecret: getenv("DOMAIND_STRIPE_WEBHOOK_SECRET"),
		StripeAPIURL:        env("DOMAIND_STRIPE_API_URL", ""),
		RDAPBootstrap:       env("DOMAIND_RDAP_BOOTSTRAP", ""),
		WhoisIANAAddr:       env("DOMAIND_WHOIS_IANA_ADDR", "whois.iana.org:43"),
		DNSResolver:         env("DOMAIND_DNS_RESOLVER", ""),
		MetricsToken:        getenv("DOMAIND_METRICS_TOKEN"),
	}
	if name := placeholderIn(getenv); name != "" {
		return nil, &Error{name, "still holds the deploy examples' CHANGE-ME placeholder: replace it with a value of your own (for example: openssl rand -hex 32)"}
	}
	var err error
	_, port, err := net.SplitHostPort(c.HTTPAddr)
	if err != nil {
		return nil, &Error{"DOMAIND_HTTP_ADDR", fmt.Sprintf("want host:port such as :8080, got %q", c.HTTPAddr)}
	}
	// By default links point at this process on this machine.
	if c.BaseURL, err = parseBaseURL(env("DOMAIND_BASE_URL", "http://localhost:"+port)); err != nil {
		return nil, &Error{"DOMAIND_BASE_URL", err.Error()}
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return nil, &Error{"DOMAIND_DATABASE_URL", "want a postgres:// URL (leave empty for the embedded SQLite)"}
	}
	switch r := c.DatabaseReplicaURL; {
	case r != "" && c.DatabaseURL == "":
		return nil, &Error{"DOMAIND_DATABASE_REPLICA_URL", "a replica needs its primary in DOMAIND_DATABASE_URL"}
	case r != "" && !strings.HasPrefix(r, "postgres://") && !strings.HasPrefix(r, "postgresql://"):
		return nil, &Error{"DOMAIND_DATABASE_REPLICA_URL", "want a postgres:// URL of a streaming replica of DOMAIND_DATABASE_URL"}
	}
	if c.RedisURL != "" {
		if _, err := ParseRedisURL(c.RedisURL); err != nil {
			return nil, &Error{"DOMAIND_REDIS_URL", err.Error()}
		}
	}
	if (c.DatabaseURL == "") != (c.RedisURL == "") {
		missing := "DOMAIND_DATABASE_URL"
		if c.RedisURL == "" {
			missing = "DOMAIND_REDIS_URL"
		}
		return nil, &Error{missing, "production mode needs both DOMAIND_DATABASE_URL and DOMAIND_REDIS_URL (set neither for the embedded default)"}
	}
	if c.DashboardReadOnly, err = parseBool(env("DOMAIND_DASHBOARD_READ_ONLY", "true")); err != nil {
		return nil, &Error{"DOMAIND_DASHBOARD_READ_ONLY", err.Error()}
	}
	if c.SeedDemo, err = parseBool(env("DOMAIND_SEED_DEMO", strconv.FormatBool(c.Embedded()))); err != nil {
		return nil, &Error{"DOMAIND_SEED_DEMO", err.Error()}
	}
	if c.AutoMigrate, err = parseBool(env("DOMAIND_AUTO_MIGRATE", "false")); err != nil {
		return nil, &Error{"DOMAIND_AUTO_MIGRATE", err.Error()}
	}
	switch c.Registry {
	case "sandbox":
	case "rtr":
		if c.RTRAPIKey == "" {
			return nil, &Error{"DOMAIND_RTR_API_KEY", "required when DOMAIND_REGISTRY=rtr"}
		}
		if c.RTRCustomer == "" {
			return nil, &Error{"DOMAIND_RTR_CUSTOMER", "required when DOMAIND_REGISTRY=rtr (the customer handle whose price list applies)"}
		}
		if _, err := parseBaseURL(c.RTRURL); err != nil {
			return nil, &Error{"DOMAIND_RTR_URL", err.Error()}
		}
	default:
		return nil, &Error{"DOMAIND_REGISTRY", fmt.Sprintf("want sandbox or rtr, got %q", c.Registry)}
	}
	if err := c.checkPayments(); err != nil {
		return nil, err
	}
	if c.SandboxLatency, err = time.ParseDuration(env("DOMAIND_SANDBOX_LATENCY", "0")); err != nil || c.SandboxLatency < 0 {
		return nil, &Error{"DOMAIND_SANDBOX_LATENCY", "want a non-negative duration such as 100ms"}
	}
	if c.SandboxPaymentFailures, err = strconv.ParseFloat(env("DOMAIND_SANDBOX_PAYMENT_FAILURES", "0"), 64); err != nil ||
		!(c.SandboxPaymentFailures >= 0 && c.SandboxPaymentFailures <= 1) {
		return nil, &Error{"DOMAIND_SANDBOX_PAYMENT_FAILURES", "want a share from 0 to 1 such as 0.05"}
	}
	if c.DatabaseMaxConns, err = strconv.Atoi(env("DOMAIND_DATABASE_MAX_CONNS", strconv.Itoa(DefaultDatabaseMaxConns))); err != nil || c.DatabaseMaxConns < 2 || c.DatabaseMaxConns > 1000 {
		return nil, &Error{"DOMAIND_DATABASE_MAX_CONNS", "want a whole number from 2 to 1000 such as 10 (a migration holds one connection for its lock)"}
	}
	if c.SettlementPeriod, err = period.ParseLength(env("DOMAIND_SETTLEMENT_PERIOD", "week")); err != nil {
		return nil, &Error{"DOMAIND_SETTLEMENT_PERIOD", err.Error()}
	}
	if c.QuoteTTL, err = time.ParseDuration(env("DOMAIND_QUOTE_TTL", "10m")); err != nil || c.QuoteTTL < time.Second || c.QuoteTTL > 24*time.Hour {
		return nil, &Error{"DOMAIND_QUOTE_TTL", "want a duration from 1s to 24h such as 10m"}
	}
	if c.QuoteHoldLimit, err = strconv.Atoi(env("DOMAIND_QUOTE_HOLD_LIMIT", "20")); err != nil || c.QuoteHoldLimit < 1 || c.QuoteHoldLimit > 10_000 {
		return nil, &Error{"DOMAIND_QUOTE_HOLD_LIMIT", "want a whole number from 1 to 10000 such as 20"}
	}
	if c.ReviewThresholdCents, err = strconv.ParseInt(env("DOMAIND_REVIEW_THRESHOLD_CENTS", "500000"), 10, 64); err != nil || c.ReviewThresholdCents < 1 {
		return nil, &Error{"DOMAIND_REVIEW_THRESHOLD_CENTS", "want a positive whole number of cents such as 500000 ($5,000)"}
	}
	if b := c.RDAPBootstrap; b != "" && !strings.HasPrefix(b, "http://") && !strings.HasPrefix(b, "https://") {
		if _, err := os.Stat(b); err != nil {
			return nil, &Error{"DOMAIND_RDAP_BOOTSTRAP", fmt.Sprintf("want a readable file or an http(s) URL: %v", err)}
		}
	}
	if _, _, err := net.SplitHostPort(c.DNSResolver); c.DNSResolver != "" && err != nil {
		return nil, &Error{"DOMAIND_DNS_RESOLVER", fmt.Sprintf("want host:port, got %q", c.DNSResolver)}
	}
	if _, _, err := net.SplitHostPort(c.WhoisIANAAddr); err != nil {
		return nil, &Error{"DOMAIND_WHOIS_IANA_ADDR", fmt.Sprintf("want host:port, got %q", c.WhoisIANAAddr)}
	}
	if c.FetchAllowCIDRs, err = parsePrefixes(getenv("DOMAIND_FETCH_ALLOW_CIDRS")); err != nil {
		return nil, &Error{"DOMAIND_FETCH_ALLOW_CIDRS", err.Error()}
	}
	if c.TrustedProxies, err = parsePrefixes(getenv("DOMAIND_TRUSTED_PROXIES")); err != nil {
		return nil, &Error{"DOMAIND_TRUSTED_PROXIES", err.Error()}
	}
	if c.SearchTLDs, err = parseTLDs(env("DOMAIND_SEARCH_TLDS", DefaultSearchTLDs)); err != nil {
		return nil, &Error{"DOMAIND_SEARCH_TLDS", err.Error()}
	}
	if err := c.LogLevel.UnmarshalText([]byte(env("DOMAIND_LOG_LEVEL", "info"))); err != nil {
		return nil, &Error{"DOMAIND_LOG_LEVEL", "want debug, info, warn or error"}
	}
	defFormat := "json"
	if isTerminal {
		defFormat = "text"
	}
	if c.LogFormat = env("DOMAIND_LOG_FORMAT", defFormat); c.LogFormat != "text" && c.LogFormat != "json" {
		return nil, &Error{"DOMAIND_LOG_FORMAT", fmt.Sprintf("want text or json, got %q", c.LogFormat)}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		return nil, &Error{"DOMAIND_METRICS_TOKEN", "want at least 16 characters (for example: openssl rand -hex 16)"}
	}
	if err := c.loadSecrets(getenv("DOMAIND_SECRET_KEY")); err != nil {
		return nil, err
	}
	return c, nil
}

// checkPayments checks the payment provider's settings: Stripe needs its
// secret key and its webhook endpoint's signing secret.
func (c *Config) checkPayments() error {
	switch c.PaymentProvider {
	case "sandbox":
		return nil
	case "stripe":
	default:
		return &Error{"DOMAIND_PAYMENT_PROVIDER", fmt.Sprintf("want sandbox or stripe, got %q", c.PaymentProvider)}
	}
	switch k := c.StripeSecretKey; {
	case k == "":
		return &Error{"DOMAIND_STRIPE_SECRET_KEY", "required when DOMAIND_PAYMENT_PROVIDER=stripe: the account's API key (sk_live_… or sk_test_…) from Stripe's dashboard, Developers, API keys"}
	case !strings.HasPrefix(k, "sk_") && !strings.HasPrefix(k, "rk_"):
		return &Error{"DOMAIND_STRIPE_SECRET_KEY", "want an API key starting sk_ (or a restricted one starting rk_), not a publishable pk_ one"}
	}
	switch w := c.StripeWebhookSecret; {
	case w == "":
		return &Error{"DOMAIND_STRIPE_WEBHOOK_SECRET", "required when DOMAIND_PAYMENT_PROVIDER=stripe: the signing key (whsec_…) Stripe shows for the webhook endpoint at /api/payments/stripe/webhook"}
	case !strings.HasPrefix(w, "whsec_"):
		return &Error{"DOMAIND_STRIPE_WEBHOOK_SECRET", "want the endpoint's signing key, starting whsec_"}
	}
	if c.StripeAPIURL != "" {
		if _, err := parseBaseURL(c.StripeAPIURL); err != nil {
			return &Error{"DOMAIND_STRIPE_API_URL", err.Error()}
		}
	}
	return nil
}

// credentialVars are the variables that hold a secret or a URL with a
// password, whose values in deploy/ are placeholders.
var credentialVars = []string{
	"DOMAIND_DATABASE_URL", "DOMAIND_DATABASE_REPLICA_URL", "DOMAIND_REDIS_URL", "DOMAIND_SECRET_KEY",
	"DOMAIND_OPS_PASSWORD", "DOMAIND_METRICS_TOKEN", "DOMAIND_RTR_API_KEY",
	"DOMAIND_STRIPE_SECRET_KEY", "DOMAIND_STRIPE_WEBHOOK_SECRET",
}

// placeholderIn names the first of credentialVars that still holds the
// deploy examples' placeholder (CHANGE-ME, in any case), "" when none
// does: copied as it is, it would be a secret everyone who read the
// repository knows, and long enough to pass the checks of length.
func placeholderIn(getenv func(string) string) string {
	for _, name := range credentialVars {
		if strings.Contains(strings.ToLower(getenv(name)), "change-me") {
			return name
		}
	}
	return ""
}

// loadSecrets sets SecretKey and the ops credentials. Production must be
// given both; the embedded mode keeps a generated key in DataDir and makes
// up ops credentials for the life of the process.
func (c *Config) loadSecrets(secret string) error {
	switch {
	case secret != "":
		if len(secret) < 32 {
			return &Error{"DOMAIND_SECRET_KEY", "want at least 32 characters (for example: openssl rand -hex 32)"}
		}
		c.SecretKey = []byte(secret)
	case c.Embedded():
		key, err := embeddedSecretKey(c.DataDir)
		if err != nil {
			return &Error{"DOMAIND_DATA_DIR", err.Error()}
		}
		c.SecretKey = key
	default:
		return &Error{"DOMAIND_SECRET_KEY", "required in production mode (for example: openssl rand -hex 32)"}
	}
	if (c.OpsUser == "") != (c.OpsPassword == "") {
		return &Error{"DOMAIND_OPS_PASSWORD", "set DOMAIND_OPS_USER and DOMAIND_OPS_PASSWORD together"}
	}
	if c.OpsUser == "" && c.Embedded() {
		c.OpsUser, c.OpsPassword, c.OpsCredsGenerated = "ops", randomHex(12), true
	}
	return nil
}

// MinOpsPassword is the shortest ops password production accepts: the ops
// login opens the queues, the settlements and every partner's data.
const MinOpsPassword = 16

// CheckOps is the check of the roles that serve the dashboard or the ops
// API (all, api and dashboard; a worker or a scheduler needs no ops
// login): production needs one, with a password of MinOpsPassword
// characters or more. The embedded mode makes one up when none is set.
func (c *Config) CheckOps() error {
	switch {
	case c.Embedded():
		return nil
	case c.OpsUser == "":
		return &Error{"DOMAIND_OPS_USER", "required by the roles that serve /monitoring and /api/ops (all, api, dashboard), with DOMAIND_OPS_PASSWORD"}
	case len(c.OpsPassword) < MinOpsPassword:
		return &Error{"DOMAIND_OPS_PASSWORD", fmt.Sprintf("want at least %d characters (for example: openssl rand -base64 24)", MinOpsPassword)}
	}
	return nil
}

// LogValue prints the configuration with secrets masked.
func (c *Config) LogValue() slog.Value {
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return "***"
	}
	return slog.GroupValue(
		slog.String("http_addr", c.HTTPAddr),
		slog.String("base_url", c.BaseURL.String()),
		slog.Bool("embedded", c.Embedded()),
		slog.String("data_dir", c.DataDir),
		slog.String("database_url", RedactURL(c.DatabaseURL)),
		slog.String("database_replica_url", RedactURL(c.DatabaseReplicaURL)),
		slog.Int("database_max_conns", c.DatabaseMaxConns),
		slog.String("redis_url", RedactURL(c.RedisURL)),
		slog.String("ops_user", c.OpsUser),
		slog.String("ops_password", mask(c.OpsPassword)),
		slog.String("metrics_token", mask(c.MetricsToken)),
		slog.Bool("dashboard_read_only", c.DashboardReadOnly),
		slog.String("registry", c.Registry),
		slog.String("rtr_api_key", mask(c.RTRAPIKey)),
		slog.Duration("sandbox_latency", c.SandboxLatency),
		slog.Float64("sandbox_payment_failures", c.SandboxPaymentFailures),
		slog.String("payment_provider", c.PaymentProvider),
		slog.String("stripe_secret_key", mask(c.StripeSecretKey)),
		slog.String("stripe_webhook_secret", mask(c.StripeWebhookSecret)),
		slog.String("stripe_api_url", c.StripeAPIURL),
		slog.String("rdap_bootstrap", RedactURL(c.RDAPBootstrap)),
		slog.String("whois_iana_addr", c.WhoisIANAAddr),
		slog.String("dns_resolver", c.DNSResolver),
		slog.String("search_tlds", strings.Join(c.SearchTLDs, ",")),
		slog.Int("trusted_proxies", len(c.TrustedProxies)),
		slog.Int("fetch_allow_cidrs", len(c.FetchAllowCIDRs)),
		slog.Duration("quote_ttl", c.QuoteTTL),
		slog.Int("quote_hold_limit", c.QuoteHoldLimit),
		slog.Int64("review_threshold_cents", c.ReviewThresholdCents),
		slog.String("settlement_period", c.SettlementPeriod.String()),
		slog.Bool("seed_demo", c.SeedDemo),
		slog.Bool("auto_migrate", c.AutoMigrate),
	)
}

// RedactURL hides the password of a connection URL, in its user part and in
// any query parameter whose name mentions a password.
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// parseBaseURL reads a base URL the service's own URLs are made from: an
// absolute http(s) URL, its path (if any) of URL-safe characters, with no
// user, query or fragment.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Trim(u.EscapedPath(), urlSafe) != "" {
		shown := raw
		if err == nil {
			shown = u.Redacted() // no password in the error
		}
		return nil, fmt.Errorf("want an absolute http(s) URL without a user, query or fragment, such as https://domains.example, got %q", shown)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// urlSafe are the characters a base URL's path may hold.
const urlSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%"

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("want true or false, got %q", s)
	}
	return b, nil
}

// parsePrefixes reads a comma-separated list of CIDRs or single addresses.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR nor an IP address", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// embeddedSecretKey returns the key stored in dir, creating dir and the key on first use.
func embeddedSecretKey(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, "secret.key")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	key := randomHex(32)
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	return []byte(key), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// parseTLDs reads a comma-separated list of TLDs, normalised and deduplicated.
func parseTLDs(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		tld, err := domainname.ParseTLD(f)
		if err != nil {
			return nil, fmt.Errorf("want comma-separated TLDs such as com,net: %v", err)
		}
		if !slices.Contains(out, tld) {
			out = append(out, tld)
		}
	}
	if len(out) > maxSearchTLDs {
		return nil, fmt.Errorf("at most %d TLDs, got %d", maxSearchTLDs, len(out))
	}
	return out, nil
}
