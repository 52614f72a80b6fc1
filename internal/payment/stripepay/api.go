package stripepay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// apiVersion is the version of Stripe's API the provider speaks, sent with
// every call (Stripe-Version) so that an account's default version cannot
// change the shapes it reads.
const apiVersion = "2025-08-27.basil"

// client calls Stripe's API: form-encoded requests, JSON answers, the
// secret key as a bearer token, and retries of what Stripe says may be
// retried, with the same idempotency key.
type client struct {
	http    *http.Client
	base    string
	key     string
	retries int
	// backoff is the wait before the first retry; it doubles after each.
	backoff time.Duration
}

// apiError is Stripe's answer to a call it refused or could not make.
type apiError struct {
	Status    int
	Type      string `json:"type"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Param     string `json:"param"`
	RequestID string
}

func (e *apiError) Error() string {
	s := strconv.Itoa(e.Status)
	if e.Type != "" { // an answer not in Stripe's shape (a proxy's) has none
		s += " " + e.Type
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Param != "" {
		s += " on " + e.Param
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " [" + e.RequestID + "]"
	}
	return s
}

// call makes method path with form (nil for none) and reads the answer
// into out. idempotencyKey, when set, makes a POST safe to send again:
// Stripe answers a repeat with the first answer.
func (c *client) call(ctx context.Context, method, path string, form url.Values, idempotencyKey string, out any) error {
	var err error
	for attempt := 0; ; attempt++ {
		var retry bool
		retry, err = c.once(ctx, method, path, form, idempotencyKey, out)
		if !retry || attempt == c.retries || ctx.Err() != nil {
			return err
		}
		wait := c.backoff << attempt
		wait = wait/2 + rand.N(wait/2+1) // jittered, so that callers refused together do not come back together
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// once makes one attempt, and says whether another may succeed.
func (c *client) once(ctx context.Context, method, path string, form url.Values, idempotencyKey string, out any) (retry bool, err error) {
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Stripe-Version", apiVersion)
	req.Header.Set("User-Agent", "domaind")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return ctx.Err() == nil, err // the network failed: the key makes a retry safe
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return true, fmt.Errorf("read the answer: %w", err)
	}
	if res.StatusCode >= 300 {
		var wrap struct {
			Error apiError `json:"error"`
		}
		_ = json.Unmarshal(raw, &wrap) // an answer not in Stripe's shape still has its status
		e := &wrap.Error
		e.Status, e.RequestID = res.StatusCode, res.Header.Get("Request-Id")
		return shouldRetry(res, method, e), e
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("read the answer of %s %s: %w", method, path, err)
	}
	return false, nil
}

// shouldRetry follows Stripe's advice (Stripe-Should-Retry), else retries
// a conflict on the idempotency key's first request, a lock that timed
// out, an unavailable API, and a server error of a call that makes
// nothing (Stripe answers a repeated POST's key with its first 500).
func shouldRetry(res *http.Response, method string, e *apiError) bool {
	switch res.Header.Get("Stripe-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	switch {
	case res.StatusCode == http.StatusConflict,
		res.StatusCode == http.StatusTooManyRequests && e.Code == "lock_timeout",
		res.StatusCode == http.StatusServiceUnavailable,
		res.StatusCode >= 500 && method != http.MethodPost:
		return true
	}
	return false
}

// expandable is a field Stripe writes as an object's id or, expanded, as
// the object: its ID is the id either way ("" for null).
type expandable struct{ ID string }

// UnmarshalJSON implements json.Unmarshaler.
func (x *expandable) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var obj struct {
			ID string `json:"id"`
		}
		err := json.Unmarshal(b, &obj)
		x.ID = obj.ID
		return err
	}
	var id *string
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	x.ID = ""
	if id != nil {
		x.ID = *id
	}
	return nil
}
