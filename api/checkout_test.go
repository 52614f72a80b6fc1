package api

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/partnerclient"
	"github.com/domaind/domaind/tasks"
)

// checkoutPartner is an approved partner with a credential of environment
// (scopes embed and buy), signing on the env's clock against base.
func checkoutPartner(t *testing.T, env *testEnv, base, environment string) *partnerclient.Client {
	t.Helper()
	ctx := context.Background()
	p, err := env.srv.svc.Partners.Create(ctx, "Sunset Domains", "ops@sunset.test")
	if err == nil {
		_, err = env.srv.svc.Partners.Approve(ctx, p.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	cred, err := env.srv.svc.Partners.IssueCredential(ctx, p.ID, environment, []string{"embed", "buy"})
	if err != nil {
		t.Fatal(err)
	}
	return partnerclient.New(base, cred.KeyID, cred.Secret, partnerclient.WithClock(func() time.Time { return env.now }),
		partnerclient.WithRetryPolicy(partnerclient.RetryPolicy{MaxAttempts: 1}))
}

// listSandbox puts domain in the sandbox inventory at binCents.
func listSandbox(t *testing.T, env *testEnv, domain string, binCents int64) {
	t.Helper()
	l := models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: domain[strings.LastIndexByte(domain, '.')+1:],
		BINCents: &binCents, Currency: "USD", CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
}

// payWithCard fills the checkout page's card form as a buyer does and
// submits it.
func payWithCard(card string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SendKeys(chromedp.CSS("#card_number"), card),
		chromedp.SendKeys(chromedp.CSS("#expiry"), "12/30"),
		chromedp.SendKeys(chromedp.CSS("#cvc"), "123"),
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada Buyer"),
		chromedp.SendKeys(chromedp.CSS("#country"), "NL"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	)
}

// A buyer pays a hosted checkout in a real browser, under the page's CSP
// and without JavaScript: the test card pays and the browser lands on the
// partner's return_url with the order, which the partner then finds; a
// declined card shows the error and makes no order; a changed link and an
// expired one show their pages.
func TestBrowserHostedCheckout(t *testing.T) {
	env, srv := servedEnv(t)
	ctx := newChromium(t)
	listSandbox(t, env, "sunsetyoga.io", 250_000)
	listSandbox(t, env, "rainyday.io", 9_900)
	c := checkoutPartner(t, env, srv.URL, models.EnvSandbox)

	shop := newTestShop(t)
	session := func(domain string) string {
		var s struct {
			CheckoutURL string `json:"checkout_url"`
		}
		err := c.PostJSON(context.Background(), "/api/partner/v1/checkout-session", map[string]string{"domain": domain,
			"return_url": shop.URL + "/return", "cancel_url": shop.URL + "/cancel", "buyer_email": "ada@example.com"}, &s)
		if err != nil || !strings.HasPrefix(s.CheckoutURL, srv.URL+"/checkout?pt=") {
			t.Fatalf("checkout session = %+v, %v", s, err)
		}
		return s.CheckoutURL
	}

	link := session("sunsetyoga.io")
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#card_number"))); err != nil {
		t.Fatalf("checkout page: %v", err)
	}
	checkPage(t, ctx, "checkout")
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	email, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#email")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "sunsetyoga.io") || !strings.Contains(body, "2,500.00 USD") || !strings.Contains(body, "What happens next") ||
		!strings.Contains(body, "Sunset Domains") || !strings.Contains(body, "4242 4242 4242 4242") || email != "ada@example.com" {
		t.Errorf("checkout page = %q (email %q)", body, email)
	}
	if err := chromedp.Do(ctx, payWithCard("4242 4242 4242 4242"), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
		t.Fatalf("paying: %v", err)
	}
	got := shop.landed()
	id := got.Get("order_id")
	var o struct {
		Status       string `json:"status"`
		PaymentModel string `json:"payment_model"`
		Domain       string `json:"domain"`
	}
	if err := c.GetJSON(context.Background(), "/api/partner/v1/orders/"+id, nil, &o); err != nil {
		t.Fatalf("the order the browser brought back (%v): %v", got, err)
	}
	if o.Status != "PAID" || o.PaymentModel != "hosted" || o.Domain != "sunsetyoga.io" || !strings.HasPrefix(got.Get("session_id"), "cs_") {
		t.Errorf("order %s = %+v, return_url got %v", id, o, got)
	}

	declined := session("rainyday.io")
	if err := chromedp.Do(ctx, chromedp.Navigate(declined), payWithCard("4000 0000 0000 0002"), chromedp.WaitVisible(chromedp.CSS("#checkout-error"))); err != nil {
		t.Fatalf("a declined card: %v", err)
	}
	checkPage(t, ctx, "checkout-declined")
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#checkout-error")))
	if err != nil {
		t.Fatal(err)
	}
	var orders int64
	env.db.Model(&models.Order{}).Where("domain = ?", "rainyday.io").Count(&orders)
	if !strings.Contains(msg, "declined") || orders != 0 {
		t.Errorf("declined: message %q, %d orders; want the error and no order", msg, orders)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#cancel")), chromedp.WaitVisible(chromedp.CSS("#cancelled"))); err != nil {
		t.Errorf("the cancel link: %v", err)
	}

	for _, tc := range []struct{ name, link, want string }{
		{"a changed link", strings.Replace(declined, "pt=pt1.", "pt=pt1.x", 1), "not valid"},
		{"an expired link", declined, "expired"},
	} {
		if tc.name == "an expired link" {
			env.now = env.now.Add(8 * 24 * time.Hour)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(tc.link), chromedp.WaitVisible(chromedp.CSS("#checkout-error"))); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#checkout-error"))); err != nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%s shows %q (%v), want %q", tc.name, msg, err, tc.want)
		}
	}
}

// Outside the embedded deployment no provider takes live payments (the
// sandbox's test cards would give names away), so live sessions are
// refused; the sandbox's are not.
func TestLiveCheckoutNeedsAPaymentProvider(t *testing.T) {
	t.Parallel()
	if p := payment.Providers(nil, (&config.Config{}).Embedded(), payment.SandboxOptions{}, nil); p[models.EnvLive] == nil || p[models.EnvSandbox] == nil {
		t.Errorf("embedded providers = %v, want both environments", p)
	}
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	env := newTestEnv(t, func(c *config.Config) {
		c.BaseURL, c.DatabaseURL, c.RedisURL = mustURL(t, srv.URL), "postgres://db.internal/domaind", "redis://redis.internal"
	})
	srv.Config.Handler = env.checkedHandler()
	l := models.Listing{ID: models.NewID(), Domain: "livename.com", TLD: "com", BINCents: new(int64(90_000)), Currency: "USD",
		Approved: true, MarketplaceVisible: true, CreatedAt: env.now}
	if err := env.db.Create(&l).Error; err != nil {
		t.Fatal(err)
	}
	listSandbox(t, env, "sandboxname.com", 9_000)
	body := func(domain string) map[string]string {
		return map[string]string{"domain": domain, "return_url": "https://shop.test/ok", "cancel_url": "https://shop.test/"}
	}
	ctx := context.Background()
	err := checkoutPartner(t, env, srv.URL, models.EnvLive).PostJSON(ctx, "/api/partner/v1/checkout-session", body("livename.com"), nil)
	if ae, ok := err.(*partnerclient.APIError); !ok || ae.Status != 403 || !strings.Contains(ae.Message, "payment provider") {
		t.Errorf("a live session without a provider = %v, want 403 naming the provider", err)
	}
	if err := checkoutPartner(t, env, srv.URL, models.EnvSandbox).PostJSON(ctx, "/api/partner/v1/checkout-session", body("sandboxname.com"), nil); err != nil {
		t.Errorf("a sandbox session: %v", err)
	}
}

// repricer is the sandbox processor whose seller changes the price of the
// name while the card is charged, once set.
type repricer struct {
	*payment.Sandbox
	db    *gorm.DB
	cents atomic.Int64
}

func (r *repricer) Charge(ctx context.Context, ch payment.Charge) (string, error) {
	if c := r.cents.Load(); c != 0 {
		r.db.Model(&models.SandboxListing{}).Where("domain = ?", ch.Description).Update("bin_cents", c)
	}
	return r.Sandbox.Charge(ctx, ch)
}

// checkoutBuyer opens a checkout page in a client of its own and returns
// the form to post, as the page filled it.
func checkoutBuyer(t *testing.T, link string) (*http.Client, url.Values) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	form := url.Values{"card_number": {"4242 4242 4242 4242"}, "expiry": {"12/30"}, "cvc": {"123"}, "name": {"Ada Buyer"},
		"email": {"ada@example.com"}, "country": {"NL"}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`).FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], m[2])
	}
	if res.StatusCode != 200 || form.Get("csrf_token") == "" {
		t.Fatalf("checkout page = %d without its form", res.StatusCode)
	}
	return client, form
}

// A buyer is told what happened to the money, never a 500: a name sold
// to another buyer before the charge is "not charged"; an order that
// cannot be made after the charge (the seller changed the price) is
// "charged" and "refunded", with the refund queued.
func TestCheckoutPagesSayWhatHappenedToTheMoney(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	processor := &repricer{Sandbox: payment.NewSandbox(env.db, payment.SandboxOptions{}), db: env.db}
	env.payments = map[string]payment.Provider{models.EnvSandbox: processor}
	env.rebuild()
	listSandbox(t, env, "onlyone.io", 9_900)
	listSandbox(t, env, "repriced.io", 9_900)
	c := checkoutPartner(t, env, srv.URL, models.EnvSandbox)
	session := func(domain string) string {
		var s struct {
			CheckoutURL string `json:"checkout_url"`
		}
		if err := c.PostJSON(context.Background(), "/api/partner/v1/checkout-session", map[string]string{"domain": domain,
			"return_url": "https://shop.test/thanks", "cancel_url": "https://shop.test/"}, &s); err != nil {
			t.Fatal(err)
		}
		return s.CheckoutURL
	}
	pay := func(client *http.Client, form url.Values) (int, string) {
		res, err := client.PostForm(srv.URL+"/checkout", form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}

	first, firstForm := checkoutBuyer(t, session("onlyone.io"))
	second, secondForm := checkoutBuyer(t, session("onlyone.io"))
	if code, _ := pay(first, firstForm); code != http.StatusSeeOther {
		t.Fatalf("the first buyer's payment = %d", code)
	}
	if code, page := pay(second, secondForm); code != http.StatusConflict || !strings.Contains(page, "Your card was not charged.") {
		t.Errorf("the second buyer of a name just sold = %d %s", code, page)
	}

	processor.cents.Store(12_000)
	buyer, form := checkoutBuyer(t, session("repriced.io"))
	code, page := pay(buyer, form)
	if code != http.StatusConflict || !strings.Contains(page, "Your card was charged, and the whole charge is being refunded") {
		t.Errorf("a charge that could not become an order = %d %s", code, page)
	}
	var returns, charges int64
	env.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentReturn).Count(&returns)
	env.db.Model(&models.SandboxCharge{}).Count(&charges)
	if returns != 1 || charges != 2 {
		t.Errorf("%d payment:return tasks and %d charges; want the second charge's return queued", returns, charges)
	}
}

// leaver is a card processor whose charge is answered only once the
// buyer has left (left is closed): a double click drops the first send's
// connection while its payment is under way.
type leaver struct {
	*payment.Sandbox
	left      chan struct{}
	neverLeft atomic.Bool // the charge stopped waiting: the test shows nothing
}

func (l *leaver) Charge(ctx context.Context, ch payment.Charge) (string, error) {
	id, err := l.Sandbox.Charge(ctx, ch)
	select {
	case <-l.left:
	case <-time.After(10 * time.Second):
		l.neverLeft.Store(true)
	}
	return id, err
}

// A payment goes on to its order when the buyer's browser drops the
// answer after the card was charged (a double click, a closed tab): it
// is not given back for want of a listener, and a second send of the
// form finds the order.
func TestAPaymentOutlivesTheBuyerLeaving(t *testing.T) {
	t.Parallel()
	env, srv := servedEnv(t)
	processor := &leaver{Sandbox: payment.NewSandbox(env.db, payment.SandboxOptions{}), left: make(chan struct{})}
	env.payments = map[string]payment.Provider{models.EnvSandbox: processor}
	env.rebuild()
	app := srv.Config.Handler
	var first sync.Once
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/checkout" {
			first.Do(func() { go func() { <-r.Context().Done(); close(processor.left) }() })
		}
		app.ServeHTTP(w, r)
	})
	listSandbox(t, env, "leftbehind.io", 9_900)
	var s struct {
		CheckoutURL string `json:"checkout_url"`
	}
	err := checkoutPartner(t, env, srv.URL, models.EnvSandbox).PostJSON(context.Background(), "/api/partner/v1/checkout-session",
		map[string]string{"domain": "leftbehind.io", "return_url": "https://shop.test/thanks", "cancel_url": "https://shop.test/"}, &s)
	if err != nil {
		t.Fatal(err)
	}
	buyer, form := checkoutBuyer(t, s.CheckoutURL)
	charged := func() int64 {
		var n int64
		env.db.Model(&models.SandboxCharge{}).Count(&n)
		return n
	}
	ctx, leave := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/checkout", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	go func() { // the buyer leaves once the card is charged
		for deadline := time.Now().Add(10 * time.Second); charged() == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		}
		leave()
	}()
	if res, err := buyer.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the first send was answered (%d) though its buyer left", res.StatusCode)
	}

	// The first send's payment ends in an order or in its return; then the
	// second send of the double click comes.
	ordered := func() int64 {
		var n int64
		env.db.Model(&models.Order{}).Where("domain = ?", "leftbehind.io").Count(&n)
		return n
	}
	returned := func() int64 {
		var n int64
		env.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentReturn).Count(&n)
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); ordered() == 0 && returned() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first send's payment ended in neither an order nor its return")
		}
	}
	if processor.neverLeft.Load() {
		t.Fatal("the server never saw the buyer leave")
	}
	res, err := buyer.PostForm(srv.URL+"/checkout", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if orders, returns := ordered(), returned(); orders != 1 || returns != 0 || charged() != 1 {
		t.Errorf("after the buyer left: %d orders, %d payment:return tasks, %d charges; want the order made of the one charge, nothing given back",
			orders, returns, charged())
	}
	if to := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.Contains(to, "https://shop.test/thanks") {
		t.Errorf("the second send = %d to %q, want 303 to the shop's return_url", res.StatusCode, to)
	}
}

// testShop is a partner's shop for the browser checkouts: /return thanks
// the buyer (#done) and keeps the query the checkout sent them back with,
// /cancel welcomes them back (#cancelled).
type testShop struct {
	*httptest.Server
	mu   sync.Mutex
	back url.Values
}

func newTestShop(t *testing.T) *testShop {
	t.Helper()
	s := &testShop{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/return":
			s.mu.Lock()
			s.back = r.URL.Query()
			s.mu.Unlock()
			w.Write([]byte("<!doctype html><title>thanks</title><p id=done>Thank you for your order.</p>"))
		case "/cancel":
			w.Write([]byte("<!doctype html><title>shop</title><p id=cancelled>Back at the shop.</p>"))
		default: // the browser asks for a favicon too
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// landed is the query of the buyer's last visit to /return.
func (s *testShop) landed() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.back
}
