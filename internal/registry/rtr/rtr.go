// Package rtr is a registry.Provider on the Realtime Register REST API v2
// (TLD info, the customer's price list, domain checks). Requests time out,
// and 429 and 5xx answers are retried with exponential backoff, honouring
// Retry-After.
package rtr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/registry"
)

// Client talks to one Realtime Register account.
type Client struct {
	base     *url.URL
	apiKey   string
	customer string
	http     *http.Client
	// Retries is how often a 429, 5xx or network failure is retried.
	Retries int
	// BackoffFunc is the wait before retry n (from 0) when the answer names none.
	BackoffFunc func(n int) time.Duration
}

// New returns a client for the API at baseURL (e.g. https://api.yoursrs.com/v2).
func New(baseURL, apiKey, customer string) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("rtr base url: %w", err)
	}
	return &Client{
		base: u, apiKey: apiKey, customer: customer,
		http:        &http.Client{Timeout: 15 * time.Second},
		Retries:     3,
		BackoffFunc: func(n int) time.Duration { return 250 * time.Millisecond << n },
	}, nil
}

// Name implements registry.Provider.
func (c *Client) Name() string { return "rtr" }

// Error is an error answer of the API.
type Error struct {
	Status  int
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("rtr: %d %s: %s", e.Status, e.Type, e.Message)
}

// get fetches path (relative to the base) into out, retrying what a retry can fix.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	u := c.base.JoinPath(path)
	u.RawQuery = query.Encode()
	var lastErr error
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, u.String(), out)
		if err == nil {
			return nil
		}
		lastErr = err
		if wait < 0 || attempt >= c.Retries {
			return lastErr
		}
		if wait == 0 {
			wait = c.BackoffFunc(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (after: %v)", ctx.Err(), lastErr)
		case <-t.C:
		}
	}
}

// once makes one request. wait < 0 means do not retry; wait > 0 is the
// server's Retry-After; 0 means retry after the backoff.
func (c *Client) once(ctx context.Context, u string, out any) (wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return -1, err
	}
	req.Header.Set("Authorization", "ApiKey "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		return 0, fmt.Errorf("rtr: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return 0, fmt.Errorf("rtr: read %s: %w", req.URL.Path, err)
	}
	if res.StatusCode/100 == 2 {
		if err := json.Unmarshal(body, out); err != nil {
			return -1, fmt.Errorf("rtr: decode %s: %w", req.URL.Path, err)
		}
		return 0, nil
	}
	apiErr := &Error{Status: res.StatusCode}
	json.Unmarshal(body, apiErr)
	if apiErr.Message == "" {
		apiErr.Message = http.StatusText(res.StatusCode)
	}
	switch {
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
			return min(time.Duration(s)*time.Second, time.Minute), apiErr
		}
		return 0, apiErr
	default:
		return -1, apiErr
	}
}

// TLDInfo implements registry.Provider.
func (c *Client) TLDInfo(ctx context.Context, tld string) (registry.TLDInfo, error) {
	var info registry.TLDInfo
	err := c.get(ctx, "tlds/"+url.PathEscape(tld)+"/info", nil, &info)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return info, fmt.Errorf("%s: %w", tld, registry.ErrUnknownTLD)
	}
	return info, err
}

type priceList struct {
	Prices []struct {
		Product  string `json:"product"`
		Action   string `json:"action"`
		Currency string `json:"currency"`
		Price    int64  `json:"price"`
	} `json:"prices"`
}

// actions maps the API's price actions onto the spec's operations.
var actions = map[string]string{
	"CREATE": registry.OpRegister, "RENEW": registry.OpRenew,
	"TRANSFER": registry.OpTransfer, "RESTORE": registry.OpRestore,
}

// Prices implements registry.Provider: the USD domain prices of the
// customer's price list (products "domain_<tld>"; prices are in cents).
func (c *Client) Prices(ctx context.Context) ([]registry.Price, error) {
	var pl priceList
	if err := c.get(ctx, "customers/"+url.PathEscape(c.customer)+"/pricelist", url.Values{"currency": {"USD"}}, &pl); err != nil {
		return nil, err
	}
	var out []registry.Price
	for _, p := range pl.Prices {
		tld, ok := strings.CutPrefix(p.Product, "domain_")
		op, known := actions[p.Action]
		if !ok || !known || p.Currency != "USD" || tld == "" {
			continue
		}
		out = append(out, registry.Price{TLD: tld, Op: op, Cents: p.Price, Currency: p.Currency})
	}
	return out, nil
}

// TLDs implements registry.Provider: the TLDs the price list sells.
func (c *Client) TLDs(ctx context.Context) ([]string, error) {
	prices, err := c.Prices(ctx)
	if err != nil {
		return nil, err
	}
	var tlds []string
	for _, p := range prices {
		tlds = append(tlds, p.TLD)
	}
	slices.Sort(tlds)
	return slices.Compact(tlds), nil
}

// Check implements registry.Provider.
func (c *Client) Check(ctx context.Context, name string) (registry.Availability, error) {
	var r struct {
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
		Premium   bool   `json:"premium"`
		Currency  string `json:"currency"`
		Price     int64  `json:"price"`
	}
	if err := c.get(ctx, "domains/"+url.PathEscape(name)+"/check", nil, &r); err != nil {
		return registry.Availability{}, err
	}
	return registry.Availability{Available: r.Available, Reason: strings.ToLower(r.Reason), Premium: r.Premium, Cents: r.Price, Currency: r.Currency}, nil
}
