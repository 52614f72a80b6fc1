package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/registry"
)

// pricingLimit is SPEC §8's shared limit of the pricing and metadata
// endpoints. A client that bursts takes up to 64 units per trip to Redis
// (ratelimit's leases; half of what it has left at most): these answers
// are cheap, and the round trip per request was most of what they cost.
var pricingLimit = func() ratelimit.Policy {
	p := ratelimit.PerMinute("pricing", 120)
	p.Lease = 64
	return p
}()

// priceResponse is SPEC §2.7.
type priceResponse struct {
	TLD        string `json:"tld"`
	Op         string `json:"op"`
	PriceCents *int64 `json:"priceCents"`
}

// getTLDPrice answers GET /api/pricing/tld?tld=&op= from the synced prices
// (through the in-memory catalog).
// A TLD that is not sold, or an operation it does not offer, has a null price.
// Its 400s use the legacy error shape (SPEC §7.1).
func (s *Server) getTLDPrice(c *gin.Context) error {
	raw, ok := c.GetQuery("tld")
	if !ok || strings.TrimSpace(raw) == "" {
		return fault.New(fault.BadRequest, "tld is required")
	}
	tld, err := domainname.ParseTLD(raw)
	if err != nil {
		return fault.New(fault.BadRequest, "invalid tld %v", err)
	}
	op := c.DefaultQuery("op", registry.OpTransfer)
	if !slices.Contains(registry.Ops, op) {
		return fault.New(fault.BadRequest, "op must be one of %s", strings.Join(registry.Ops, ", "))
	}
	cat, err := s.svc.Catalog.Get(c.Request.Context())
	if err != nil {
		return err
	}
	cents, _ := cat.Price(tld, op)
	c.JSON(http.StatusOK, priceResponse{TLD: tld, Op: op, PriceCents: cents})
	return nil
}

// metadataResponse is SPEC §2.8.
type metadataResponse struct {
	TLD string `json:"tld"`
	registry.Metadata
	Source       string    `json:"source"`
	LastSyncedAt time.Time `json:"lastSyncedAt"`
	Stale        bool      `json:"stale"`
}

// getTLDMetadata answers GET /api/tlds/{tld}/metadata from the synced rules.
func (s *Server) getTLDMetadata(c *gin.Context) error {
	tld, err := domainname.ParseTLD(c.Param("tld"))
	if err != nil {
		return fault.InvalidErr("tld", err)
	}
	cat, err := s.svc.Catalog.Get(c.Request.Context())
	if err != nil {
		return err
	}
	t, ok := cat.TLDs[tld]
	if !ok {
		return fault.New(fault.NotFound, "no metadata for TLD %q", tld)
	}
	c.JSON(http.StatusOK, metadataResponse{
		TLD: t.Name, Metadata: t.Metadata, Source: t.Source, // the provider that synced it: sandbox or rtr
		LastSyncedAt: t.LastSyncedAt.UTC(), Stale: t.Stale(s.now()),
	})
	return nil
}
