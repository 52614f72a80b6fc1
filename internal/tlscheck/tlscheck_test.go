package tlscheck

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/domaind/domaind/internal/fetch"
)

// now is when the checks run: a month into the valid leaf's three months.
var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// issued is a certificate and its key.
type issued struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// issue signs tmpl with parent (itself when parent is nil) for key.
func issue(tb testing.TB, tmpl *x509.Certificate, key crypto.Signer, parent *issued) *issued {
	tb.Helper()
	parentCert, parentKey := tmpl, key
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &issued{cert, key}
}

func ecKey(tb testing.TB) crypto.Signer {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func caTemplate(serial int64, cn string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{Organization: []string{"Test PKI"}, CommonName: cn},
		NotBefore:             date(2020, 1, 1),
		NotAfter:              date(2035, 1, 1),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
}

func leafTemplate(serial int64, notBefore, notAfter time.Time) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "example.test"},
		DNSNames:              []string{"example.test", "www.example.test"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

// serveTLS accepts TLS connections on 127.0.0.1 with cfg, presenting
// chain, until the test ends; it returns the port.
func serveTLS(tb testing.TB, cfg *tls.Config, chain ...*issued) int {
	tb.Helper()
	cert := tls.Certificate{PrivateKey: chain[0].key, Leaf: chain[0].cert}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.cert.Raw)
	}
	cfg.Certificates = []tls.Certificate{cert}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.(*tls.Conn).Handshake() // the client hangs up after it
			conn.Close()
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// localDNS maps every name to 127.0.0.1.
type localDNS struct{}

func (localDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func TestCheck(t *testing.T) {
	root := issue(t, caTemplate(1, "Test Root CA"), ecKey(t), nil)
	inter := issue(t, caTemplate(2, "Test Intermediate CA"), ecKey(t), root)
	valid := issue(t, leafTemplate(0x1f00d, date(2025, 1, 1), date(2025, 4, 1)), ecKey(t), inter)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	expired := issue(t, leafTemplate(0xdead, date(2024, 11, 1), date(2025, 2, 1)), rsaKey, inter)
	self := issue(t, leafTemplate(7, date(2025, 1, 1), date(2026, 1, 1)), ecKey(t), nil)

	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	c := fetch.New(fetch.Options{Resolver: localDNS{}, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})

	validPort := serveTLS(t, &tls.Config{NextProtos: []string{"h2"}}, valid, inter)
	expiredPort := serveTLS(t, &tls.Config{
		MaxVersion:   tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
	}, expired, inter)
	selfPort := serveTLS(t, &tls.Config{NextProtos: []string{"http/1.1"}}, self)

	validLeaf := Leaf{
		Subject: "CN=example.test", Issuer: "CN=Test Intermediate CA,O=Test PKI",
		SANs:      []string{"example.test", "www.example.test"},
		NotBefore: date(2025, 1, 1), NotAfter: date(2025, 4, 1),
		DaysLeft: 30, Serial: "1F00D", SignatureAlgorithm: "ECDSA-SHA256", Key: "ECDSA P-256",
	}
	validChain := []Certificate{
		{"CN=example.test", "CN=Test Intermediate CA,O=Test PKI", date(2025, 1, 1), date(2025, 4, 1), false},
		{"CN=Test Intermediate CA,O=Test PKI", "CN=Test Root CA,O=Test PKI", date(2020, 1, 1), date(2035, 1, 1), true},
	}
	tests := []struct {
		name string
		host string
		port int
		want *Result
	}{
		{"valid chain", "example.test", validPort, &Result{
			Host: "example.test", Port: validPort, TLSVersion: "TLS 1.3", ALPN: "h2",
			Verified: true, Leaf: validLeaf, Chain: validChain, CheckedAt: now,
		}},
		{"valid for the other name", "www.example.test", validPort, &Result{
			Host: "www.example.test", Port: validPort, TLSVersion: "TLS 1.3", ALPN: "h2",
			Verified: true, Leaf: validLeaf, Chain: validChain, CheckedAt: now,
		}},
		{"wrong name", "wrong.test", validPort, &Result{
			Host: "wrong.test", Port: validPort, TLSVersion: "TLS 1.3", ALPN: "h2",
			VerifyError: "x509: certificate is valid for example.test, www.example.test, not wrong.test",
			Leaf:        validLeaf, Chain: validChain, CheckedAt: now,
		}},
		{"expired", "example.test", expiredPort, &Result{
			Host: "example.test", Port: expiredPort, TLSVersion: "TLS 1.2",
			CipherSuite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
			VerifyError: "x509: certificate has expired or is not yet valid: current time 2025-03-01T12:00:00Z is after 2025-02-01T00:00:00Z",
			Leaf: Leaf{
				Subject: "CN=example.test", Issuer: "CN=Test Intermediate CA,O=Test PKI",
				SANs:      []string{"example.test", "www.example.test"},
				NotBefore: date(2024, 11, 1), NotAfter: date(2025, 2, 1),
				DaysLeft: -29, Serial: "DEAD", SignatureAlgorithm: "ECDSA-SHA256", Key: "RSA 2048",
			},
			Chain: []Certificate{
				{"CN=example.test", "CN=Test Intermediate CA,O=Test PKI", date(2024, 11, 1), date(2025, 2, 1), false},
				validChain[1],
			},
			CheckedAt: now,
		}},
		{"self-signed", "example.test", selfPort, &Result{
			Host: "example.test", Port: selfPort, TLSVersion: "TLS 1.3", ALPN: "http/1.1",
			VerifyError: "x509: certificate signed by unknown authority",
			Leaf: Leaf{
				Subject: "CN=example.test", Issuer: "CN=example.test",
				SANs:      []string{"example.test", "www.example.test"},
				NotBefore: date(2025, 1, 1), NotAfter: date(2026, 1, 1),
				DaysLeft: 305, Serial: "7", SignatureAlgorithm: "ECDSA-SHA256", Key: "ECDSA P-256",
			},
			Chain:     []Certificate{{"CN=example.test", "CN=example.test", date(2025, 1, 1), date(2026, 1, 1), false}},
			CheckedAt: now,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(context.Background(), c, tt.host, tt.port, roots, now)
			if err != nil {
				t.Fatal(err)
			}
			if got.TLSVersion == "TLS 1.3" { // the suite depends on the CPU's AES support
				suites := []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
				if !slices.Contains(suites, got.CipherSuite) {
					t.Errorf("cipher_suite = %q, want one of %v", got.CipherSuite, suites)
				}
				got.CipherSuite = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%s, %d) (-want +got):\n%s", tt.host, tt.port, diff)
			}
		})
	}

	t.Run("system roots do not trust the test root", func(t *testing.T) {
		got, err := Check(context.Background(), c, "example.test", validPort, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if got.Verified || got.VerifyError == "" {
			t.Errorf("verified, verify_error = %v, %q; want false and a reason", got.Verified, got.VerifyError)
		}
	})

	t.Run("JSON shape", func(t *testing.T) {
		got, err := Check(context.Background(), c, "example.test", expiredPort, roots, now)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"host":"example.test","port":` + strconv.Itoa(expiredPort) + `,"tls_version":"TLS 1.2",` +
			`"cipher_suite":"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256","alpn":"","verified":false,` +
			`"verify_error":"x509: certificate has expired or is not yet valid: current time 2025-03-01T12:00:00Z is after 2025-02-01T00:00:00Z",` +
			`"leaf":{"subject":"CN=example.test","issuer":"CN=Test Intermediate CA,O=Test PKI",` +
			`"sans":["example.test","www.example.test"],"not_before":"2024-11-01T00:00:00Z","not_after":"2025-02-01T00:00:00Z",` +
			`"days_left":-29,"serial":"DEAD","signature_algorithm":"ECDSA-SHA256","key":"RSA 2048"},` +
			`"chain":[{"subject":"CN=example.test","issuer":"CN=Test Intermediate CA,O=Test PKI",` +
			`"not_before":"2024-11-01T00:00:00Z","not_after":"2025-02-01T00:00:00Z","is_ca":false},` +
			`{"subject":"CN=Test Intermediate CA,O=Test PKI","issuer":"CN=Test Root CA,O=Test PKI",` +
			`"not_before":"2020-01-01T00:00:00Z","not_after":"2035-01-01T00:00:00Z","is_ca":true}],` +
			`"checked_at":"2025-03-01T12:00:00Z"}`
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("JSON (-want +got):\n%s", diff)
		}
	})
}

func TestCheckRefusesPrivateTargets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	guarded := fetch.New(fetch.Options{Resolver: localDNS{}})
	for _, host := range []string{"127.0.0.1", "example.test"} {
		res, err := Check(context.Background(), guarded, host, port, nil, now)
		if _, ok := errors.AsType[*fetch.BlockedError](err); !ok {
			t.Errorf("Check(%s) = %+v, %v; want a *fetch.BlockedError", host, res, err)
		}
	}
}

func TestCheckHonoursTheContext(t *testing.T) {
	// A server that accepts connections and never answers the handshake.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Check(ctx, c, "127.0.0.1", ln.Addr().(*net.TCPAddr).Port, nil, now)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check = %+v, %v; want the context's deadline", res, err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Check took %v; the context ended after 200ms", elapsed)
	}
}
