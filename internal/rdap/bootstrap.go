package rdap

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// snapshot is IANA's RDAP bootstrap file for DNS as of the build; the
// worker's daily refresh task stores newer copies in the database.
//
//go:embed dns.json
var snapshot []byte

// maxBootstrapSize bounds a bootstrap file read from a file or URL.
const maxBootstrapSize = 4 << 20

// Bootstrap is a parsed IANA RDAP bootstrap file for DNS (RFC 9224): which
// RDAP servers answer for which TLDs.
type Bootstrap struct {
	raw         []byte
	publication time.Time
	servers     map[string][]*url.URL // TLD → base URLs, https first
}

// bootstrapFile is the JSON of RFC 9224 §4.
type bootstrapFile struct {
	Version     string       `json:"version"`
	Publication string       `json:"publication"`
	Services    [][][]string `json:"services"`
}

// ParseBootstrap parses and checks a bootstrap file. Base URLs keep their
// path (often a version segment such as /com/v1/) and end in a slash.
func ParseBootstrap(data []byte) (*Bootstrap, error) {
	var f bootstrapFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("rdap bootstrap: %w", err)
	}
	if f.Version != "1.0" {
		return nil, fmt.Errorf("rdap bootstrap: version %q, want 1.0", f.Version)
	}
	b := &Bootstrap{raw: data, servers: map[string][]*url.URL{}}
	if f.Publication != "" {
		t, err := time.Parse(time.RFC3339, f.Publication)
		if err != nil {
			return nil, fmt.Errorf("rdap bootstrap: publication %q: %w", f.Publication, err)
		}
		b.publication = t.UTC()
	}
	for i, svc := range f.Services {
		if len(svc) != 2 {
			return nil, fmt.Errorf("rdap bootstrap: service %d: want [entries, urls]", i)
		}
		var urls []*url.URL
		for _, raw := range svc[1] {
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				continue // an unusable URL is skipped, not fatal: the others may work
			}
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
			}
			urls = append(urls, u)
		}
		// RFC 9224 §3: prefer https when a service lists both.
		var https, plain []*url.URL
		for _, u := range urls {
			if u.Scheme == "https" {
				https = append(https, u)
			} else {
				plain = append(plain, u)
			}
		}
		urls = append(https, plain...)
		if len(urls) == 0 {
			continue
		}
		for _, tld := range svc[0] {
			tld = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(tld), "."))
			if tld != "" {
				b.servers[tld] = urls
			}
		}
	}
	if len(b.servers) == 0 {
		return nil, errors.New("rdap bootstrap: no services")
	}
	return b, nil
}

// DefaultBootstrap is the snapshot built into the binary.
func DefaultBootstrap() *Bootstrap {
	b, err := ParseBootstrap(snapshot)
	if err != nil {
		panic("rdap: built-in bootstrap snapshot: " + err.Error())
	}
	return b
}

// LoadBootstrap reads a bootstrap file from a path or an http(s) URL
// (DOMAIND_RDAP_BOOTSTRAP, or IANA's https://data.iana.org/rdap/dns.json).
func LoadBootstrap(ctx context.Context, hc *http.Client, source string) (*Bootstrap, error) {
	var data []byte
	if strings.HasPrefix(source, "https://") || strings.HasPrefix(source, "http://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
		if err != nil {
			return nil, fmt.Errorf("rdap bootstrap %s: %w", source, err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("rdap bootstrap %s: %w", source, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("rdap bootstrap %s: HTTP %d", source, resp.StatusCode)
		}
		if data, err = readLimited(resp.Body, maxBootstrapSize); err != nil {
			return nil, fmt.Errorf("rdap bootstrap %s: %w", source, err)
		}
	} else {
		f, err := os.Open(source)
		if err != nil {
			return nil, fmt.Errorf("rdap bootstrap: %w", err)
		}
		defer f.Close()
		if data, err = readLimited(f, maxBootstrapSize); err != nil {
			return nil, fmt.Errorf("rdap bootstrap %s: %w", source, err)
		}
	}
	return ParseBootstrap(data)
}

// readLimited reads r to the end, failing when it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// Servers returns the base URLs of the RDAP servers for tld, https first,
// or none. For a multi-label suffix the longest matching entry wins
// (RFC 9224 §4).
func (b *Bootstrap) Servers(tld string) []*url.URL {
	tld = strings.ToLower(strings.TrimSuffix(tld, "."))
	for {
		if urls, ok := b.servers[tld]; ok {
			return urls
		}
		_, rest, ok := strings.Cut(tld, ".")
		if !ok {
			return nil
		}
		tld = rest
	}
}

// Publication is when IANA published the file.
func (b *Bootstrap) Publication() time.Time { return b.publication }

// Raw is the file as parsed, for storing a refreshed copy.
func (b *Bootstrap) Raw() []byte { return b.raw }
