package idempotency

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/domaind/domaind/internal/fault"
)

// FormField is the name of the hidden field that carries a form's token.
const FormField = "once"

// FormToken is a fresh token for a page's form whose answer makes
// something a resend must not make again: a credential or key, whose
// secret that answer shows once. A browser resends a form when its answer
// is reloaded, or when its button is pressed twice.
func FormToken() string { return rand.Text() }

// ErrFormSent is Once's answer to a token it has seen.
var ErrFormSent = fault.New(fault.Conflict, "this form was sent before: what it made is listed on this page, and a secret shown then is not shown again")

// Once runs do the first time token comes from scope's forms (a person's,
// or the ops login's), and answers ErrFormSent after that, for TTL. A
// token stays spent unless do fails, so a refused form can be sent again.
// A missing or overlong token is a form from an old page: a validation
// error naming FormField.
func (s *Store) Once(ctx context.Context, scope, token string, do func() error) error {
	if token == "" || len(token) > 64 {
		return fault.Invalid(FormField, "this form is out of date: load the page again and send it from there")
	}
	scope = "form:" + scope
	claimed, _, err := s.keys.claim(ctx, recordKey(scope, token), s.encode(Record{Fingerprint: scope}), TTL)
	if err != nil {
		return err
	}
	if !claimed {
		return ErrFormSent
	}
	if err := do(); err != nil { // freed even when the sender has gone: nothing was made
		return errors.Join(err, s.Release(context.WithoutCancel(ctx), scope, token))
	}
	return nil
}
