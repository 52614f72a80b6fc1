package partnerclient_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/domaind/domaind/partnerclient"
)

// A signed search. The stand-in for domaind prints what arrives: the query
// in its canonical form (the space sent as %20) and the four signing
// headers.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.RequestURI())
		for _, h := range []string{"X-Service-Key-Id", "X-Service-Timestamp", "X-Service-Nonce", "X-Service-Signature"} {
			fmt.Printf("%s: %s\n", h, r.Header.Get(h))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"results":[{"domain":"redcar.com","price_cents":250000,"currency":"USD"}]}`)
	}))
	defer srv.Close()

	c := partnerclient.New(srv.URL, "pk_test_1", "sk_test_51c0ffee",
		// A fixed clock and nonce make this example's signature repeatable;
		// leave both out in real use.
		partnerclient.WithClock(func() time.Time { return time.Unix(1767225600, 0) }),
		partnerclient.WithNonces(func() string { return "3f1c9a52-7d4e-4b8a-9e21-5c6d7e8f9a0b" }))

	var res struct {
		Results []struct {
			Domain     string `json:"domain"`
			PriceCents int64  `json:"price_cents"`
			Currency   string `json:"currency"`
		} `json:"results"`
	}
	query := url.Values{"q": {"red car"}, "tld": {"net", "com"}}
	if err := c.GetJSON(context.Background(), "/api/partner/v1/domains/search", query, &res); err != nil {
		log.Fatal(err) // an *partnerclient.APIError for an answer other than 2xx
	}
	for _, d := range res.Results {
		fmt.Println(d.Domain, d.PriceCents, d.Currency)
	}
	// Output:
	// GET /api/partner/v1/domains/search?q=red%20car&tld=com&tld=net
	// X-Service-Key-Id: pk_test_1
	// X-Service-Timestamp: 1767225600
	// X-Service-Nonce: 3f1c9a52-7d4e-4b8a-9e21-5c6d7e8f9a0b
	// X-Service-Signature: v1=3d5bb4806678108b341e5000a0328577864a32dccda1852b279b54e3b4c58afe
	// redcar.com 250000 USD
}

// A webhook receiver: it checks the signature over the raw body before
// anything else, answers at once, and leaves the work to a queue.
func ExampleVerify() {
	const secret = "whsec_partner_1" // the secret you registered with PUT /api/partner/webhooks
	receive := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !partnerclient.Verify(body, r.Header.Get("X-Service-Signature"), secret) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Queue body for processing (events may repeat: handle each id once)
		// and answer 200 within 5 seconds.
		w.WriteHeader(http.StatusOK)
	}

	event := `{"id":"evt_1","type":"order.recorded","created_at":"2026-01-01T00:00:00Z","partner_id":"ptn_1","data":{"order":{"public_id":"ord_1"}}}`
	for _, body := range []string{event, strings.Replace(event, "ord_1", "ord_2", 1)} {
		req := httptest.NewRequest(http.MethodPost, "/hooks/domaind", strings.NewReader(body))
		req.Header.Set("X-Service-Signature", "08ba657dc63974350efe1f304f0a8098060c68b1bc17653a63714ede96aa1318")
		rec := httptest.NewRecorder()
		receive(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// 200
	// 401
}
