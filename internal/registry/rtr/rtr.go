// Package rtr is a registry.Provider on the Realtime Register REST API v2
// (TLD info, the customer's price list, domain checks and updates). Requests time out,
// and 429 and 5xx answers are retried with exponential backoff, honouring
// Retry-After.
package rtr

import (
	"bytes"
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

// Unwrap makes a 429 or 5xx answer a registry.ErrTransient.
func (e *Error) Unwrap() error {
	if e.Status == http.StatusTooManyRequests || e.Status >= 500 {
		return registry.ErrTransient
	}
	return nil
}

// get fetches path (relative to the base) into out, retrying what a retry can fix.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.call(ctx, http.MethodGet, path, query, nil, out)
}

// call sends one API request (body, when not nil, as JSON) and decodes the
// answer into out (when not nil), retrying 429s, 5xx and network failures.
// Only requests that can be repeated safely go through it: reads, and
// updates that set a state.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	_, err := c.send(ctx, method, path, query, body, out)
	return err
}

// send is call, answering also how many requests it sent.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body, out any) (int, error) {
	u := c.base.JoinPath(path)
	u.RawQuery = query.Encode()
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, fmt.Errorf("rtr: encode %s: %w", path, err)
		}
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, method, u.String(), payload, out)
		if err == nil {
			return attempt + 1, nil
		}
		lastErr = err
		if wait < 0 || attempt >= c.Retries {
			return attempt + 1, lastErr
		}
		if wait == 0 {
			wait = c.BackoffFunc(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return attempt + 1, fmt.Errorf("%w (after: %v)", ctx.Err(), lastErr)
		case <-t.C:
		}
	}
}

// once makes one request. wait < 0 means do not retry; wait > 0 is the
// server's Retry-After; 0 means retry after the backoff. Errors a retry
// may fix wrap registry.ErrTransient.
func (c *Client) once(ctx context.Context, method, u string, payload []byte, out any) (wait time.Duration, err error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return -1, err
	}
	req.Header.Set("Authorization", "ApiKey "+c.apiKey)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		return 0, fmt.Errorf("rtr: %w: %w", registry.ErrTransient, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return 0, fmt.Errorf("rtr: read %s: %w: %w", req.URL.Path, registry.ErrTransient, err)
	}
	if res.StatusCode/100 == 2 {
		if out == nil {
			return 0, nil
		}
		if err := json.Unmarshal(answer, out); err != nil {
			return -1, fmt.Errorf("rtr: decode %s: %w", req.URL.Path, err)
		}
		return 0, nil
	}
	apiErr := &Error{Status: res.StatusCode}
	json.Unmarshal(answer, apiErr)
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

// domainUpdate is the body of POST /domains/{name}/update. Realtime
// Register replaces what a field names: the nameserver list, the client
// statuses, the contacts of the roles given.
type domainUpdate struct {
	NS         []string        `json:"ns,omitempty"`
	Status     []string        `json:"status,omitzero"` // empty clears, nil leaves alone
	Registrant string          `json:"registrant,omitempty"`
	Contacts   []domainContact `json:"contacts,omitempty"`
}

type domainContact struct {
	Role   string `json:"role"`
	Handle string `json:"handle"`
}

// contactBody is the body of POST /customers/{customer}/contacts/{handle}.
type contactBody struct {
	Name         string   `json:"name"`
	Organization string   `json:"organization,omitempty"`
	AddressLine  []string `json:"addressLine"`
	PostalCode   string   `json:"postalCode"`
	City         string   `json:"city"`
	Country      string   `json:"country"`
	Email        string   `json:"email"`
	Voice        string   `json:"voice"`
}

// lockStatus is the client status that locks a domain against transfers.
const lockStatus = "CLIENT_TRANSFER_PROHIBITED"

// UpdateDomain implements registry.Provider. Each field sets a state, so
// sending a change again changes nothing and the change id is not sent.
// A lock change reads the domain's client statuses first and adds or
// removes only the transfer lock, since the API replaces the whole list.
// Contacts given as details are created first, under a handle derived
// from the change id and role (creating one again answers 409, which
// means it is there).
func (c *Client) UpdateDomain(ctx context.Context, name string, u registry.Update, change string) error {
	var body domainUpdate
	body.NS = u.Nameservers
	if u.Locked != nil {
		statuses, err := c.clientStatuses(ctx, name)
		if err != nil {
			return err
		}
		body.Status = withLock(statuses, *u.Locked)
	}
	for _, role := range registry.Roles {
		ct, ok := u.Contacts[role]
		if !ok {
			continue
		}
		handle := ct.Handle
		if ct.Details != nil {
			handle = contactHandle(change, role)
			if err := c.createContact(ctx, handle, *ct.Details); err != nil {
				return err
			}
		}
		if role == registry.RoleRegistrant {
			body.Registrant = handle
		} else {
			body.Contacts = append(body.Contacts, domainContact{Role: strings.ToUpper(role), Handle: handle})
		}
	}
	err := c.call(ctx, http.MethodPost, "domains/"+url.PathEscape(name)+"/update", nil, body, nil)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return fmt.Errorf("%s: %w", name, registry.ErrDomainNotHeld)
	}
	return err
}

// PushDomain implements registry.Provider with Realtime Register's push
// transfer (POST /v2/domains/{name}/transfer/push {recipient}), answered
// 200, or 202 when the registry runs it as a process that completes
// later. The registry does not push a domain twice, so a repeated change
// is harmless, but its answer to the repeat is a refusal (a 4xx). When
// this call repeated the push (the answer to an earlier request was lost
// or a 5xx), a domain that has left the account was pushed; one the
// account still holds may be in a push process the lost request started,
// so that refusal is not one: the error wraps neither ErrPushRefused nor
// ErrTransient, and the order leaves the push unconfirmed for ops. A
// first answer that refuses is a refusal. (A task that asks again after
// a crash cannot tell either: it leaves such a refusal unconfirmed.)
func (c *Client) PushDomain(ctx context.Context, name, recipient, change string) error {
	sent, err := c.send(ctx, http.MethodPost, "domains/"+url.PathEscape(name)+"/transfer/push", nil, struct {
		Recipient string `json:"recipient"`
	}{recipient}, nil)
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status < 400 || apiErr.Status >= 500 || apiErr.Status == http.StatusTooManyRequests {
		return err
	}
	if sent == 1 {
		return fmt.Errorf("push %s to %s: %w: %v", name, recipient, registry.ErrPushRefused, err)
	}
	switch held, herr := c.holds(ctx, name); {
	case herr != nil:
		return fmt.Errorf("push %s to %s refused (%v), and whether the account still holds it is unknown: %w", name, recipient, err, herr)
	case !held:
		return nil
	}
	return fmt.Errorf("push %s to %s: the repeat of a request whose answer was lost was refused (%v) while the account still holds the domain: "+
		"the first request may have started a push the registry has not finished", name, recipient, err)
}

// holds reports whether the account holds name at the registry.
func (c *Client) holds(ctx context.Context, name string) (bool, error) {
	err := c.get(ctx, "domains/"+url.PathEscape(name), nil, nil)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

// clientStatuses are the statuses of a domain its registrar may set.
func (c *Client) clientStatuses(ctx context.Context, name string) ([]string, error) {
	var d struct {
		Status []string `json:"status"`
	}
	err := c.get(ctx, "domains/"+url.PathEscape(name), nil, &d)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil, fmt.Errorf("%s: %w", name, registry.ErrDomainNotHeld)
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, st := range d.Status {
		if strings.HasPrefix(st, "CLIENT_") {
			out = append(out, st)
		}
	}
	return out, nil
}

// withLock is statuses with the transfer lock set or cleared (never nil:
// an empty list clears them all).
func withLock(statuses []string, locked bool) []string {
	out := []string{}
	for _, st := range statuses {
		if st != lockStatus {
			out = append(out, st)
		}
	}
	if locked {
		out = append(out, lockStatus)
	}
	return out
}

// contactHandle is the handle of a contact created for a change: at most
// 40 characters of letters, digits and hyphens, the same on every retry.
func contactHandle(change, role string) string {
	h := "dd-" + role[:3] + "-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.ToLower(change))
	return h[:min(len(h), 40)]
}

func (c *Client) createContact(ctx context.Context, handle string, d registry.ContactDetails) error {
	body := contactBody{
		Name: d.Name, Organization: d.Organization, AddressLine: []string{d.Street},
		PostalCode: d.PostalCode, City: d.City, Country: d.Country, Email: d.Email, Voice: d.Phone,
	}
	err := c.call(ctx, http.MethodPost, "customers/"+url.PathEscape(c.customer)+"/contacts/"+url.PathEscape(handle), nil, body, nil)
	var apiErr *Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict {
		return nil
	}
	return err
}
