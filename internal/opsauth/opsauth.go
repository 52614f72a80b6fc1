// Package opsauth guards the dashboard and ops endpoints with the ops
// credentials (DOMAIND_OPS_USER, DOMAIND_OPS_PASSWORD) over HTTP Basic auth.
package opsauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// Credentials are the ops user and password.
type Credentials struct{ User, Password string }

// Check reports whether r carries the credentials. The comparison takes the
// same time whichever part is wrong.
func (c Credentials) Check(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if !ok {
		return false
	}
	// Hash first so the comparisons run over equal lengths.
	uh, ph := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
	wu, wp := sha256.Sum256([]byte(c.User)), sha256.Sum256([]byte(c.Password))
	return subtle.ConstantTimeCompare(uh[:], wu[:])&subtle.ConstantTimeCompare(ph[:], wp[:]) == 1
}

// Challenge is the WWW-Authenticate value sent with a 401.
const Challenge = `Basic realm="domaind ops", charset="UTF-8"`
