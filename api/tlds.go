package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/models"
)

// pricingLimit is SPEC §8's shared limit of the pricing and metadata endpoints.
var pricingLimit = ratelimit.PerMinute("pricing", 120)

// priceResponse is SPEC §2.7.
type priceResponse struct {
	TLD        string `json:"tld"`
	Op         string `json:"op"`
	PriceCents *int64 `json:"priceCents"`
}

// getTLDPrice answers GET /api/pricing/tld?tld=&op= from the synced prices.
// A TLD that is not sold, or an operation it does not offer, has a null price.
// Its 400s use the legacy error shape (SPEC §7.1).
func (s *Server) getTLDPrice(c *gin.Context) error {
	raw, ok := c.GetQuery("tld")
	if !ok || strings.TrimSpace(raw) == "" {
		return Errorf(http.StatusBadRequest, "bad_request", "tld is required")
	}
	tld, err := domainname.ParseTLD(raw)
	if err != nil {
		return Errorf(http.StatusBadRequest, "bad_request", "invalid tld %v", err)
	}
	op := c.DefaultQuery("op", registry.OpTransfer)
	if !slices.Contains(registry.Ops, op) {
		return Errorf(http.StatusBadRequest, "bad_request", "op must be one of %s", strings.Join(registry.Ops, ", "))
	}
	var p models.TLDPrice
	err = s.db.WithContext(c.Request.Context()).First(&p, "tld = ? AND op = ?", tld, op).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	c.JSON(http.StatusOK, priceResponse{TLD: tld, Op: op, PriceCents: p.Cents})
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

// metadataSource is SPEC §2.8's `source`: the rules follow Realtime
// Register's model whichever provider supplied them.
const metadataSource = "rtr"

// getTLDMetadata answers GET /api/tlds/{tld}/metadata from the synced rules.
func (s *Server) getTLDMetadata(c *gin.Context) error {
	tld, err := domainname.ParseTLD(c.Param("tld"))
	if err != nil {
		return err
	}
	var t models.TLD
	err = s.db.WithContext(c.Request.Context()).First(&t, "name = ?", tld).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Errorf(http.StatusNotFound, "not_found", "no metadata for TLD %q", tld)
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, metadataResponse{
		TLD: t.Name, Metadata: t.Metadata, Source: metadataSource,
		LastSyncedAt: t.LastSyncedAt.UTC(), Stale: t.Stale(s.now()),
	})
	return nil
}
