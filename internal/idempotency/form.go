package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/domaind/domaind/internal/fault"
)

// FormField is the name of the hidden field that carries a form's token.
const FormField = "once"

// FormToken is a fresh token for a page's form whose answer makes
// something a resend must not make again: a credential or key, whose
// secret that answer shows once, a partner, an offer. A browser resends a
// form when its answer is reloaded, or when its button is pressed twice.
func FormToken() string { return rand.Text() }

// ErrFormSent is Once's answer to a token whose work was done a while ago.
var ErrFormSent = fault.New(fault.Conflict, "this form was sent before: what it made is listed on this page, and a secret shown then is not shown again")

// How a resend of a form is answered. A double click sends the form twice
// at once, and the browser shows the second answer only: that answer must
// be the first send's result, the secret included, or the secret is lost.
// So a resend waits up to formWait for the first send's work, and is
// answered with its result while it is younger than replayFor (a reload
// at once too); after that it is refused, so that the secret is not shown
// again to whoever reloads the page later.
const (
	formWait  = 10 * time.Second
	formPoll  = 50 * time.Millisecond
	replayFor = 2 * time.Minute
	// formWork bounds a form's work, below formWait: a resend waiting for
	// the work sees how it ended, its failure included.
	formWork = formWait / 2
)

// formAnswer is what a form's token keeps of its work: the result, and
// when it was made.
type formAnswer struct {
	Done  time.Time       `json:"done"`
	Value json.RawMessage `json:"value"`
}

// Once runs do the first time token comes from scope's forms (a person's,
// or the ops login's), and answers a resend of the same form with that
// first result while it is fresh, ErrFormSent after (for TTL). do runs to
// its end, within formWork, even when the sender has gone: a double click
// drops the first send's connection, and the second send waits for the
// first's result. A token is freed when do fails, so a refused form can be
// sent again. A missing or overlong token is a form from an old page: a
// validation error naming FormField. The result is kept sealed, as every
// record of the Store is.
func Once[T any](ctx context.Context, s *Store, scope, token string, do func(context.Context) (T, error)) (T, error) {
	var zero T
	if token == "" || len(token) > 64 {
		return zero, fault.Invalid(FormField, "this form is out of date: load the page again and send it from there")
	}
	scope = "form:" + scope
	k := recordKey(scope, token)
	waited := time.Duration(0)
	for {
		claimed, prior, err := s.keys.claim(ctx, k, s.encode(Record{Running: true, Fingerprint: scope}), lockTTL)
		if err != nil {
			return zero, err
		}
		if claimed {
			break
		}
		r, err := s.decode(prior)
		if err != nil {
			return zero, err
		}
		if !r.Running {
			return replay[T](r, s.Now())
		}
		if waited >= formWait { // the first send is slow: its result will be listed
			return zero, ErrFormSent
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(formPoll):
			waited += formPoll
		}
	}
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), formWork)
	defer cancel()
	v, err := do(work)
	if err != nil { // freed even when the sender has gone: nothing was made
		return zero, errors.Join(err, s.Release(context.WithoutCancel(ctx), scope, token))
	}
	// The result is the answer even when it cannot be kept: the work is
	// done, and the claim still holds the token for lockTTL.
	if b, err := json.Marshal(v); err == nil {
		answer, _ := json.Marshal(formAnswer{Done: s.Now().UTC(), Value: b}) // a time and raw JSON always marshal
		_ = s.keys.set(context.WithoutCancel(ctx), k, s.encode(Record{Fingerprint: scope, Body: answer}), TTL)
	}
	return v, nil
}

// replay is the result r keeps, while it is fresh at now.
func replay[T any](r Record, now time.Time) (T, error) {
	var a formAnswer
	var v T
	if err := json.Unmarshal(r.Body, &a); err != nil {
		return v, fmt.Errorf("form answer: %w", err)
	}
	if now.Sub(a.Done) > replayFor {
		return v, ErrFormSent
	}
	if err := json.Unmarshal(a.Value, &v); err != nil {
		return v, fmt.Errorf("form answer: %w", err)
	}
	return v, nil
}
