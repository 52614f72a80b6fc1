package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/tldsync"
	"github.com/domaind/domaind/models"
)

// seedTLDs loads the sandbox registry and syncs it, as `domaind seed` does.
func seedTLDs(t testing.TB, env *testEnv) time.Time {
	t.Helper()
	ctx := context.Background()
	if _, err := sandbox.Seed(ctx, env.db); err != nil {
		t.Fatal(err)
	}
	if _, err := tldsync.Run(ctx, env.db, sandbox.New(env.db, 0), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var com models.TLD
	env.db.First(&com, "name = ?", "com")
	return com.LastSyncedAt
}

func sandboxCents(t testing.TB, env *testEnv, tld, op string) *int64 {
	t.Helper()
	var p models.TLDPrice
	if err := env.db.First(&p, "tld = ? AND op = ?", tld, op).Error; err != nil {
		t.Fatalf("price %s %s: %v", tld, op, err)
	}
	return p.Cents
}

func TestPricing(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	comRegister := sandboxCents(t, env, "com", "register")
	comTransfer := sandboxCents(t, env, "com", "transfer")
	if comRegister == nil || comTransfer == nil {
		t.Fatal("sandbox .com has no register or transfer price")
	}
	tests := []struct {
		name, query string
		want        string
	}{
		{"register", "tld=com&op=register", `{"tld":"com","op":"register","priceCents":` + itoa(*comRegister) + `}`},
		{"default op is transfer", "tld=com", `{"tld":"com","op":"transfer","priceCents":` + itoa(*comTransfer) + `}`},
		{"normalised tld", "tld=.COM&op=register", `{"tld":"com","op":"register","priceCents":` + itoa(*comRegister) + `}`},
		{"unknown tld", "tld=notsoldhere&op=register", `{"tld":"notsoldhere","op":"register","priceCents":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := env.request("GET", "/api/pricing/tld?"+tc.query, "")
			if w.Code != 200 || w.Body.String() != tc.want {
				t.Errorf("= %d %s, want 200 %s", w.Code, w.Body, tc.want)
			}
			if exactHeader(w, "RateLimit-Policy") != "120;w=60" || exactHeader(w, "RateLimit-Limit") != "120" {
				t.Errorf("rate-limit headers = %v", w.Header())
			}
		})
	}
}

func TestPricingRestoreIsNullWhereNotOffered(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	var p models.TLDPrice
	if err := env.db.First(&p, "op = ? AND cents IS NULL", "restore").Error; err != nil {
		t.Fatal("no sandbox TLD without restore; the seed data has some (de, nl)")
	}
	w := env.request("GET", "/api/pricing/tld?tld="+p.TLD+"&op=restore", "")
	if want := `{"tld":"` + p.TLD + `","op":"restore","priceCents":null}`; w.Code != 200 || w.Body.String() != want {
		t.Errorf("= %d %s, want %s", w.Code, w.Body, want)
	}
}

func TestPricingBadInputUsesLegacyErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for query, want := range map[string]string{
		"":                    `{"error":"tld is required"}`,
		"tld=":                `{"error":"tld is required"}`,
		"op=register":         `{"error":"tld is required"}`,
		"tld=com&op=buy":      `{"error":"op must be one of register, renew, transfer, restore"}`,
		"tld=com&op=REGISTER": `{"error":"op must be one of register, renew, transfer, restore"}`,
		"tld=c%20m&op=renew":  `{"error":"invalid tld \"c m\": contains a space"}`,
		"tld=123&op=register": `{"error":"invalid tld \"123\": top-level domain \"123\" is all digits"}`,
	} {
		w := env.request("GET", "/api/pricing/tld?"+query, "")
		if w.Code != 400 || w.Body.String() != want {
			t.Errorf("?%s = %d %s, want 400 %s", query, w.Code, w.Body, want)
		}
	}
}

func TestPricingAndMetadataShareTheLimit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for i := range 120 {
		path := "/api/pricing/tld?tld=com"
		if i%2 == 1 {
			path = "/api/tlds/com/metadata"
		}
		if w := env.request("GET", path, ""); w.Code == 429 {
			t.Fatalf("request %d refused", i+1)
		}
	}
	for _, path := range []string{"/api/pricing/tld?tld=com", "/api/tlds/com/metadata"} {
		w := env.request("GET", path, "")
		if w.Code != 429 || w.Header().Get("Retry-After") == "" {
			t.Fatalf("%s after 120 = %d, want 429 with Retry-After", path, w.Code)
		}
		// Typed on both: pricing's legacy shape is for its 400s alone
		// (SPEC §7.1).
		if code, _ := typedError(t, w); code != "rate_limited" {
			t.Errorf("%s code = %q", path, code)
		}
	}
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	synced := seedTLDs(t, env)
	env.now = synced.Add(time.Hour)
	w := env.request("GET", "/api/tlds/COM/metadata", "")
	if w.Code != 200 {
		t.Fatalf("= %d %s", w.Code, w.Body)
	}
	var got map[string]any
	json.Unmarshal(w.Body.Bytes(), &got)
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	wantKeys := "allowedCountries,allowedYears,featuresAvailable,idnSupport,lastSyncedAt,maxNameservers,maxPeriodMonths,maxYears,minNameservers,minPeriodMonths,minYears,nameserversRequired,organizationAllowed,organizationRequired,periodsMonths,premiumSupport,provider,source,stale,tld,transferRequiresAuthcode"
	if strings.Join(keys, ",") != wantKeys {
		t.Errorf("keys = %s\nwant   %s", strings.Join(keys, ","), wantKeys)
	}
	types := map[string]string{
		"tld": "string", "provider": "string", "periodsMonths": "array", "minPeriodMonths": "number", "maxPeriodMonths": "number",
		"allowedYears": "array", "minYears": "number", "maxYears": "number", "organizationRequired": "bool",
		"organizationAllowed": "bool", "allowedCountries": "array", "minNameservers": "number", "maxNameservers": "number",
		"nameserversRequired": "bool", "idnSupport": "bool", "premiumSupport": "string", "transferRequiresAuthcode": "bool",
		"featuresAvailable": "array", "source": "string", "lastSyncedAt": "string", "stale": "bool",
	}
	for k, want := range types {
		if typ := jsonType(got[k]); typ != want {
			t.Errorf("%s is %s, want %s", k, typ, want)
		}
	}
	if got["tld"] != "com" || got["source"] != "sandbox" || got["stale"] != false || got["provider"] != "Verisign" {
		t.Errorf("com = %v", got)
	}
	if ts, err := time.Parse(time.RFC3339Nano, got["lastSyncedAt"].(string)); err != nil || !ts.Equal(synced) {
		t.Errorf("lastSyncedAt = %v, want %v", got["lastSyncedAt"], synced)
	}

	env.now = synced.Add(25 * time.Hour)
	w = env.request("GET", "/api/tlds/com/metadata", "")
	if !strings.Contains(w.Body.String(), `"stale":true`) {
		t.Errorf("a day after the last sync: %s, want stale", w.Body)
	}
}

func TestMetadataErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	seedTLDs(t, env)
	for path, want := range map[string]int{
		"/api/tlds/notsoldhere/metadata": 404,
		"/api/tlds/c_m/metadata":         400,
		"/api/tlds/123/metadata":         400,
	} {
		w := env.request("GET", path, "")
		if w.Code != want {
			t.Errorf("%s = %d %s, want %d", path, w.Code, w.Body, want)
			continue
		}
		typedError(t, w)
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "object"
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
