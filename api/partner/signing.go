package partner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/hmacsig"
	partners "github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/ratelimit"
)

// Limit is the rate limit of each credential (SPEC §8 leaves its value to
// us): 600 requests per minute, sliding, whatever the route.
var Limit = ratelimit.PerMinute("partner", 600)

// credentialKey holds the request's partners.Credential in the gin context.
const credentialKey = "partner.credential"

// credential is the credential that signed the request (authenticate ran).
func credential(c *gin.Context) partners.Credential {
	return c.MustGet(credentialKey).(partners.Credential)
}

// KeyID returns the key id of the credential that signed the request, once
// the signature has been checked.
func KeyID(c *gin.Context) (string, bool) {
	v, ok := c.Get(credentialKey)
	if !ok {
		return "", false
	}
	return v.(partners.Credential).KeyID, true
}

// Failed authentications (an unknown key, a wrong signature) are limited
// before the work each costs, a credential lookup and a secret's
// decryption: per client address, and per key id, so that many addresses
// cannot make the service check one credential without end. A request that
// authenticates spends nothing of either. Past its key id's limit, a
// request from an address the key id authenticated from in the last
// knownaddr.TTL is let through (its address's limit still holds): whoever
// knows a key id can spend its failures, but cannot lock the partner's own
// servers out with them.
var (
	FailuresPerAddress = ratelimit.PerMinute("partner-failures-address", 30)
	FailuresPerKey     = ratelimit.PerMinute("partner-failures-key", 120)
)

// authenticate checks a request's signature (SPEC §5.5) and, once it
// passes, spends its nonce and a unit of the credential's rate limit. The
// checks run cheapest first, and nothing is spent for a request that
// fails them: a forged request cannot burn a partner's nonces or limit.
func (a *API) authenticate(c *gin.Context) {
	cred, err := a.verify(c)
	if e, ok := fault.As(err); ok && e.Code == fault.InvalidSignature {
		a.failed(c)
	}
	if err == nil {
		err = a.admit(c, cred)
	}
	if err != nil {
		a.resp.Error(c, err)
		return
	}
	c.Set(credentialKey, cred)
	c.Next()
}

// failures are the limits of a request's failed authentications: its
// address's, and its key id's when it has a credential's shape (any other
// header would be a counter of its own, up to the header's size, in Redis).
func failures(c *gin.Context) []ratelimit.Check {
	limits := []ratelimit.Check{{Policy: FailuresPerAddress, Client: httpjson.Client(c)}}
	if keyID := c.GetHeader(hmacsig.HeaderKeyID); partners.KeyIDShaped(keyID) {
		limits = append(limits, ratelimit.Check{Policy: FailuresPerKey, Client: keyID})
	}
	return limits
}

// failuresLeft refuses a request whose address or key id has used up its
// failed authentications, before any credential is looked up; past the key
// id's limit (not the address's), not one from an address the key id
// authenticated from. Both limits are read in one round trip.
func (a *API) failuresLeft(c *gin.Context) error {
	ctx := c.Request.Context()
	checks := failures(c)
	results, err := a.Limiter.StatusAll(ctx, checks...)
	if err != nil {
		return err
	}
	for i, f := range checks {
		r := results[i]
		if !r.Allowed && f.Policy == FailuresPerKey {
			known, err := a.Addresses.Known(ctx, f.Client, httpjson.Client(c))
			if err != nil {
				return err
			}
			r.Allowed = known
		}
		if !r.Allowed { // the headers, Retry-After too, are the failures' limit's
			_ = httpjson.RateHeaders(c.Writer.Header(), f.Policy, r)
			return fault.New(fault.RateLimited, "too many requests that failed authentication (%d a minute per address, %d per key id); retry after the Retry-After seconds",
				FailuresPerAddress.Limit, FailuresPerKey.Limit)
		}
	}
	return nil
}

// failed counts a failed authentication against the request's address and
// key id.
func (a *API) failed(c *gin.Context) {
	ctx := context.WithoutCancel(c.Request.Context())
	for _, f := range failures(c) {
		if _, err := a.Limiter.Allow(ctx, f.Policy, f.Client); err != nil {
			a.Log.WarnContext(ctx, "counting a failed authentication failed", "policy", f.Policy.Name, "err", err)
		}
	}
}

// verify checks the headers, the timestamp and the signature.
func (a *API) verify(c *gin.Context) (partners.Credential, error) {
	h := c.Request.Header
	keyID := h.Get(hmacsig.HeaderKeyID)
	if keyID == "" {
		return partners.Credential{}, fault.New(fault.MissingCredentials, "the %s header is missing: sign the request with a partner credential", hmacsig.HeaderKeyID)
	}
	for _, name := range []string{hmacsig.HeaderTimestamp, hmacsig.HeaderNonce, hmacsig.HeaderSignature} {
		if h.Get(name) == "" {
			return partners.Credential{}, fault.New(fault.MissingSignatureHeaders, "the %s header is missing: a signed request carries %s, %s, %s and %s",
				name, hmacsig.HeaderKeyID, hmacsig.HeaderTimestamp, hmacsig.HeaderNonce, hmacsig.HeaderSignature)
		}
	}
	timestamp := h.Get(hmacsig.HeaderTimestamp)
	if _, err := hmacsig.ParseTimestamp(timestamp, a.Now(), hmacsig.MaxSkew); err != nil {
		return partners.Credential{}, &fault.Error{Code: fault.InvalidTimestamp, Message: err.Error(), Err: err}
	}
	query, err := hmacsig.CanonicalQuery(c.Request.URL.RawQuery)
	if err != nil {
		return partners.Credential{}, fault.InvalidErr("query", err)
	}
	// The handlers read the query as Go parses it, which drops a pair
	// with a ";" that the signature covers: such a query is refused.
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return partners.Credential{}, fault.InvalidErr("query", err)
	}
	if err := onceEach(values); err != nil {
		return partners.Credential{}, err
	}
	if err := a.failuresLeft(c); err != nil {
		return partners.Credential{}, err
	}
	body, err := io.ReadAll(c.Request.Body) // capped by the server's body limit
	if err != nil {
		return partners.Credential{}, err
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	cred, err := a.Partners.Authenticate(c.Request.Context(), keyID)
	unknown := errors.Is(err, partners.ErrUnknownKey)
	if err != nil && !unknown {
		return cred, err
	}
	// An unknown key is checked all the same, against no secret, and
	// refused as a mismatch: it is answered like a wrong signature.
	canonical := hmacsig.CanonicalString(httpjson.SentMethod(c.Request), c.Request.URL.EscapedPath(), query, timestamp, h.Get(hmacsig.HeaderNonce), body)
	err = hmacsig.CheckSignature(cred.Secret, canonical, h.Get(hmacsig.HeaderSignature))
	if err == nil && unknown {
		err = hmacsig.ErrMismatch
	}
	if err != nil {
		return cred, &fault.Error{Code: fault.InvalidSignature, Message: err.Error(), Err: err}
	}
	return cred, nil
}

// onceEach refuses a query parameter sent more than once: the partner API
// reads one value of each, and the signature covers them all, so a
// repeated one would let a signature stand for two requests.
func onceEach(q url.Values) error {
	for k, vs := range q {
		if len(vs) > 1 {
			return fault.Invalid(k, "is sent %d times; send each query parameter once", len(vs))
		}
	}
	return nil
}

// admit spends the request's nonce and a unit of the credential's limit,
// and records that the credential was used.
func (a *API) admit(c *gin.Context, cred partners.Credential) error {
	ctx := c.Request.Context()
	fresh, err := a.Nonces.Claim(ctx, cred.KeyID, c.GetHeader(hmacsig.HeaderNonce))
	if errors.Is(err, hmacsig.ErrBadNonce) {
		return fault.InvalidErr(hmacsig.HeaderNonce, err)
	}
	if err != nil {
		return err
	}
	if !fresh {
		return fault.New(fault.ReplayDetected, "the nonce was used already: every request, retries included, needs a fresh %s", hmacsig.HeaderNonce)
	}
	r, err := a.Limiter.Allow(ctx, Limit, cred.KeyID)
	if err != nil {
		return err
	}
	if err := httpjson.RateHeaders(c.Writer.Header(), Limit, r); err != nil {
		return err
	}
	if err := a.Partners.Touch(context.WithoutCancel(ctx), cred.KeyID); err != nil {
		a.Log.WarnContext(ctx, "recording a credential's use failed", "key_id", cred.KeyID, "err", err)
	}
	if err := a.Addresses.Remember(context.WithoutCancel(ctx), cred.KeyID, httpjson.Client(c)); err != nil {
		a.Log.WarnContext(ctx, "recording a credential's address failed", "key_id", cred.KeyID, "err", err)
	}
	return nil
}

// requireScope refuses a credential without scope.
func (a *API) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if cred := credential(c); !cred.Has(scope) {
			a.resp.Error(c, fault.New(fault.Forbidden, "this credential lacks the %q scope this endpoint needs", scope))
			return
		}
		c.Next()
	}
}
