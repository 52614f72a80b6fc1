package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/partnerclient"
)

// TestDemoPartnerFirstMinutes is the partner README's walk on `make run`:
// take the demo key from the start-up text, make a signed search, register
// a webhook receiver, send the test event, and see it delivered (by the
// worker, signed) and in the history; open a hosted checkout with the
// script and see its page.
func TestDemoPartnerFirstMinutes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0") // a receiver the fetch guard is told to allow, as a test must
	if err != nil {
		t.Fatal(err)
	}
	const hookSecret = "whsec_my_receiver_secret"
	var mu sync.Mutex
	var got []struct{ body, sig, id string }
	rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, struct{ body, sig, id string }{string(b), r.Header.Get("X-Service-Signature"), r.Header.Get("X-Service-Event-Id")})
		mu.Unlock()
	}))
	rcv.Listener.Close()
	rcv.Listener = ln
	rcv.Start()
	defer rcv.Close()

	addr := testtool.FreeAddr(t)
	env := map[string]string{"DOMAIND_DATA_DIR": t.TempDir(), "DOMAIND_HTTP_ADDR": addr, "DOMAIND_FETCH_ALLOW_CIDRS": "127.0.0.2/32"}
	stdout, stderr, cancel, done := startEmbedded(t, env)
	defer func() { cancel(); <-done }()

	_, rest, _ := strings.Cut(stdout.String(), "Partner key    id ")
	fields := strings.Fields(rest)
	if len(fields) < 3 || fields[1] != "secret" {
		t.Fatalf("no partner key in the start-up text:\n%s", stdout)
	}
	keyID, secret := fields[0], fields[2]
	c := partnerclient.New("http://"+addr, keyID, secret)
	ctx := context.Background()

	var found struct {
		Results []struct{ Domain string } `json:"results"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"cheap flights"}}, &found); err != nil {
		t.Fatalf("signed search: %v", err)
	}
	if len(found.Results) == 0 {
		t.Fatal("the demo sandbox has nothing for cheap flights")
	}
	// The README's shell script signs the same way (registering the
	// receiver with it, when sh, openssl and curl are there).
	registered := false
	t.Run("shell script", func(t *testing.T) {
		for _, tool := range []string{"sh", "openssl", "curl"} {
			testtool.Path(t, "the README's shell example runs on it", tool)
		}
		script := func(args ...string) string { return partnerScript(t, addr, keyID, secret, "", args...) }
		if out := script("GET", "/api/partner/v1/domains/search", "q=cheap%20flights"); !strings.Contains(out, `"results":[{"domain"`) {
			t.Errorf("signed search by the script: %s", out)
		}
		body := `{"url":"` + rcv.URL + `/hooks","secret":"` + hookSecret + `"}`
		if out := script("PUT", "/api/partner/webhooks", "", body); !strings.Contains(out, `"active":true`) {
			t.Errorf("webhook registration by the script: %s", out)
		}
		registered = true
		out := script("POST", "/api/partner/v1/checkout-session", "",
			`{"domain":"cheapflightsnow.com","return_url":"https://shop.example.com/thanks","cancel_url":"https://shop.example.com/"}`)
		_, link, _ := strings.Cut(out, `"checkout_url":"`)
		link, _, _ = strings.Cut(link, `"`)
		u, err := url.Parse(link)
		if err != nil || u.Path != "/checkout" {
			t.Fatalf("hosted checkout by the script: %s", out)
		}
		res, err := http.Get("http://" + addr + u.RequestURI())
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(page), "Buy cheapflightsnow.com") || !strings.Contains(string(page), "4242 4242 4242 4242") {
			t.Errorf("the checkout page = %d %s", res.StatusCode, page)
		}
	})
	if !registered {
		if err := c.PutJSON(ctx, "/api/partner/webhooks", map[string]string{"url": rcv.URL + "/hooks", "secret": hookSecret}, nil); err != nil {
			t.Fatalf("register the receiver: %v", err)
		}
	}
	var ev struct{ ID string }
	if err := c.PostJSON(ctx, "/api/partner/v1/webhooks/test", nil, &ev); err != nil {
		t.Fatalf("send the test event: %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the test event was not delivered within 20 s")
		}
	}
	mu.Lock()
	first := got[0]
	mu.Unlock()
	if first.id != ev.ID || !partnerclient.Verify([]byte(first.body), first.sig, hookSecret) {
		t.Errorf("delivered event %s with signature %q; want %s, validly signed", first.id, first.sig, ev.ID)
	}
	var hist struct {
		Events []struct{ ID, Type string } `json:"events"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/events", nil, &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Events) != 1 || hist.Events[0].ID != ev.ID || hist.Events[0].Type != "webhook.test" {
		t.Errorf("history = %+v, want the test event", hist.Events)
	}
	if strings.Contains(stderr.String(), secret) || strings.Contains(stderr.String(), hookSecret) {
		t.Error("the log shows a secret")
	}
	t.Run("shell script order", func(t *testing.T) {
		for _, tool := range []string{"sh", "openssl", "curl"} {
			testtool.Path(t, "the README's shell example runs on it", tool)
		}
		// An order, which needs an Idempotency-Key: sent twice with one key,
		// the second answer is the first order replayed.
		var quote struct {
			QuoteID    string `json:"quote_id"`
			PriceCents int64  `json:"price_cents"`
		}
		if out := partnerScript(t, addr, keyID, secret, "", "POST", "/api/partner/v1/quotes", "", `{"domain":"cheaptrips.shop"}`); json.Unmarshal([]byte(out), &quote) != nil || quote.QuoteID == "" {
			t.Fatalf("a quote by the script: %s", out)
		}
		order := fmt.Sprintf(`{"domain":"cheaptrips.shop","expected_price":%d,"currency":"USD","quote_id":%q,"external_payment_ref":"ch_script","buyer":{"email":"ada@example.com","name":"Ada","country":"NL"}}`,
			quote.PriceCents, quote.QuoteID)
		first := partnerScript(t, addr, keyID, secret, "script-order-1", "POST", "/api/partner/v1/orders", "", order)
		again := partnerScript(t, addr, keyID, secret, "script-order-1", "POST", "/api/partner/v1/orders", "", order)
		_, id, _ := strings.Cut(first, `"public_id":"`)
		id, _, _ = strings.Cut(id, `"`)
		if !strings.HasPrefix(id, "ord_") || !strings.Contains(again, `"public_id":"`+id+`"`) {
			t.Errorf("an order by the script, sent twice with one Idempotency-Key: %s then %s", first, again)
		}
	})
}

// partnerScript runs docs/examples/partner-curl.sh with args against the
// service at addr, signing with keyID and secret and sending
// idempotencyKey (none when empty), and returns what it printed.
func partnerScript(t *testing.T, addr, keyID, secret, idempotencyKey string, args ...string) string {
	t.Helper()
	cmd := exec.Command("../../docs/examples/partner-curl.sh", args...)
	cmd.Env = append(os.Environ(), "DOMAIND_URL=http://"+addr, "DOMAIND_KEY_ID="+keyID, "DOMAIND_SECRET="+secret,
		"IDEMPOTENCY_KEY="+idempotencyKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("partner-curl.sh %v: %v\n%s", args, err, out)
	}
	return string(out)
}
