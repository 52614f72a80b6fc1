package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/internal/testtool"
)

// Every TLS form carries a TLS configuration, with the roots of ca_file
// when it is given; a plain form refuses ca_file.
func TestParseRedisURLOverTLS(t *testing.T) {
	t.Parallel()
	ca := writeCA(t, t.TempDir())
	for _, raw := range []string{
		"rediss://host:6380",
		"rediss-sentinel://:pw@s1:26379,s2:26379/0?master=mymaster&ca_file=" + ca.file,
		"rediss-cluster://n1:7000,n2:7001?ca_file=" + ca.file,
	} {
		opt, err := ParseRedisURL(raw)
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		c := tlsOf(opt)
		if c == nil || (c.RootCAs != nil) != strings.Contains(raw, "ca_file") {
			t.Errorf("%s: TLS %+v, want TLS with the CA's roots exactly when ca_file is given", raw, c)
		}
	}
	for _, raw := range []string{"redis://host:6379?ca_file=" + ca.file, "rediss://host:6380?ca_file=/no/such/file", "rediss-cluster://n1:7000?ca_file=" + os.Args[0]} {
		if _, err := ParseRedisURL(raw); err == nil {
			t.Errorf("%s was taken", raw)
		}
	}
}

// tlsOf is the TLS configuration of opt.
func tlsOf(opt asynq.RedisConnOpt) *tls.Config {
	switch o := opt.(type) {
	case asynq.RedisClientOpt:
		return o.TLSConfig
	case asynq.RedisFailoverClientOpt:
		return o.TLSConfig
	case RedisClusterOpt:
		return o.TLSConfig
	}
	return nil
}

// A rediss:// URL with ca_file reaches a real Redis that serves only TLS,
// with a certificate of a private CA; without ca_file the certificate is
// refused.
func TestRediss(t *testing.T) {
	t.Parallel()
	bin := testtool.Path(t, "the test starts a Redis that serves TLS", "redis-server")
	dir := t.TempDir()
	ca := writeCA(t, dir)
	cert, key := ca.issue(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	srv := exec.Command(bin, "--port", "0", "--tls-port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca.file, "--tls-auth-clients", "no")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })

	ping := func(raw string) error {
		opt, err := ParseRedisURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		c := opt.MakeRedisClient().(redis.UniversalClient)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	}
	url := "rediss://127.0.0.1:" + port
	testtool.WaitFor(t, "the TLS Redis answers", func() bool { return ping(url+"?ca_file="+ca.file) == nil })
	if err := ping(url); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without ca_file = %v, want the private CA's certificate refused", err)
	}
}

// testCA is a private certificate authority written to file.
type testCA struct {
	file string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func writeCA(t *testing.T, dir string) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "domaind test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(dir, "ca.pem")
	writePEM(t, file, "CERTIFICATE", der)
	return testCA{file: file, cert: cert, key: key}
}

// issue writes a server certificate for 127.0.0.1 signed by the CA and its
// key, returning their files.
func (ca testCA) issue(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{netip.MustParseAddr("127.0.0.1").AsSlice()}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
