package partnerclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// APIError is an answer other than 2xx, with the API's error code (such as
// "invalid_signature", "replay_detected", "rate_limited", "not_found" or
// "validation_error"; see the API guide) when the body carried one.
type APIError struct {
	Status  int    // HTTP status
	Code    string // machine-readable code; empty if the body had none
	Message string // human-readable explanation
	Field   string // the offending field, for validation errors
}

// Error says the status, code, message and field.
func (e *APIError) Error() string {
	s := fmt.Sprintf("partnerclient: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// GetJSON sends a signed GET with query and decodes a 2xx JSON answer into
// out (skipped when out is nil). Another status is an *APIError.
func (c *Client) GetJSON(ctx context.Context, path string, query url.Values, out any, opts ...CallOption) error {
	return c.doJSON(ctx, http.MethodGet, path, query, nil, out, opts)
}

// PostJSON sends body, encoded as JSON, in a signed POST and decodes a 2xx
// JSON answer into out (skipped when out is nil). Another status is an
// *APIError. Retries carry one Idempotency-Key: WithIdempotencyKey's, or one
// generated for this call.
func (c *Client) PostJSON(ctx context.Context, path string, body, out any, opts ...CallOption) error {
	return c.sendJSON(ctx, http.MethodPost, path, body, out, opts)
}

// PutJSON is PostJSON with PUT (which is idempotent by itself: no key is
// generated).
func (c *Client) PutJSON(ctx context.Context, path string, body, out any, opts ...CallOption) error {
	return c.sendJSON(ctx, http.MethodPut, path, body, out, opts)
}

// sendJSON encodes body (none when nil) and sends it with method.
func (c *Client) sendJSON(ctx context.Context, method, path string, body, out any, opts []CallOption) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return fmt.Errorf("partnerclient: encode body: %w", err)
		}
	}
	return c.doJSON(ctx, method, path, nil, b, out, opts)
}

func (c *Client) doJSON(ctx context.Context, method, path string, query url.Values, body []byte, out any, opts []CallOption) error {
	resp, b, err := c.Do(ctx, method, path, query, body, opts...)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, b)
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("partnerclient: %s %s: decode response: %w", method, path, err)
	}
	return nil
}

// apiError reads the typed error shape {"error":{"code","message","field"}};
// a body without it (from a proxy, say) leaves Code empty.
func apiError(status int, body []byte) *APIError {
	var typed struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
	}
	e := &APIError{Status: status, Message: http.StatusText(status)}
	if json.Unmarshal(body, &typed) == nil && typed.Error.Code != "" {
		e.Code, e.Field = typed.Error.Code, typed.Error.Field
		if typed.Error.Message != "" {
			e.Message = typed.Error.Message
		}
	}
	return e
}
