package rdap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/domaind/domaind/internal/fetch"
)

// A registry's answer is not ours: its related links and its redirects
// never make the service connect to its own network, nor downgrade to
// plain http. The service's network is 127.0.0.1 here (the victim); the
// registry lives on 127.0.0.2, the one network the guard lets tests reach.
func TestHostileLinksAndRedirectsAreNotFollowed(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	victim := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits["victim"]++
		mu.Unlock()
	}))
	t.Cleanup(victim.Close)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	registry := &httptest.Server{Listener: ln, Config: &http.Server{}}
	answer := func(w http.ResponseWriter, name, related string) {
		w.Header().Set("Content-Type", "application/rdap+json")
		fmt.Fprintf(w, `{"objectClassName":"domain","ldhName":%q,"status":["active"],
			"entities":[{"roles":["registrar"],"vcardArray":["vcard",[["version",{},"text","4.0"],["fn",{},"text","Registry Says"]]]}],
			"links":[{"rel":"related","type":"application/rdap+json","href":%q}]}`, name, related)
	}
	registry.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch name := strings.TrimPrefix(r.URL.Path, "/domain/"); name {
		case "loopback.test":
			answer(w, name, victim.URL+"/domain/loopback.test")
		case "metadata.test":
			answer(w, name, "https://169.254.169.254/latest/domain/metadata.test")
		case "plain.test":
			answer(w, name, registry.URL+"/registrar/domain/plain.test")
		case "redirect.test":
			http.Redirect(w, r, victim.URL+"/domain/redirect.test", http.StatusFound)
		case "downgrade.test":
			http.Redirect(w, r, registry.URL+"/registrar/domain/downgrade.test", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	registry.Start()
	t.Cleanup(registry.Close)
	boot, err := ParseBootstrap([]byte(`{"version":"1.0","services":[[["test"],["` + registry.URL + `/"]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	guard := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, HTTPSRedirectsOnly: true})
	c := New(guard, boot, 0, nil)
	ctx := context.Background()

	for _, name := range []string{"loopback.test", "metadata.test", "plain.test"} {
		rec, err := c.Lookup(ctx, name)
		if err != nil || rec.Registrar != "Registry Says" {
			t.Errorf("%s = %+v, %v; want the registry's answer kept and its link not followed", name, rec, err)
		}
	}
	for _, name := range []string{"redirect.test", "downgrade.test"} {
		if _, err := c.Lookup(ctx, name); err == nil {
			t.Errorf("%s: a redirect into our network or to plain http was followed", name)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["victim"] != 0 || hits["/registrar/domain/plain.test"] != 0 || hits["/registrar/domain/downgrade.test"] != 0 {
		t.Errorf("hits = %v: the victim and the plain-http links must never be asked", hits)
	}
	if hits["/domain/loopback.test"] != 1 {
		t.Errorf("hits = %v: the registry itself, as the bootstrap names it, must be asked", hits)
	}
}

func TestThrottleRefusesBeforeAsking(t *testing.T) {
	w := newWorld(t)
	w.serve("rdap.verisign.com/com/v1/domain/google.com", fixture(t, "verisign-com-google.com.json"))
	busy := errors.New("budget spent")
	c := w.client(0)
	c.throttle = func(_ context.Context, server string) error {
		if server != "rdap.verisign.com" {
			t.Errorf("throttle asked about %q, want the host name", server)
		}
		return busy
	}
	if _, err := c.Lookup(context.Background(), "google.com"); !errors.Is(err, busy) {
		t.Errorf("Lookup = %v, want the throttle's refusal", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.hits["rdap.verisign.com/com/v1/domain/google.com"]; n != 0 {
		t.Errorf("the server was asked %d times past a spent budget", n)
	}
}
