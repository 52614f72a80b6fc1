// Package partnerclient is the Go client of the domaind partner API. It signs
// every request as the API requires, retries what is safe to retry, and
// verifies the signatures of webhook deliveries.
//
// Create one Client per credential and share it; it is safe for concurrent
// use; the Clients of a process keep up to MaxConns connections open to
// the service between calls (calls past that many at once wait for one):
//
//	c := partnerclient.New("https://domaind.example", "pk_live_…", os.Getenv("DOMAIND_PARTNER_SECRET"))
//	var res SearchResult
//	err := c.GetJSON(ctx, "/api/partner/v1/domains/search", url.Values{"q": {"red car"}}, &res)
//
// Paths are full paths, /api/partner/v1 included. Every attempt carries
// X-Service-Key-Id, X-Service-Timestamp (Unix seconds from your clock, which
// must be within 5 minutes of the server's), X-Service-Nonce (a fresh UUID
// v4) and X-Service-Signature ("v1=" and the HMAC-SHA256 of the request's
// canonical string under your secret); the secret itself is never sent.
//
// The query is sent in its canonical form (sorted, and percent-encoded as
// encodeURIComponent does plus ! ' ( ) *), exactly as it was signed. A space
// in a value is sent as %20; a "+" in a raw query is read by the server as a
// space, so send a literal plus as %2B (url.Values does this for you).
//
// Failed attempts are retried (network errors, 429 after its Retry-After,
// and 5xx) with exponential backoff and jitter; each retry is signed anew
// with a fresh nonce and timestamp and carries the same Idempotency-Key, so
// the server runs a write once however many times it arrives. A POST gets a
// generated Idempotency-Key unless you give one with WithIdempotencyKey.
package partnerclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/domaind/domaind/internal/hmacsig"
)

// maxResponseBytes bounds a response body read into memory.
const maxResponseBytes = 16 << 20

// MaxConns is how many connections the Clients of a process open to the
// service at once, and keep open between calls: the server's cap per
// client address. Past it, the server closes a new connection as soon as
// it accepts it; the Clients' calls wait for one instead (the wait counts
// in the attempt's 30 seconds). Go's default transport keeps two idle, so
// a Client busy with more than two calls at once would open and close a
// connection, TLS handshake and all, for most of them. A Client given its
// own http.Client (WithHTTPClient), or made in a program that replaced
// http.DefaultTransport with a RoundTripper of another type, uses that.
const MaxConns = 64

// Client calls the partner API with one credential.
type Client struct {
	base   *url.URL
	err    error // from parsing the base URL; every call returns it
	keyID  string
	secret []byte
	http   *http.Client
	now    func() time.Time
	nonce  func() string
	retry  RetryPolicy
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with hc instead of a client with a 30-second
// timeout per attempt and MaxConns connections.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithClock takes the time of X-Service-Timestamp from now instead of the
// system clock (for tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithNonces takes each attempt's X-Service-Nonce from next instead of a
// random UUID v4 (for tests). next must never repeat a value within 10
// minutes: the server refuses a nonce it has seen.
func WithNonces(next func() string) Option { return func(c *Client) { c.nonce = next } }

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// shared is the transport every Client of the process uses unless given
// an http.Client: a clone of http.DefaultTransport holding at most
// MaxConns connections to a host, busy or idle, so that the cap holds for
// the process however many Clients it makes.
var shared struct {
	sync.Mutex
	base, t *http.Transport // t is cloned from base, http.DefaultTransport then
}

// transport is the shared transport. A program that replaced
// http.DefaultTransport with a RoundTripper of its own keeps it (nil).
func transport() http.RoundTripper {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.base != base {
		shared.base, shared.t = base, base.Clone()
		shared.t.MaxConnsPerHost, shared.t.MaxIdleConnsPerHost = MaxConns, MaxConns
	}
	return shared.t
}

// New returns a client of the service at baseURL (scheme and host, e.g.
// "https://domaind.example"; a path there is put before every call's path)
// signing with the credential keyID and its secret. A baseURL that does not
// parse as an absolute http or https URL makes every call fail with the
// reason.
func New(baseURL, keyID, secret string, opts ...Option) *Client {
	c := &Client{
		keyID:  keyID,
		secret: []byte(secret),
		now:    time.Now,
		nonce:  uuid.NewString,
		retry:  DefaultRetryPolicy,
	}
	c.base, c.err = url.Parse(baseURL)
	if c.err == nil && (c.base.Scheme != "http" && c.base.Scheme != "https" || c.base.Host == "") {
		c.err = fmt.Errorf("base URL %q: want http(s)://host", baseURL)
	}
	if c.err != nil {
		c.err = fmt.Errorf("partnerclient: %w", c.err)
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second, Transport: transport()}
	}
	return c
}

// CallOption configures one call.
type CallOption func(*call)

type call struct{ idempotencyKey string }

// WithIdempotencyKey sends key as the call's Idempotency-Key, the same on
// every attempt. Use one key per operation, and the same key when you retry
// that operation yourself (after a crash, say): the server then answers the
// retry with the first answer instead of doing the work twice.
func WithIdempotencyKey(key string) CallOption { return func(c *call) { c.idempotencyKey = key } }

// Do sends a signed request and returns the response with its body, read and
// closed. path is the full path, starting with "/"; query may be nil; body,
// if not empty, is sent as application/json. Any HTTP status is a response,
// not an error: the error is for a request that got no response (after the
// last attempt), a cancelled ctx, or arguments that cannot be signed (a
// query value that is not UTF-8).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body []byte, opts ...CallOption) (*http.Response, []byte, error) {
	if c.err != nil {
		return nil, nil, c.err
	}
	method = strings.ToUpper(method)
	if !strings.HasPrefix(path, "/") {
		return nil, nil, fmt.Errorf("partnerclient: path %q does not start with /", path)
	}
	q, err := hmacsig.CanonicalQuery(query.Encode())
	if err != nil {
		return nil, nil, fmt.Errorf("partnerclient: %s %s: %w", method, path, err)
	}
	u := *c.base
	u.Path = strings.TrimSuffix(c.base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = q

	var cl call
	for _, o := range opts {
		o(&cl)
	}
	if cl.idempotencyKey == "" && method == http.MethodPost {
		cl.idempotencyKey = uuid.NewString()
	}

	for attempt := 1; ; attempt++ {
		req, err := c.newRequest(ctx, method, &u, body, cl.idempotencyKey)
		if err != nil {
			return nil, nil, fmt.Errorf("partnerclient: %w", err)
		}
		resp, respBody, err := c.send(req)
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("partnerclient: %s %s: %w", method, path, ctx.Err())
		}
		wait, again := c.retry.next(attempt, resp, c.now())
		if !again {
			if err != nil {
				return nil, nil, fmt.Errorf("partnerclient: %s %s: attempt %d: %w", method, path, attempt, err)
			}
			return resp, respBody, nil
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, nil, fmt.Errorf("partnerclient: %s %s: %w", method, path, err)
		}
	}
}

// newRequest builds one attempt, signed with a fresh timestamp and nonce
// over the path and query exactly as they will be sent.
func (c *Client) newRequest(ctx context.Context, method string, u *url.URL, body []byte, idempotencyKey string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	timestamp := strconv.FormatInt(c.now().Unix(), 10)
	nonce := c.nonce()
	canonical := hmacsig.CanonicalString(method, req.URL.EscapedPath(), req.URL.RawQuery, timestamp, nonce, body)
	h := req.Header
	h.Set(hmacsig.HeaderKeyID, c.keyID)
	h.Set(hmacsig.HeaderTimestamp, timestamp)
	h.Set(hmacsig.HeaderNonce, nonce)
	h.Set(hmacsig.HeaderSignature, hmacsig.Sign(c.secret, canonical))
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "domaind-partnerclient/1")
	if len(body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	return req, nil
}

// send makes one attempt and reads its response.
func (c *Client) send(req *http.Request) (*http.Response, []byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read response: %w", err)
	}
	if len(b) > maxResponseBytes {
		return nil, nil, errors.New("response body larger than 16 MiB")
	}
	return resp, b, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
