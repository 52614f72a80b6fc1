// Package partner is the HTTP face of the partner API (SPEC §4.2): signed
// requests (§5.5) checked by one middleware, scopes (§5.6), and one file
// per resource. Handlers decode, call one service of internal/*, and
// encode; the rules live in those services. The package is mounted by
// api's router and never imports api.
//
// A partner request carries no session, cookie or CSRF token and gets no
// CORS headers: its signature is its whole authentication, and browsers
// are not its clients (a secret in a page would not stay one).
package partner

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/brokerage"
	"github.com/domaind/domaind/internal/catalog"
	"github.com/domaind/domaind/internal/checkout"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/knownaddr"
	"github.com/domaind/domaind/internal/nonce"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	partners "github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/referral"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/internal/webhook"
)

// Deps is what the partner API is built from.
type Deps struct {
	Partners  *partners.Service
	Inventory *inventory.Service
	Webhooks  *webhook.Service
	Orders    *order.Service
	Checkout  *checkout.Service
	// Settlements are the partner's statements.
	Settlements *settlement.Service
	// Payouts are what the service owes the partner.
	Payouts *payout.Service
	// Brokerage is the partner's brokerage cases.
	Brokerage *brokerage.Service
	// Referrals is the affiliate program: links and their reports.
	Referrals *referral.Service
	Outbox    *outbox.Outbox
	// Catalog gives the TLD metadata of a domain's detail.
	Catalog *catalog.Catalog
	Limiter *ratelimit.Limiter
	Nonces  *nonce.Store
	// Addresses are those each key id authenticated from, which its
	// failures' lockout spares.
	Addresses *knownaddr.Book
	// Idempotent replays a POST retried with its Idempotency-Key (the
	// API's middleware; it scopes keys by KeyID).
	Idempotent gin.HandlerFunc
	Log        *slog.Logger
	Now        func() time.Time
}

// API is the partner API's handlers.
type API struct {
	Deps
	resp httpjson.Responder
}

// New returns the partner API of d.
func New(d Deps) *API {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &API{Deps: d, resp: httpjson.Responder{Log: d.Log}}
}
