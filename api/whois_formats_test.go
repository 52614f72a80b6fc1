package api

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/rdap"
	"github.com/domaind/domaind/internal/testtool"
	"github.com/domaind/domaind/internal/whois"
)

// whoisRegistries plays IANA and the WHOIS servers of registries without
// RDAP over local TCP: IANA refers a TLD to its server, and a question
// gets the recorded answer listed for it (anything else: the registry's
// recorded "not found"). It keeps the questions it was asked.
type whoisRegistries struct {
	mu    sync.Mutex
	asked []string
}

func newWhoisRegistries(t *testing.T, referrals map[string]string, answers map[string]string) (*whoisRegistries, *lookup.Resolver) {
	t.Helper()
	w := &whoisRegistries{}
	addr := testtool.ServeTCP(t, "127.0.0.1:0", func(conn net.Conn) {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		q, _ := bufio.NewReader(conn).ReadString('\n')
		q = strings.TrimSuffix(q, "\r\n")
		w.mu.Lock()
		w.asked = append(w.asked, q)
		w.mu.Unlock()
		if server, ok := referrals[q]; ok {
			conn.Write([]byte("domain: " + strings.ToUpper(q) + "\nrefer: " + server + "\n"))
			return
		}
		file, ok := answers[q]
		if !ok { // "*.jp" answers every other name under .jp
			name := strings.TrimSuffix(q, "/e")
			file = answers["*."+name[strings.LastIndexByte(name, '.')+1:]]
		}
		b, err := os.ReadFile("../internal/whois/testdata/corpus/" + file)
		if err != nil {
			t.Error(err)
		}
		conn.Write(b)
	})
	// RDAP knows .com only, so these TLDs go to WHOIS as they do in
	// production (the recorded IANA bootstrap has no .jp or .ch).
	boot, err := rdap.ParseBootstrap([]byte(`{"version":"1.0","publication":"2026-01-01T00:00:00Z","services":[[["com"],["https://rdap.verisign.com/com/v1/"]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return w, &lookup.Resolver{
		RDAP:     rdap.New(&http.Client{Timeout: 5 * time.Second}, boot, 4, nil),
		Fallback: whois.New("whois.iana.org:43", whois.WithDialer(dial)),
	}
}

func (w *whoisRegistries) questions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.asked)
}

// TestWhoisJPRSFormat: a .jp second-level name through the API. JPRS is
// asked "<name>/e" (English), answers in its bracketed layout, and the
// expiry date comes from "[State] Connected (2024/03/31)".
func TestWhoisJPRSFormat(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	registries, resolver := newWhoisRegistries(t, map[string]string{"jp": "whois.jprs.jp"}, map[string]string{
		"google.co.jp/e": "jp/google.co.jp.txt", "*.jp": "jp/likexian-have-no-money-to-register.jp.txt",
	})
	startLookupWorker(t, env, resolver)

	w, r := whoisCall(t, env, "google.co.jp")
	if w.Code != 201 {
		t.Fatalf("= %d %s", w.Code, w.Body)
	}
	res := r.Lookup.Result
	if res.RawSource != "FallbackProvider" || res.Domain != "google.co.jp" || res.Registrar != "" ||
		res.ExpirationDate != "2024-03-31T00:00:00Z" || res.CreationDate != "2001-03-22T00:00:00Z" ||
		res.UpdateDate != "2023-03-31T16:05:57Z" || // 2023/04/01 01:05:57 (JST)
		res.Status != "connected, agent change locked" || res.Registrant != "Google Japan G.K." ||
		!slices.Equal(res.Nameservers, []string{"ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"}) {
		t.Errorf("reply = %s", w.Body)
	}
	if q := registries.questions(); !slices.Equal(q, []string{"jp", "google.co.jp/e"}) {
		t.Errorf("WHOIS asked %q, want IANA about jp, then JPRS about google.co.jp/e", q)
	}

	w, _ = whoisCall(t, env, "unregistered-name.jp")
	if code, _ := typedError(t, w); w.Code != 404 || code != "not_found" {
		t.Errorf("free .jp name = %d %s", w.Code, w.Body)
	}
}

// TestWhoisSWITCHFormat: a .ch name through the API. SWITCH's answer is
// tab-separated keys and headings with their values on the lines below
// ("Name servers", then one server per line with its glue address).
func TestWhoisSWITCHFormat(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	registries, resolver := newWhoisRegistries(t, map[string]string{"ch": "whois.nic.ch"}, map[string]string{
		"switch.ch": "ch/switch.ch.txt", "*.ch": "ch/likexian-have-no-money-to-register.ch.txt",
	})
	startLookupWorker(t, env, resolver)

	w, r := whoisCall(t, env, "switch.ch")
	if w.Code != 201 {
		t.Fatalf("= %d %s", w.Code, w.Body)
	}
	res := r.Lookup.Result
	if res.RawSource != "FallbackProvider" || res.Domain != "switch.ch" || res.Registrar != "Gandi SAS" ||
		res.CreationDate != "1996-01-01T00:00:00Z" || // "before 1 January 1996"
		res.ExpirationDate != "" || res.Status != "" ||
		!slices.Equal(res.Nameservers, []string{"ns2.switch.ch", "ns3.switch.ch", "scsnms.switch.ch"}) {
		t.Errorf("reply = %s", w.Body)
	}

	w, _ = whoisCall(t, env, "unregistered-name.ch")
	if code, _ := typedError(t, w); w.Code != 404 || code != "not_found" {
		t.Errorf("free .ch name = %d %s", w.Code, w.Body)
	}
	if q := registries.questions(); !slices.Equal(q, []string{"ch", "switch.ch", "unregistered-name.ch"}) {
		t.Errorf("WHOIS asked %q", q)
	}
}
