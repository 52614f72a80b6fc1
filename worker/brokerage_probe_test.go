package worker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// loopbackDNS resolves every name to 127.0.0.1.
type loopbackDNS struct{}

func (loopbackDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// siteClient is a fetch client that reaches every domain's http site at
// plain (a test server) and finds nothing listening for https: the guard
// still checks each address, with the loopback exempt as in tests.
func siteClient(t *testing.T, plain *httptest.Server) *fetch.Client {
	t.Helper()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := closed.Addr().String()
	closed.Close()
	c := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Resolver: loopbackDNS{}, Timeout: 5 * time.Second})
	tr := c.HTTP().Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, _ := net.SplitHostPort(addr)
		if port == "443" {
			return dial(ctx, network, nothing)
		}
		return dial(ctx, network, plain.Listener.Addr().String())
	}
	return c
}

// TestBrokerageProbeRecordsTheVerdict serves recorded home pages and
// checks that the probe's verdict lands on the domain's site check.
func TestBrokerageProbeRecordsTheVerdict(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"parked.example":  "parked-parkingcrew.html",
		"active.example":  "active-sourceforge-accessrunner.html",
		"default.example": "server-nginx.html",
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := pages[r.Host]
		if !ok || r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		// The recorded pages of package siteprobe (their provenance is in
		// its testdata/SOURCES.md).
		b, err := os.ReadFile(filepath.Join("..", "internal", "siteprobe", "testdata", name))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(site.Close)
	db := modelstest.NewDB(t)
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	h := &brokerageProbe{db: db, fetch: siteClient(t, site), log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	tests := []struct {
		domain     string
		wantActive bool
		wantReason string
	}{
		{"parked.example", false, "parked"},
		{"active.example", true, "active"},
		{"default.example", false, "server_default"},
		{"gone.example", false, "not_ok"}, // the server has no page for it
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			if err := db.Create(&models.SiteCheck{Domain: tt.domain, Status: models.SiteCheckPending, RequestedAt: now.Add(-time.Minute)}).Error; err != nil {
				t.Fatal(err)
			}
			if err := run(context.Background(), h, tasks.New(tasks.BrokerageProbePayload{Domain: tt.domain})); err != nil {
				t.Fatal(err)
			}
			var sc models.SiteCheck
			if err := db.Take(&sc, "domain = ?", tt.domain).Error; err != nil {
				t.Fatal(err)
			}
			if sc.Status != models.SiteCheckDone || sc.Active != tt.wantActive || sc.Reason != tt.wantReason || sc.CheckedAt == nil || !sc.CheckedAt.Equal(now) {
				t.Errorf("site check %+v, want done, active %v, %s, at %s", sc, tt.wantActive, tt.wantReason, now)
			}
		})
	}
	empty := tasks.New(tasks.BrokerageProbePayload{})
	if err := run(context.Background(), h, empty); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("a probe without a domain = %v, want it dropped", err)
	}
	var n int64
	db.Model(&models.SiteCheck{}).Where("domain = ?", "").Count(&n)
	if n != 0 {
		t.Errorf("a probe without a domain wrote %d site checks", n)
	}
}
