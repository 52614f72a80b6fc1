package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
)

func TestDeveloperKeysThroughTheAPI(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	b := newBrowser(t, env)
	if res, _ := b.json("POST", "/api/v1/keys", `{"name":"ci"}`); res.StatusCode != 401 {
		t.Errorf("create key signed out = %d, want 401", res.StatusCode)
	}
	csrf := b.signUp("dev@example.com", "developer-pw")
	if res, body := b.json("POST", "/api/v1/keys", `{"name":"ci"}`); res.StatusCode != 403 {
		t.Errorf("create key without CSRF token = %d %s, want 403", res.StatusCode, body)
	}
	res, body := b.json("POST", "/api/v1/keys", `{"name":"ci"}`, HeaderCSRFToken, csrf)
	var created newKeyResponse
	if res.StatusCode != 201 || json.Unmarshal([]byte(body), &created) != nil || created.Key == "" || created.Secret == "" {
		t.Fatalf("create key = %d %s", res.StatusCode, body)
	}
	res, body = b.json("GET", "/api/v1/keys", "")
	if res.StatusCode != 200 || !strings.Contains(body, created.Key) || strings.Contains(body, created.Secret) || strings.Contains(body, "secret") {
		t.Errorf("list keys = %d %s; want the key without any secret", res.StatusCode, body)
	}

	ask := func(domain, key, secret string) (int, string) {
		w := env.request("GET", "/api/v1/domains/available?domain="+domain, "", "x-api-key", key, "x-api-secret", secret)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	if code, body := ask("example.com", created.Key, created.Secret); code != 200 {
		t.Errorf("availability with the key = %d %s", code, body)
	}

	if res, _ := b.json("DELETE", "/api/v1/keys/"+created.Key, ""); res.StatusCode != 403 {
		t.Errorf("revoke without CSRF token = %d, want 403", res.StatusCode)
	}
	if res, _ := b.json("DELETE", "/api/v1/keys/"+created.Key, "", HeaderCSRFToken, csrf); res.StatusCode != 204 {
		t.Errorf("revoke = %d, want 204", res.StatusCode)
	}
	if res, body := b.json("DELETE", "/api/v1/keys/"+created.Key, "", HeaderCSRFToken, csrf); res.StatusCode != 404 {
		t.Errorf("revoke again = %d %s, want 404", res.StatusCode, body)
	}
	if code, body := ask("example.com", created.Key, created.Secret); code != 401 || body != `{"error":"invalid API key or secret"}` {
		t.Errorf("availability with a revoked key = %d %s, want the legacy 401", code, body)
	}

	// Another user cannot see or revoke the first user's keys.
	other := newBrowser(t, env)
	otherCSRF := other.signUp("other@example.com", "other-password")
	res, body = b.json("POST", "/api/v1/keys", ``, HeaderCSRFToken, csrf)
	json.Unmarshal([]byte(body), &created)
	if res, _ := other.json("DELETE", "/api/v1/keys/"+created.Key, "", HeaderCSRFToken, otherCSRF); res.StatusCode != 404 {
		t.Errorf("another user's revoke = %d, want 404", res.StatusCode)
	}
	if _, body := other.json("GET", "/api/v1/keys", ""); strings.Contains(body, created.Key) {
		t.Errorf("another user lists the key: %s", body)
	}
}

// developerKey signs a developer up and makes a key for the v1 API.
func developerKey(t *testing.T, env *testEnv) newKeyResponse {
	t.Helper()
	b := newBrowser(t, env)
	csrf := b.signUp("dev@example.com", "developer-pw")
	_, body := b.json("POST", "/api/v1/keys", `{}`, HeaderCSRFToken, csrf)
	var k newKeyResponse
	if err := json.Unmarshal([]byte(body), &k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestMarketAvailability(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	k := developerKey(t, env)
	cents := func(v int64) *int64 { return &v }
	lockedUntil := env.now.Add(5 * time.Minute)
	expired := env.now.Add(-time.Minute)
	for _, l := range []models.Listing{
		{Domain: "forsale.com", TLD: "com", BINCents: cents(250000), FloorCents: cents(99900), Approved: true, MarketplaceVisible: true},
		{Domain: "held.io", TLD: "io", BINCents: cents(5000), Approved: true, MarketplaceVisible: true, LockedUntil: &lockedUntil},
		{Domain: "washeld.io", TLD: "io", BINCents: cents(5000), Approved: true, MarketplaceVisible: true, LockedUntil: &expired},
		{Domain: "pending.com", TLD: "com", BINCents: cents(100), Approved: false, MarketplaceVisible: true},
		{Domain: "hidden.com", TLD: "com", BINCents: cents(100), Approved: true, MarketplaceVisible: false},
	} {
		l.ID, l.Currency = models.NewID(), "USD"
		if err := env.db.Create(&l).Error; err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query string
		want  string
	}{
		{"FORSALE.com", `{"domain":"forsale.com","available":true,"locked":false,"bin_price":2500.00,"floor_price":999.00}`},
		{"held.io", `{"domain":"held.io","available":false,"locked":true,"bin_price":50.00,"floor_price":null}`},
		{"washeld.io", `{"domain":"washeld.io","available":true,"locked":false,"bin_price":50.00,"floor_price":null}`},
		{"pending.com", `{"domain":"pending.com","available":false,"locked":false,"bin_price":null,"floor_price":null}`},
		{"hidden.com", `{"domain":"hidden.com","available":false,"locked":false,"bin_price":null,"floor_price":null}`},
		{"unlisted.net", `{"domain":"unlisted.net","available":false,"locked":false,"bin_price":null,"floor_price":null}`},
		// A host name asks about its registrable domain, as search and WHOIS do.
		{"www.forsale.com", `{"domain":"forsale.com","available":true,"locked":false,"bin_price":2500.00,"floor_price":999.00}`},
	}
	for _, tc := range tests {
		w := env.request("GET", "/api/v1/domains/available?domain="+tc.query, "", "x-api-key", k.Key, "x-api-secret", k.Secret)
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != tc.want {
			t.Errorf("%s = %d %s\nwant %s", tc.query, w.Code, w.Body, tc.want)
		}
	}

	bad := []struct {
		name, path, key, secret string
		want                    int
	}{
		{"no domain", "/api/v1/domains/available", k.Key, k.Secret, 400},
		{"empty domain", "/api/v1/domains/available?domain=", k.Key, k.Secret, 400},
		{"invalid domain", "/api/v1/domains/available?domain=not..valid", k.Key, k.Secret, 400},
		{"no key", "/api/v1/domains/available?domain=a.com", "", k.Secret, 401},
		{"no secret", "/api/v1/domains/available?domain=a.com", k.Key, "", 401},
		{"unknown key", "/api/v1/domains/available?domain=a.com", "dk_000000000000000000000000", k.Secret, 401},
		{"key not UTF-8", "/api/v1/domains/available?domain=a.com", "dk_\xff", k.Secret, 401}, // Postgres refuses to look it up
		{"wrong secret", "/api/v1/domains/available?domain=a.com", k.Key, k.Secret + "x", 401},
	}
	var unknownKeyBody, wrongSecretBody string
	for _, tc := range bad {
		w := env.request("GET", tc.path, "", "x-api-key", tc.key, "x-api-secret", tc.secret)
		var legacy struct {
			Error string `json:"error"`
		}
		if w.Code != tc.want || json.Unmarshal(w.Body.Bytes(), &legacy) != nil || legacy.Error == "" {
			t.Errorf("%s = %d %s, want %d in the legacy shape", tc.name, w.Code, w.Body, tc.want)
		}
		switch tc.name {
		case "unknown key":
			unknownKeyBody = w.Body.String()
		case "wrong secret":
			wrongSecretBody = w.Body.String()
		}
	}
	if unknownKeyBody != wrongSecretBody {
		t.Errorf("unknown key %s and wrong secret %s answer differently", unknownKeyBody, wrongSecretBody)
	}
}
