package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

func envOf(t *testing.T, kv map[string]string) func(string) string {
	t.Helper()
	if _, ok := kv["DOMAIND_DATA_DIR"]; !ok {
		kv["DOMAIND_DATA_DIR"] = t.TempDir()
	}
	return func(k string) string { return kv[k] }
}

const prodSecret = "0123456789abcdef0123456789abcdef"

func prod(extra map[string]string) map[string]string {
	m := map[string]string{
		"DOMAIND_DATABASE_URL": "postgres://u:p@db:5432/domaind",
		"DOMAIND_REDIS_URL":    "redis://redis:6379/0",
		"DOMAIND_SECRET_KEY":   prodSecret,
		"DOMAIND_OPS_USER":     "ops",
		"DOMAIND_OPS_PASSWORD": "a-long-ops-password",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestEmbeddedDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(t, map[string]string{"DOMAIND_DATA_DIR": dir}), false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Embedded() || c.HTTPAddr != ":8080" || c.BaseURL.String() != "http://localhost:8080" || c.Registry != "sandbox" ||
		!c.SeedDemo || !c.DashboardReadOnly || c.LogFormat != "json" || c.LogLevel != slog.LevelInfo {
		t.Errorf("defaults = %+v", c)
	}
	if !c.OpsCredsGenerated || c.OpsUser != "ops" || len(c.OpsPassword) < 16 {
		t.Errorf("ops credentials not generated: %q %q", c.OpsUser, c.OpsPassword)
	}
	key, err := os.ReadFile(filepath.Join(dir, "secret.key"))
	if err != nil || strings.TrimSpace(string(key)) != string(c.SecretKey) {
		t.Fatalf("secret key not kept in the data dir: %v", err)
	}
	again, _ := Load(envOf(t, map[string]string{"DOMAIND_DATA_DIR": dir}), true)
	if string(again.SecretKey) != string(c.SecretKey) {
		t.Errorf("second start made a new secret key")
	}
	if again.LogFormat != "text" {
		t.Errorf("log format on a terminal = %q, want text", again.LogFormat)
	}
	other, err := Load(envOf(t, map[string]string{"DOMAIND_DATA_DIR": dir, "DOMAIND_HTTP_ADDR": "127.0.0.1:9090"}), false)
	if err != nil || other.BaseURL.String() != "http://localhost:9090" {
		t.Errorf("base URL on another port = %v, %v; want it to follow DOMAIND_HTTP_ADDR", other.BaseURL, err)
	}
}

func TestProduction(t *testing.T) {
	c, err := Load(envOf(t, prod(map[string]string{
		"DOMAIND_SANDBOX_LATENCY": "100ms", "DOMAIND_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7",
		"DOMAIND_SEARCH_TLDS": "COM, .net,com,co.uk", "DOMAIND_DATABASE_MAX_CONNS": "25",
		"DOMAIND_QUOTE_HOLD_LIMIT": "5", "DOMAIND_SANDBOX_PAYMENT_FAILURES": "0.25",
		"DOMAIND_REDIS_URL": "redis-sentinel://:pw@s1:26379/0?master=m&sentinel_password=sentinel-secret",
	})), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Embedded() || c.SeedDemo || c.AutoMigrate || c.SandboxLatency != 100*time.Millisecond || len(c.TrustedProxies) != 2 ||
		strings.Join(c.SearchTLDs, ",") != "com,net,co.uk" || c.DatabaseMaxConns != 25 || c.QuoteHoldLimit != 5 || c.SandboxPaymentFailures != 0.25 {
		t.Errorf("config = %+v", c)
	}
	logged := fmt.Sprint(c.LogValue())
	for _, secret := range []string{prodSecret, ":p@", ":pw@", "sentinel-secret"} {
		if strings.Contains(logged, secret) {
			t.Errorf("logged config %s shows a secret (%q)", logged, secret)
		}
	}
}

func TestBadConfigNamesTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"bad addr", map[string]string{"DOMAIND_HTTP_ADDR": "8080"}, "DOMAIND_HTTP_ADDR"},
		{"bad search tld", map[string]string{"DOMAIND_SEARCH_TLDS": "com,not a tld"}, "DOMAIND_SEARCH_TLDS"},
		{"bad base url", map[string]string{"DOMAIND_BASE_URL": "localhost"}, "DOMAIND_BASE_URL"},
		{"base url with a query", map[string]string{"DOMAIND_BASE_URL": "https://domains.example/?x=1"}, "DOMAIND_BASE_URL"},
		{"base url with a fragment", map[string]string{"DOMAIND_BASE_URL": "https://domains.example/#top"}, "DOMAIND_BASE_URL"},
		{"base url with a user", map[string]string{"DOMAIND_BASE_URL": "https://ops:secret@domains.example"}, "DOMAIND_BASE_URL"},
		{"base url with sub-delimiters", map[string]string{"DOMAIND_BASE_URL": "https://domains.example/a&b"}, "DOMAIND_BASE_URL"},
		{"mysql", map[string]string{"DOMAIND_DATABASE_URL": "mysql://x", "DOMAIND_REDIS_URL": "redis://r:6379"}, "DOMAIND_DATABASE_URL"},
		{"database without redis", map[string]string{"DOMAIND_DATABASE_URL": "postgres://x/y"}, "DOMAIND_REDIS_URL"},
		{"redis without database", map[string]string{"DOMAIND_REDIS_URL": "redis://r:6379"}, "DOMAIND_DATABASE_URL"},
		{"bad redis scheme", prod(map[string]string{"DOMAIND_REDIS_URL": "http://r"}), "DOMAIND_REDIS_URL"},
		{"sentinel without master", prod(map[string]string{"DOMAIND_REDIS_URL": "redis-sentinel://a:26379,b:26379"}), "DOMAIND_REDIS_URL"},
		{"cluster with a database number", prod(map[string]string{"DOMAIND_REDIS_URL": "redis-cluster://a:7000,b:7001/3"}), "DOMAIND_REDIS_URL"},
		{"no secret in production", prod(map[string]string{"DOMAIND_SECRET_KEY": ""}), "DOMAIND_SECRET_KEY"},
		{"short secret", prod(map[string]string{"DOMAIND_SECRET_KEY": "short"}), "DOMAIND_SECRET_KEY"},
		// The values deploy/ ships, long enough for the checks of length.
		{"example's key", prod(map[string]string{"DOMAIND_SECRET_KEY": "CHANGE-ME-at-least-32-characters-openssl-rand-hex-32"}), "DOMAIND_SECRET_KEY"},
		{"example's ops password", prod(map[string]string{"DOMAIND_OPS_PASSWORD": "change-me-at-least-16-characters"}), "DOMAIND_OPS_PASSWORD"},
		{"example's metrics token", prod(map[string]string{"DOMAIND_METRICS_TOKEN": "CHANGE-ME-openssl-rand-hex-16"}), "DOMAIND_METRICS_TOKEN"},
		{"example's database password", prod(map[string]string{"DOMAIND_DATABASE_URL": "postgres://domaind:CHANGE-ME@db:5432/domaind"}), "DOMAIND_DATABASE_URL"},
		{"example's stripe key", map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_SECRET_KEY": "sk_live_CHANGE-ME", "DOMAIND_STRIPE_WEBHOOK_SECRET": "whsec_x"}, "DOMAIND_STRIPE_SECRET_KEY"},
		{"ops user without password", map[string]string{"DOMAIND_OPS_USER": "ops"}, "DOMAIND_OPS_PASSWORD"},
		{"unknown registry", map[string]string{"DOMAIND_REGISTRY": "godaddy"}, "DOMAIND_REGISTRY"},
		{"rtr without key", map[string]string{"DOMAIND_REGISTRY": "rtr"}, "DOMAIND_RTR_API_KEY"},
		{"rtr without customer", map[string]string{"DOMAIND_REGISTRY": "rtr", "DOMAIND_RTR_API_KEY": "k"}, "DOMAIND_RTR_CUSTOMER"},
		{"unknown payment provider", map[string]string{"DOMAIND_PAYMENT_PROVIDER": "paypal"}, "DOMAIND_PAYMENT_PROVIDER"},
		{"stripe without key", prod(map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_WEBHOOK_SECRET": "whsec_x"}), "DOMAIND_STRIPE_SECRET_KEY"},
		{"stripe with a publishable key", map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_SECRET_KEY": "pk_live_x", "DOMAIND_STRIPE_WEBHOOK_SECRET": "whsec_x"}, "DOMAIND_STRIPE_SECRET_KEY"},
		{"stripe without webhook secret", prod(map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_SECRET_KEY": "sk_live_x"}), "DOMAIND_STRIPE_WEBHOOK_SECRET"},
		{"stripe with another secret", map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_SECRET_KEY": "sk_test_x", "DOMAIND_STRIPE_WEBHOOK_SECRET": "sk_test_x"}, "DOMAIND_STRIPE_WEBHOOK_SECRET"},
		{"stripe api url not a url", map[string]string{"DOMAIND_PAYMENT_PROVIDER": "stripe", "DOMAIND_STRIPE_SECRET_KEY": "sk_test_x", "DOMAIND_STRIPE_WEBHOOK_SECRET": "whsec_x", "DOMAIND_STRIPE_API_URL": "localhost:12111"}, "DOMAIND_STRIPE_API_URL"},
		{"bad latency", map[string]string{"DOMAIND_SANDBOX_LATENCY": "fast"}, "DOMAIND_SANDBOX_LATENCY"},
		{"negative latency", map[string]string{"DOMAIND_SANDBOX_LATENCY": "-1s"}, "DOMAIND_SANDBOX_LATENCY"},
		{"payment failures above one", map[string]string{"DOMAIND_SANDBOX_PAYMENT_FAILURES": "1.5"}, "DOMAIND_SANDBOX_PAYMENT_FAILURES"},
		{"payment failures not a number", map[string]string{"DOMAIND_SANDBOX_PAYMENT_FAILURES": "NaN"}, "DOMAIND_SANDBOX_PAYMENT_FAILURES"},
		{"no quote holds", map[string]string{"DOMAIND_QUOTE_HOLD_LIMIT": "0"}, "DOMAIND_QUOTE_HOLD_LIMIT"},
		{"quote holds in words", map[string]string{"DOMAIND_QUOTE_HOLD_LIMIT": "twenty"}, "DOMAIND_QUOTE_HOLD_LIMIT"},
		{"no database connections", map[string]string{"DOMAIND_DATABASE_MAX_CONNS": "0"}, "DOMAIND_DATABASE_MAX_CONNS"},
		{"one database connection", map[string]string{"DOMAIND_DATABASE_MAX_CONNS": "1"}, "DOMAIND_DATABASE_MAX_CONNS"},
		{"replica without a primary", map[string]string{"DOMAIND_DATABASE_REPLICA_URL": "postgres://r/db"}, "DOMAIND_DATABASE_REPLICA_URL"},
		{"replica not postgres", prod(map[string]string{"DOMAIND_DATABASE_REPLICA_URL": "mysql://r/db"}), "DOMAIND_DATABASE_REPLICA_URL"},
		{"words for connections", map[string]string{"DOMAIND_DATABASE_MAX_CONNS": "many"}, "DOMAIND_DATABASE_MAX_CONNS"},
		{"missing bootstrap file", map[string]string{"DOMAIND_RDAP_BOOTSTRAP": "/nonexistent/dns.json"}, "DOMAIND_RDAP_BOOTSTRAP"},
		{"bad whois addr", map[string]string{"DOMAIND_WHOIS_IANA_ADDR": "whois.iana.org"}, "DOMAIND_WHOIS_IANA_ADDR"},
		{"bad cidr", map[string]string{"DOMAIND_FETCH_ALLOW_CIDRS": "10.0.0.0/33"}, "DOMAIND_FETCH_ALLOW_CIDRS"},
		{"bad proxy", map[string]string{"DOMAIND_TRUSTED_PROXIES": "proxy.local"}, "DOMAIND_TRUSTED_PROXIES"},
		{"bad seed flag", map[string]string{"DOMAIND_SEED_DEMO": "maybe"}, "DOMAIND_SEED_DEMO"},
		{"bad read-only flag", map[string]string{"DOMAIND_DASHBOARD_READ_ONLY": "sometimes"}, "DOMAIND_DASHBOARD_READ_ONLY"},
		{"bad auto-migrate flag", prod(map[string]string{"DOMAIND_AUTO_MIGRATE": "yes please"}), "DOMAIND_AUTO_MIGRATE"},
		{"bad log level", map[string]string{"DOMAIND_LOG_LEVEL": "loud"}, "DOMAIND_LOG_LEVEL"},
		{"bad log format", map[string]string{"DOMAIND_LOG_FORMAT": "xml"}, "DOMAIND_LOG_FORMAT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(envOf(t, tc.env), false)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *config.Error", err)
			}
			if ce.Var != tc.want || !strings.HasPrefix(err.Error(), tc.want+": ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q, want one line naming %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("err = %q tells the password", err)
			}
		})
	}
}

// Only the roles that serve /monitoring and /api/ops need the ops login;
// production refuses a short one.
func TestCheckOps(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // the variable named, "" for no error
	}{
		{"production with a login", prod(nil), ""},
		{"production without a login", prod(map[string]string{"DOMAIND_OPS_USER": "", "DOMAIND_OPS_PASSWORD": ""}), "DOMAIND_OPS_USER"},
		{"production with a short password", prod(map[string]string{"DOMAIND_OPS_PASSWORD": "fifteen-chars!!"}), "DOMAIND_OPS_PASSWORD"},
		{"production with 16 characters", prod(map[string]string{"DOMAIND_OPS_PASSWORD": "sixteen-chars!!!"}), ""},
		{"embedded, made up", map[string]string{}, ""},
		{"embedded, short but chosen", map[string]string{"DOMAIND_OPS_USER": "me", "DOMAIND_OPS_PASSWORD": "pw"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(envOf(t, tc.env), false)
			if err != nil {
				t.Fatalf("Load: %v (a worker must start without an ops login)", err)
			}
			err = cfg.CheckOps()
			var ce *Error
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckOps = %v, want nil", err)
			case tc.want != "" && (!errors.As(err, &ce) || ce.Var != tc.want):
				t.Errorf("CheckOps = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestParseRedisURL(t *testing.T) {
	tests := []struct {
		url  string
		want asynq.RedisConnOpt
	}{
		{"redis://:pw@host:6380/3", asynq.RedisClientOpt{Addr: "host:6380", Password: "pw", DB: 3,
			DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout}},
		{"redis://user:pw@host:6379", asynq.RedisClientOpt{Addr: "host:6379", Username: "user", Password: "pw",
			DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout}},
		{"redis-sentinel://:pw@s1:26379,s2:26379/2?master=mymaster&sentinel_password=spw",
			asynq.RedisFailoverClientOpt{MasterName: "mymaster", SentinelAddrs: []string{"s1:26379", "s2:26379"}, SentinelPassword: "spw", Password: "pw", DB: 2,
				DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout}},
		{"redis-cluster://user:pw@n1:7000,n2:7001", RedisClusterOpt{asynq.RedisClusterClientOpt{Addrs: []string{"n1:7000", "n2:7001"}, Username: "user", Password: "pw",
			DialTimeout: RedisDialTimeout, ReadTimeout: RedisIOTimeout, WriteTimeout: RedisIOTimeout}}},
	}
	for _, tc := range tests {
		got, err := ParseRedisURL(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.url, got, tc.want)
		}
	}
	tls, err := ParseRedisURL("rediss://host:6380")
	if err != nil {
		t.Fatal(err)
	}
	if o := tls.(asynq.RedisClientOpt); o.TLSConfig == nil || o.TLSConfig.ServerName != "host" {
		t.Errorf("rediss:// TLS config = %+v", o.TLSConfig)
	}
}
