package partner_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
)

type checkoutSession struct {
	ID          string    `json:"id"`
	CheckoutURL string    `json:"checkout_url"`
	ExpiresAt   time.Time `json:"expires_at"`
}

const (
	returnURL = "https://shop.example.com/thanks?ref=42"
	cancelURL = "https://shop.example.com/cheapflightsnow"
)

// openCheckout opens a checkout of domain for c and returns it.
func openCheckout(t *testing.T, c *partnerclient.Client, domain string) checkoutSession {
	t.Helper()
	var s checkoutSession
	err := c.PostJSON(context.Background(), "/api/partner/v1/checkout-session",
		map[string]string{"domain": domain, "return_url": returnURL, "cancel_url": cancelURL, "buyer_email": "Ada@Example.com"}, &s)
	if err != nil {
		t.Fatalf("checkout session of %s: %v", domain, err)
	}
	return s
}

// buyer is a browser without JavaScript: a cookie jar, and redirects
// reported rather than followed.
type buyer struct {
	t    *testing.T
	e    *env
	http *http.Client
}

func (e *env) buyer(t *testing.T) *buyer {
	jar, _ := cookiejar.New(nil)
	return &buyer{t: t, e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is an answer of the checkout pages.
type page struct {
	status   int
	location string
	body     string
	header   http.Header
}

func (b *buyer) do(r *http.Request) page {
	b.t.Helper()
	res, err := b.http.Do(r)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, location: res.Header.Get("Location"), body: string(body), header: res.Header}
}

// open follows a checkout link (on the base URL, http://api.test) to the
// test's server.
func (b *buyer) open(link string) page {
	b.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.t.Fatal(err)
	}
	r, _ := http.NewRequest("GET", b.e.url+u.RequestURI(), nil)
	return b.do(r)
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// form is the hidden fields of a checkout page.
func form(t *testing.T, p page) url.Values {
	t.Helper()
	v := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(p.body, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	if v.Get("pt") == "" || v.Get("csrf_token") == "" {
		t.Fatalf("page %d has no payment form: %s", p.status, p.body)
	}
	return v
}

// submit posts the checkout form: the page's hidden fields, a card and
// the buyer.
func (b *buyer) submit(hidden url.Values, card string) page {
	b.t.Helper()
	v := url.Values{"card_number": {card}, "expiry": {"12/30"}, "cvc": {"123"}, "name": {"Ada Buyer"},
		"email": {"ada@example.com"}, "country": {"nl"}}
	for k := range hidden {
		v.Set(k, hidden.Get(k))
	}
	r, _ := http.NewRequest("POST", b.e.url+"/checkout", strings.NewReader(v.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(r)
}

// pay opens link and pays with card.
func (b *buyer) pay(link, card string) page {
	b.t.Helper()
	p := b.open(link)
	if p.status != 200 {
		b.t.Fatalf("checkout page = %d: %s", p.status, p.body)
	}
	return b.submit(form(b.t, p), card)
}

func (e *env) count(model any, where string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Model(model).Where(where, args...).Count(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestCheckoutSessionCreation: scope, fields, the listing of the
// credential's environment, and the link.
func TestCheckoutSessionCreation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.addSandbox("cheapflightsnow.com", 120_000)
	e.addLive("livename.com", 90_000)
	c := e.client(e.credential(models.EnvSandbox, "embed"), 0)

	err := e.client(e.credential(models.EnvSandbox, "buy", "search"), 0).PostJSON(ctx, "/api/partner/v1/checkout-session",
		map[string]string{"domain": "cheapflightsnow.com", "return_url": returnURL, "cancel_url": cancelURL}, nil)
	if ae := wantAPIError(t, "without the embed scope", err, 403, "forbidden"); !strings.Contains(ae.Message, "embed") {
		t.Errorf("403 message %q does not name the scope", ae.Message)
	}

	for _, tc := range []struct {
		name, field string
		body        map[string]string
	}{
		{"no domain", "domain", map[string]string{"return_url": returnURL, "cancel_url": cancelURL}},
		{"no return_url", "return_url", map[string]string{"domain": "cheapflightsnow.com", "cancel_url": cancelURL}},
		{"return_url not http", "return_url", map[string]string{"domain": "cheapflightsnow.com", "return_url": "javascript:alert(1)", "cancel_url": cancelURL}},
		{"return_url with a password", "return_url", map[string]string{"domain": "cheapflightsnow.com", "return_url": "https://u:p@shop.example.com/", "cancel_url": cancelURL}},
		{"cancel_url relative", "cancel_url", map[string]string{"domain": "cheapflightsnow.com", "return_url": returnURL, "cancel_url": "/back"}},
		{"bad buyer_email", "buyer_email", map[string]string{"domain": "cheapflightsnow.com", "return_url": returnURL, "cancel_url": cancelURL, "buyer_email": "ada@"}},
	} {
		err := c.PostJSON(ctx, "/api/partner/v1/checkout-session", tc.body, nil)
		if ae := wantAPIError(t, tc.name, err, 400, "validation_error"); ae.Field != tc.field {
			t.Errorf("%s: field %q, want %q", tc.name, ae.Field, tc.field)
		}
	}
	for _, domain := range []string{"notlisted.com", "livename.com"} {
		err := c.PostJSON(ctx, "/api/partner/v1/checkout-session", map[string]string{"domain": domain, "return_url": returnURL, "cancel_url": cancelURL}, nil)
		wantAPIError(t, domain+" from a sandbox credential", err, 404, "not_found")
	}

	var s checkoutSession
	body := []byte(`{"domain":"CheapFlightsNow.com","return_url":"` + returnURL + `","cancel_url":"` + cancelURL + `"}`)
	if res := post(t, c, "/api/partner/v1/checkout-session", body, "cs-1", &s); res.StatusCode != 201 {
		t.Fatalf("checkout session = %d %s", res.StatusCode, res.Header.Get("X-Test-Error-Code"))
	}
	if !strings.HasPrefix(s.ID, "cs_") || !strings.HasPrefix(s.CheckoutURL, "http://api.test/checkout?pt=pt1.") || !s.ExpiresAt.Equal(e.now.Add(7*24*time.Hour)) {
		t.Errorf("session = %+v", s)
	}
	var again checkoutSession
	res := post(t, c, "/api/partner/v1/checkout-session", body, "cs-1", &again)
	if res.StatusCode != 201 || res.Header.Get("Idempotent-Replayed") != "true" || again.ID != s.ID {
		t.Errorf("retry = %d (replayed %q) %s, want the first answer", res.StatusCode, res.Header.Get("Idempotent-Replayed"), again.ID)
	}
	if n := e.count(&models.CheckoutSession{}, "domain = ?", "cheapflightsnow.com"); n != 1 {
		t.Errorf("%d sessions stored, want 1", n)
	}

	live := e.client(e.credential(models.EnvLive, "embed"), 0)
	if s := openCheckout(t, live, "livename.com"); s.ID == "" {
		t.Error("no live session")
	}
	err = live.PostJSON(ctx, "/api/partner/v1/checkout-session", map[string]string{"domain": "cheapflightsnow.com", "return_url": returnURL, "cancel_url": cancelURL}, nil)
	wantAPIError(t, "a sandbox name from a live credential", err, 404, "not_found")
}

// TestCheckoutLinks: the page of a good link; a changed, missing or
// unknown token shows an error page (400, 404), an expired one 410.
func TestCheckoutLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("cheapflightsnow.com", 120_000)
	s := openCheckout(t, e.client(e.credential(models.EnvSandbox, "embed"), 0), "cheapflightsnow.com")
	b := e.buyer(t)

	p := b.open(s.CheckoutURL)
	if p.status != 200 || !strings.Contains(p.body, "cheapflightsnow.com") || !strings.Contains(p.body, "1,200.00 USD") ||
		!strings.Contains(p.body, "4242 4242 4242 4242") || !strings.Contains(p.body, `value="ada@example.com"`) || !strings.Contains(p.body, `href="`+html.EscapeString(cancelURL)+`"`) {
		t.Errorf("checkout page = %d %s", p.status, p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://shop.example.com") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q: the form must be able to end at the return_url's origin, and the page not be framed", csp)
	}
	if strings.Contains(p.body, "<script") {
		t.Error("the checkout page has a script")
	}

	pt := strings.TrimPrefix(s.CheckoutURL, "http://api.test/checkout?pt=")
	payload, sig, _ := strings.Cut(strings.TrimPrefix(pt, "pt1."), ".")
	for name, link := range map[string]string{
		"a changed payload":                    "/checkout?pt=pt1." + flipLast(payload[:20]) + payload[20:] + "." + sig,
		"a changed signature":                  "/checkout?pt=pt1." + payload + "." + flipLast(sig[:1]) + sig[1:],
		"a signature's last character changed": "/checkout?pt=" + flipLast(pt),
		"no token":                             "/checkout",
		"another format":                       "/checkout?pt=qt1.abc.def",
	} {
		if p := b.open(link); p.status != 400 || !strings.Contains(p.body, "not valid") || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s = %d %s, want the 400 page", name, p.status, p.body)
		}
	}

	e.db.Where("id = ?", s.ID).Delete(&models.CheckoutSession{})
	if p := b.open(s.CheckoutURL); p.status != 404 {
		t.Errorf("a deleted session = %d, want 404", p.status)
	}

	s = openCheckout(t, e.client(e.credential(models.EnvSandbox, "embed"), 0), "cheapflightsnow.com")
	hidden := form(t, b.open(s.CheckoutURL))
	e.now = e.now.Add(7*24*time.Hour + time.Second)
	if p := b.open(s.CheckoutURL); p.status != 410 || !strings.Contains(p.body, "expired") {
		t.Errorf("an expired link = %d %s, want the 410 page", p.status, p.body)
	}
	if p := b.submit(hidden, "4242 4242 4242 4242"); p.status != 410 {
		t.Errorf("paying an expired link = %d, want 410", p.status)
	}
	if n := e.count(&models.Order{}, "1 = 1"); n != 0 {
		t.Errorf("%d orders after an expired payment", n)
	}
}

// flipLast changes the lowest bit of the last base64url character of s:
// in a signature's last character, a bit that encodes nothing, which only
// a strict decoder refuses.
func flipLast(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1])
}

type hostedOrder struct {
	PublicID           string `json:"public_id"`
	Status             string `json:"status"`
	PaymentModel       string `json:"payment_model"`
	SalePriceCents     int64  `json:"sale_price_cents"`
	ExternalPaymentRef string `json:"external_payment_ref"`
	Buyer              struct {
		Email, Name, Country string
	} `json:"buyer"`
	Timeline []struct {
		Actor string  `json:"actor"`
		Event *string `json:"event"`
	} `json:"timeline"`
}

// TestCheckoutPays: the test card pays; the order is the partner's, PAID
// and hosted with order.paid; the buyer goes back to return_url with it;
// the card's number is nowhere; paying again, or opening the link again,
// goes to the same order.
func TestCheckoutPays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.addSandbox("cheapflightsnow.com", 120_000)
	cred := e.credential(models.EnvSandbox, "embed", "buy", "webhook")
	c := e.client(cred, 0)
	s := openCheckout(t, c, "cheapflightsnow.com")
	b := e.buyer(t)

	page := b.open(s.CheckoutURL)
	hidden := form(t, page)
	p := b.submit(hidden, "4242 4242 4242 4242")
	if p.status != 303 {
		t.Fatalf("payment = %d %s", p.status, p.body)
	}
	back, err := url.Parse(p.location)
	if err != nil || back.Host != "shop.example.com" || back.Path != "/thanks" || back.Query().Get("ref") != "42" ||
		back.Query().Get("session_id") != s.ID || !strings.HasPrefix(back.Query().Get("order_id"), "ord_") {
		t.Fatalf("redirect to %q, want return_url with session_id and order_id", p.location)
	}
	id := back.Query().Get("order_id")

	var o hostedOrder
	if err := c.GetJSON(ctx, "/api/partner/v1/orders/"+id, nil, &o); err != nil {
		t.Fatal(err)
	}
	if o.Status != "PAID" || o.PaymentModel != "hosted" || o.SalePriceCents != 120_000 || !strings.HasPrefix(o.ExternalPaymentRef, "ch_test_") ||
		o.Buyer.Email != "ada@example.com" || o.Buyer.Name != "Ada Buyer" || o.Buyer.Country != "NL" ||
		len(o.Timeline) != 1 || o.Timeline[0].Actor != "buyer" || o.Timeline[0].Event == nil || *o.Timeline[0].Event != "order.paid" {
		t.Errorf("order = %+v", o)
	}
	var events struct {
		Events []struct {
			Type string `json:"type"`
			Data struct {
				Order struct {
					PublicID string `json:"public_id"`
				} `json:"order"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := c.GetJSON(ctx, "/api/partner/v1/events", nil, &events); err != nil {
		t.Fatal(err)
	}
	if len(events.Events) != 1 || events.Events[0].Type != "order.paid" || events.Events[0].Data.Order.PublicID != id {
		t.Errorf("events = %+v, want one order.paid of %s", events.Events, id)
	}
	var cs models.CheckoutSession
	e.db.Take(&cs, "id = ?", s.ID)
	if cs.OrderID == nil || *cs.OrderID != id || cs.CardLast4 != "4242" || cs.ChargeID != o.ExternalPaymentRef {
		t.Errorf("session = %+v", cs)
	}
	var leaks int64
	for _, table := range []string{"checkout_sessions", "orders", "order_steps", "events", "outbox_entries"} {
		var rows []map[string]any
		e.db.Table(table).Find(&rows)
		for _, row := range rows {
			for _, v := range row {
				if s, ok := v.(string); ok && strings.Contains(strings.ReplaceAll(s, " ", ""), "42424242") {
					leaks++
				}
			}
		}
	}
	if leaks > 0 {
		t.Errorf("the card number is stored in %d places", leaks)
	}

	if again := b.submit(hidden, "4242 4242 4242 4242"); again.status != 303 || again.location != p.location {
		t.Errorf("paying again = %d to %q, want the same order %q", again.status, again.location, p.location)
	}
	if again := b.open(s.CheckoutURL); again.status != 303 || again.location != p.location {
		t.Errorf("the link once paid = %d to %q, want on to %q", again.status, again.location, p.location)
	}
	if n := e.count(&models.Order{}, "1 = 1"); n != 1 {
		t.Errorf("%d orders, want 1", n)
	}
	err = c.PostJSON(ctx, "/api/partner/v1/checkout-session", map[string]string{"domain": "cheapflightsnow.com", "return_url": returnURL, "cancel_url": cancelURL}, nil)
	wantAPIError(t, "a checkout of the name once sold", err, 409, "conflict")
}

// TestCheckoutRefusals: a declined card (402, no order, and the next card
// pays), an invalid number (400), a form without its CSRF cookie (403), a
// price that changed (422), a name sold meanwhile (409).
func TestCheckoutRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("cheapflightsnow.com", 120_000)
	e.addSandbox("othername.com", 5_000)
	c := e.client(e.credential(models.EnvSandbox, "embed", "buy"), 0)
	s := openCheckout(t, c, "cheapflightsnow.com")
	b := e.buyer(t)
	hidden := form(t, b.open(s.CheckoutURL))

	p := b.submit(hidden, "4000 0000 0000 0002")
	if p.status != 402 || !strings.Contains(p.body, "declined") || !strings.Contains(p.body, `value="Ada Buyer"`) || strings.Contains(p.body, "4000 0000 0000 0002\"") {
		t.Errorf("a declined card = %d %s, want the page again with the error (the card not sent back)", p.status, p.body)
	}
	if p := b.submit(hidden, "4242 4242 4242 4241"); p.status != 400 || !strings.Contains(p.body, "card number is not valid") {
		t.Errorf("a number failing Luhn = %d %s", p.status, p.body)
	}
	stale := url.Values{}
	for k := range hidden {
		stale.Set(k, hidden.Get(k))
	}
	stale.Set("price_cents", "99000")
	if p := b.submit(stale, "4242 4242 4242 4242"); p.status != 422 || !strings.Contains(p.body, "1,200.00 USD") {
		t.Errorf("a price the page no longer has = %d %s, want 422 with the price now", p.status, p.body)
	}
	if n := e.count(&models.Order{}, "1 = 1"); n != 0 {
		t.Fatalf("%d orders after refusals", n)
	}
	stranger := e.buyer(t) // no CSRF cookie
	if p := stranger.submit(hidden, "4242 4242 4242 4242"); p.status != 403 || !strings.Contains(p.body, "form expired") {
		t.Errorf("a form without its cookie = %d %s, want 403", p.status, p.body)
	}
	if p := b.submit(hidden, "4242 4242 4242 4242"); p.status != 303 {
		t.Errorf("a good card after a declined one = %d %s, want paid", p.status, p.body)
	}

	s = openCheckout(t, c, "othername.com")
	hidden = form(t, b.open(s.CheckoutURL))
	var order struct{}
	if res := post(t, c, "/api/partner/v1/orders", orderBody("othername.com", 5_000, ""), "sold-meanwhile", &order); res.StatusCode != 201 {
		t.Fatalf("order = %d", res.StatusCode)
	}
	if p := b.submit(hidden, "4242 4242 4242 4242"); p.status != 409 || !strings.Contains(p.body, "othername.com is sold") || strings.Contains(p.body, `name="card_number"`) {
		t.Errorf("paying a name sold meanwhile = %d %s, want 409 without the form", p.status, p.body)
	}
	if p := b.open(s.CheckoutURL); p.status != 409 {
		t.Errorf("the page of a sold name = %d, want 409", p.status)
	}
}

// TestCheckoutPaidTwiceAtOnce: double clicks and a second tab submit one
// session at once; one order comes of it, and every answer goes to it.
func TestCheckoutPaidTwiceAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addSandbox("cheapflightsnow.com", 120_000)
	s := openCheckout(t, e.client(e.credential(models.EnvSandbox, "embed"), 0), "cheapflightsnow.com")
	b := e.buyer(t)
	hidden := form(t, b.open(s.CheckoutURL))
	var mu sync.Mutex
	to := map[string]int{}
	parallel(6, func(int) {
		p := b.submit(hidden, "4242 4242 4242 4242")
		mu.Lock()
		defer mu.Unlock()
		if p.status != 303 {
			t.Errorf("a submission = %d %s", p.status, p.body)
		}
		to[p.location]++
	})
	orders := e.count(&models.Order{}, "1 = 1")
	events := e.count(&models.Event{}, "type = ?", "order.paid")
	if len(to) != 1 || orders != 1 || events != 1 {
		t.Errorf("redirects %v, %d orders, %d order.paid events; want every submission at one order", to, orders, events)
	}
}
