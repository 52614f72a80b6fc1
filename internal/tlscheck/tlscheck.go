// Package tlscheck is the ssl-check free tool: the TLS version, cipher and
// certificates a server presents, and whether its chain verifies for the
// name asked.
package tlscheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fetch"
)

// Timeout bounds a check whose context has no earlier deadline.
const Timeout = 10 * time.Second

// Result is what Check found. Verified reports whether the presented chain
// leads to a trusted root and is valid for Host at CheckedAt; when it does
// not, VerifyError says why in x509's words.
type Result struct {
	Host        string        `json:"host"`
	Port        int           `json:"port"`
	TLSVersion  string        `json:"tls_version"`  // "TLS 1.3"
	CipherSuite string        `json:"cipher_suite"` // "TLS_AES_128_GCM_SHA256"
	ALPN        string        `json:"alpn"`         // "h2", "http/1.1" or ""
	Verified    bool          `json:"verified"`
	VerifyError string        `json:"verify_error"`
	Leaf        Leaf          `json:"leaf"`
	Chain       []Certificate `json:"chain"` // as presented, leaf first
	CheckedAt   time.Time     `json:"checked_at"`
}

// Leaf describes the server's own certificate.
type Leaf struct {
	Subject            string    `json:"subject"`
	Issuer             string    `json:"issuer"`
	SANs               []string  `json:"sans"` // DNS names then IP addresses, as listed
	NotBefore          time.Time `json:"not_before"`
	NotAfter           time.Time `json:"not_after"`
	DaysLeft           int       `json:"days_left"` // whole days to NotAfter, negative once expired
	Serial             string    `json:"serial"`    // upper-case hex
	SignatureAlgorithm string    `json:"signature_algorithm"`
	Key                string    `json:"key"` // "ECDSA P-256", "RSA 2048", "Ed25519" or "unknown"
}

// Certificate is one certificate of the presented chain.
type Certificate struct {
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
	IsCA      bool      `json:"is_ca"`
}

// Check connects to host:port through c (so that refused addresses are
// not reached; a refusal is returned as the *fetch.BlockedError), shakes
// hands with host as the server name and describes what the server
// presents. An invalid chain is described too: it is verified afterwards,
// against roots (nil: the system's) at now, which also dates DaysLeft.
func Check(ctx context.Context, c *fetch.Client, host string, port int, roots *x509.CertPool, now time.Time) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	conn, err := c.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		if be, ok := errors.AsType[*fetch.BlockedError](err); ok {
			return nil, be
		}
		return nil, fmt.Errorf("connect to %s port %d: %w", host, port, err)
	}
	tc := tls.Client(conn, &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: true, // verified below, so that a bad chain can still be described
		MinVersion:         tls.VersionTLS10,
		NextProtos:         []string{"h2", "http/1.1"},
	})
	defer tc.Close()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s port %d: %w", host, port, err)
	}
	state := tc.ConnectionState()
	certs := state.PeerCertificates
	if len(certs) == 0 { // only with anonymous suites, which Go does not offer
		return nil, fmt.Errorf("TLS handshake with %s port %d: no certificate", host, port)
	}

	leaf := certs[0]
	res := &Result{
		Host:        host,
		Port:        port,
		TLSVersion:  tls.VersionName(state.Version),
		CipherSuite: tls.CipherSuiteName(state.CipherSuite),
		ALPN:        state.NegotiatedProtocol,
		Leaf: Leaf{
			Subject:            leaf.Subject.String(),
			Issuer:             leaf.Issuer.String(),
			SANs:               sans(leaf),
			NotBefore:          leaf.NotBefore,
			NotAfter:           leaf.NotAfter,
			DaysLeft:           daysLeft(leaf.NotAfter, now),
			Serial:             strings.ToUpper(leaf.SerialNumber.Text(16)),
			SignatureAlgorithm: leaf.SignatureAlgorithm.String(),
			Key:                keyName(leaf.PublicKey),
		},
		CheckedAt: now,
	}
	intermediates := x509.NewCertPool()
	for _, cert := range certs[1:] {
		intermediates.AddCert(cert)
	}
	for _, cert := range certs {
		res.Chain = append(res.Chain, Certificate{
			Subject: cert.Subject.String(), Issuer: cert.Issuer.String(),
			NotBefore: cert.NotBefore, NotAfter: cert.NotAfter, IsCA: cert.IsCA,
		})
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		DNSName:       host,
		Roots:         roots,
		Intermediates: intermediates,
		CurrentTime:   now,
	})
	res.Verified = err == nil
	if err != nil {
		res.VerifyError = err.Error()
	}
	return res, nil
}

func sans(cert *x509.Certificate) []string {
	names := append([]string{}, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// daysLeft is the whole days from now to t, rounded down (so a certificate
// that expired an hour ago has -1).
func daysLeft(t, now time.Time) int {
	d := t.Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

func keyName(pub any) string {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return "unknown"
}
