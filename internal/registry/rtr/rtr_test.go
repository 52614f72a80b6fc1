package rtr

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/registry"
)

const priceListBody = `{"prices":[
 {"product":"domain_com","action":"CREATE","currency":"USD","price":1099},
 {"product":"domain_com","action":"RENEW","currency":"USD","price":1199},
 {"product":"domain_com","action":"TRANSFER","currency":"USD","price":1099},
 {"product":"domain_com","action":"RESTORE","currency":"USD","price":8000},
 {"product":"domain_com","action":"PUSH_TRANSFER","currency":"USD","price":0},
 {"product":"domain_nl","action":"CREATE","currency":"USD","price":599},
 {"product":"domain_nl","action":"CREATE","currency":"EUR","price":550},
 {"product":"ssl_dv","action":"CREATE","currency":"USD","price":999}
],"priceChanges":[],"promos":[]}`

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newServer answers like the API, counting requests per path.
func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (*Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "ApiKey test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"AuthenticationError","message":"bad key"}`))
			return
		}
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/v2", "test-key", "acme")
	if err != nil {
		t.Fatal(err)
	}
	c.BackoffFunc = func(int) time.Duration { return time.Millisecond }
	return c, &calls
}

func TestTLDInfoFromRecordedAnswer(t *testing.T) {
	com := fixture(t, "tldinfo_com.json")
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2/tlds/com/info":
			w.Write(com)
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"Tld not found"}`))
		}
	})
	info, err := c.TLDInfo(context.Background(), "com")
	if err != nil {
		t.Fatal(err)
	}
	if info.Provider != "Verisign" || len(info.Metadata.CreateDomainPeriods) != 10 || info.Metadata.Nameservers.Max != 10 {
		t.Errorf("info = %+v", info)
	}
	if _, err := c.TLDInfo(context.Background(), "nope"); !errors.Is(err, registry.ErrUnknownTLD) {
		t.Errorf("unknown TLD err = %v, want ErrUnknownTLD", err)
	}
}

func TestPricesAndTLDs(t *testing.T) {
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/customers/acme/pricelist" || r.URL.Query().Get("currency") != "USD" {
			t.Errorf("request %s?%s", r.URL.Path, r.URL.RawQuery)
		}
		w.Write([]byte(priceListBody))
	})
	prices, err := c.Prices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []registry.Price{
		{TLD: "com", Op: "register", Cents: 1099, Currency: "USD"}, {TLD: "com", Op: "renew", Cents: 1199, Currency: "USD"}, {TLD: "com", Op: "transfer", Cents: 1099, Currency: "USD"},
		{TLD: "com", Op: "restore", Cents: 8000, Currency: "USD"}, {TLD: "nl", Op: "register", Cents: 599, Currency: "USD"},
	}
	if !reflect.DeepEqual(prices, want) {
		t.Errorf("prices (-want +got)\n-%v\n+%v", want, prices)
	}
	tlds, err := c.TLDs(context.Background())
	if err != nil || !reflect.DeepEqual(tlds, []string{"com", "nl"}) {
		t.Errorf("TLDs = %v, %v", tlds, err)
	}
}

func TestRetriesRateLimitsAndServerErrors(t *testing.T) {
	var n atomic.Int32
	c, calls := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.Write([]byte(`{"available":false,"reason":"IN_USE"}`))
		}
	})
	got, err := c.Check(context.Background(), "google.com")
	if err != nil {
		t.Fatal(err)
	}
	if got.Available || got.Reason != "in_use" || calls.Load() != 3 {
		t.Errorf("check = %+v after %d calls; want unavailable after 3", got, calls.Load())
	}
}

func TestGivesUpAfterRetries(t *testing.T) {
	c, calls := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"type":"ServiceUnavailable","message":"maintenance"}`))
	})
	_, err := c.Check(context.Background(), "example.com")
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Message != "maintenance" {
		t.Errorf("err = %v, want the 503 API error", err)
	}
	if calls.Load() != int32(c.Retries+1) {
		t.Errorf("calls = %d, want %d", calls.Load(), c.Retries+1)
	}
}

func TestDoesNotRetryClientErrors(t *testing.T) {
	c, calls := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"type":"ValidationError","message":"invalid domain name"}`))
	})
	if _, err := c.Check(context.Background(), "-bad-.com"); err == nil {
		t.Fatal("want an error")
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", calls.Load())
	}
	c.apiKey = "wrong"
	var apiErr *Error
	if _, err := c.TLDInfo(context.Background(), "com"); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Errorf("wrong key err = %v, want 401", err)
	}
}

func TestCheckPremium(t *testing.T) {
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/domains/bet.app/check" {
			t.Errorf("path %s", r.URL.Path)
		}
		w.Write([]byte(`{"available":true,"premium":true,"currency":"USD","price":250000}`))
	})
	got, err := c.Check(context.Background(), "bet.app")
	if err != nil || !got.Available || !got.Premium || got.Cents != 250000 || got.Currency != "USD" {
		t.Errorf("check = %+v, %v", got, err)
	}
}

func TestUpdateDomainSendsTheStatesToSet(t *testing.T) {
	type call struct {
		method, path string
		body         map[string]any
	}
	var calls []call
	var mu sync.Mutex
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		calls = append(calls, call{r.Method, r.URL.Path, body})
		mu.Unlock()
		switch {
		case r.Method == "GET" && r.URL.Path == "/v2/domains/example.com":
			w.Write([]byte(`{"domainName":"example.com","status":["CLIENT_DELETE_PROHIBITED","SERVER_UPDATE_PROHIBITED"]}`))
		case r.Method == "GET":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"domain not found"}`))
		case strings.HasPrefix(r.URL.Path, "/v2/customers/acme/contacts/"):
			w.WriteHeader(http.StatusConflict) // created by an earlier try
			w.Write([]byte(`{"type":"ObjectExists","message":"contact exists"}`))
		case r.URL.Path == "/v2/domains/gone.com/update":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"domain not found"}`))
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	ctx := context.Background()
	locked := true
	if err := c.UpdateDomain(ctx, "example.com", registry.Update{Locked: &locked}, "item-1"); err != nil {
		t.Fatal(err)
	}
	details := &registry.ContactDetails{Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44.2071234567", Street: "1 Main St", City: "London", PostalCode: "N1 1AA", Country: "GB"}
	err := c.UpdateDomain(ctx, "example.com", registry.Update{
		Nameservers: []string{"ns1.example.net", "ns2.example.net"},
		Contacts:    map[string]registry.Contact{"registrant": {Handle: "acme-01"}, "tech": {Details: details}},
	}, "item-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateDomain(ctx, "gone.com", registry.Update{Locked: &locked}, "item-3"); !errors.Is(err, registry.ErrDomainNotHeld) {
		t.Errorf("update of an unknown domain: %v, want ErrDomainNotHeld", err)
	}
	want := []call{
		{"GET", "/v2/domains/example.com", nil},
		{"POST", "/v2/domains/example.com/update", map[string]any{"status": []any{"CLIENT_DELETE_PROHIBITED", "CLIENT_TRANSFER_PROHIBITED"}}},
		{"POST", "/v2/customers/acme/contacts/dd-tec-item2", map[string]any{
			"name": "Ada Lovelace", "addressLine": []any{"1 Main St"}, "postalCode": "N1 1AA", "city": "London",
			"country": "GB", "email": "ada@example.com", "voice": "+44.2071234567"}},
		{"POST", "/v2/domains/example.com/update", map[string]any{
			"ns": []any{"ns1.example.net", "ns2.example.net"}, "registrant": "acme-01",
			"contacts": []any{map[string]any{"role": "TECH", "handle": "dd-tec-item2"}}}},
		{"GET", "/v2/domains/gone.com", nil},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls:\n got %+v\nwant %+v", calls, want)
	}
}

func TestUpdateDomainUnlockKeepsOtherStatusesAndRetriesServerErrors(t *testing.T) {
	var bodies []string
	c, calls := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			w.Write([]byte(`{"status":["CLIENT_TRANSFER_PROHIBITED","CLIENT_UPDATE_PROHIBITED"]}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	unlocked := false
	err := c.UpdateDomain(context.Background(), "example.com", registry.Update{Locked: &unlocked}, "item-1")
	if !errors.Is(err, registry.ErrTransient) {
		t.Errorf("err = %v, want a transient failure after the retries", err)
	}
	if n := calls.Load(); n != int32(1+c.Retries+1) {
		t.Errorf("%d requests, want a read and %d updates", n, c.Retries+1)
	}
	if bodies[0] != `{"status":["CLIENT_UPDATE_PROHIBITED"]}` || bodies[len(bodies)-1] != bodies[0] {
		t.Errorf("bodies = %q, want each to drop only the transfer lock", bodies)
	}
	var empty []string
	if got := withLock(empty, false); got == nil || len(got) != 0 {
		t.Errorf("withLock(none, false) = %#v, want an empty list (which clears)", got)
	}
}

func TestPushDomain(t *testing.T) {
	var got struct {
		path, recipient string
	}
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Recipient string }
		json.NewDecoder(r.Body).Decode(&body)
		got.path, got.recipient = r.Method+" "+r.URL.Path, body.Recipient
		if body.Recipient == "unknown" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"Customer not found"}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	if err := c.PushDomain(context.Background(), "bigsale.com", "buyer-registrar", "push-1"); err != nil {
		t.Fatal(err)
	}
	if got.path != "POST /v2/domains/bigsale.com/transfer/push" || got.recipient != "buyer-registrar" {
		t.Errorf("sent %q with recipient %q", got.path, got.recipient)
	}
	if err := c.PushDomain(context.Background(), "bigsale.com", "unknown", "push-2"); !errors.Is(err, registry.ErrPushRefused) {
		t.Errorf("a 404 of a domain still held = %v, want ErrPushRefused", err)
	}
}

// A push whose answer was lost is asked again, and the registry refuses
// the repeat: the domain has left the account. That push is done, not
// refused. A refusal that answers the first request stays one though the
// domain is gone, and a repeat's refusal whose holding cannot be read is
// retried. A repeat refused while the account still holds the domain is
// neither done nor refused: the lost request may have started a push
// process the registry has not finished (its 202).
func TestARepeatedPushOfADomainAlreadyPushedIsDone(t *testing.T) {
	var pushed, pending atomic.Bool
	var holdingDown atomic.Bool
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && !pushed.Load():
			pushed.Store(true) // the push is made, and its answer lost
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"Domain not found"}`))
		case holdingDown.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
		case pushed.Load() && !pending.Load():
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"ObjectDoesNotExist","message":"Domain not found"}`))
		default:
			w.Write([]byte(`{"domainName":"bigsale.com","status":[]}`))
		}
	})
	if err := c.PushDomain(context.Background(), "bigsale.com", "buyer-registrar", "push-1"); err != nil {
		t.Errorf("a push made, its answer lost and its repeat refused = %v, want it done", err)
	}
	if err := c.PushDomain(context.Background(), "bigsale.com", "buyer-registrar", "push-2"); !errors.Is(err, registry.ErrPushRefused) {
		t.Errorf("a first answer that refuses, the domain gone from the account = %v, want ErrPushRefused", err)
	}
	pushed.Store(false)
	holdingDown.Store(true)
	if err := c.PushDomain(context.Background(), "bigsale.com", "buyer-registrar", "push-3"); !errors.Is(err, registry.ErrTransient) || errors.Is(err, registry.ErrPushRefused) {
		t.Errorf("a repeat's refusal whose holding cannot be read = %v, want a temporary failure", err)
	}
	pushed.Store(false)
	holdingDown.Store(false)
	pending.Store(true)
	err := c.PushDomain(context.Background(), "bigsale.com", "buyer-registrar", "push-4")
	if err == nil || errors.Is(err, registry.ErrTransient) || errors.Is(err, registry.ErrPushRefused) || !strings.Contains(err.Error(), "still holds") {
		t.Errorf("a repeat refused while the account still holds the domain = %v, want an outcome left unknown", err)
	}
}
