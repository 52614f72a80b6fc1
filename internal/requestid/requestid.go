// Package requestid carries the id of the HTTP request that started some work
// through contexts, from the API into tasks and back into worker logs.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/base32"
)

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the id carried by ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// New returns a fresh random request id (16 characters, URL safe).
func New() string {
	b := make([]byte, 10)
	rand.Read(b)
	return base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}
