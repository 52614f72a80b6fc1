package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/market"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/models"
)

// keyLimit bounds the v1 calls of one developer key.
var keyLimit = ratelimit.PerMinute("v1-key", 600)

// keyView is a developer key as listed (never with its secret).
type keyView struct {
	Key       string    `json:"key"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// newKeyResponse is the answer of POST /api/v1/keys: the one time the
// secret is shown.
type newKeyResponse struct {
	keyView
	Secret string `json:"secret"`
	Note   string `json:"note"`
}

func newKeyView(k models.APIKey) keyView {
	return keyView{Key: k.ID, Name: k.Name, CreatedAt: k.CreatedAt.UTC()}
}

// createKey answers POST /api/v1/keys (signed-in session and CSRF token).
func (s *Server) createKey(c *gin.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := httpjson.DecodeJSON(c, &req, true); err != nil {
		return err
	}
	u, _ := currentUser(c)
	k, err := s.svc.Accounts.CreateKey(c.Request.Context(), u, req.Name)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store") // the secret is in this body
	c.JSON(http.StatusCreated, newKeyResponse{keyView: newKeyView(k.APIKey), Secret: k.Secret,
		Note: "store the secret now: it is not shown again; send it as x-api-secret with x-api-key"})
	return nil
}

// listKeys answers GET /api/v1/keys.
func (s *Server) listKeys(c *gin.Context) error {
	u, _ := currentUser(c)
	keys, err := s.svc.Accounts.Keys(c.Request.Context(), u)
	if err != nil {
		return err
	}
	views := make([]keyView, len(keys))
	for i, k := range keys {
		views[i] = newKeyView(k)
	}
	c.JSON(http.StatusOK, gin.H{"keys": views})
	return nil
}

// revokeKey answers DELETE /api/v1/keys/{key}.
func (s *Server) revokeKey(c *gin.Context) error {
	u, _ := currentUser(c)
	if err := s.svc.Accounts.RevokeKey(c.Request.Context(), u, c.Param("key")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// requireKey lets through requests with a live developer key and its
// secret (x-api-key, x-api-secret), under the key's rate limit.
func (s *Server) requireKey(c *gin.Context) {
	id, sec := c.GetHeader("x-api-key"), c.GetHeader("x-api-secret")
	if id == "" || sec == "" {
		s.resp.Error(c, fault.New(fault.Unauthorized, "x-api-key and x-api-secret are required"))
		return
	}
	k, err := s.svc.Accounts.KeyOwner(c.Request.Context(), id, sec)
	if err != nil {
		s.resp.Error(c, err)
		return
	}
	if _, err := s.spend(c, keyLimit, k.ID); err != nil {
		s.resp.Error(c, err)
		return
	}
	if err := s.svc.Accounts.TouchKey(context.WithoutCancel(c.Request.Context()), k.ID); err != nil {
		s.log.WarnContext(c.Request.Context(), "developer key use not recorded", "key", k.ID, "err", err)
	}
	c.Next()
}

// availabilityResponse is SPEC §2.9.
type availabilityResponse struct {
	Domain     string          `json:"domain"`
	Available  bool            `json:"available"`
	Locked     bool            `json:"locked"`
	BINPrice   *market.Dollars `json:"bin_price"`
	FloorPrice *market.Dollars `json:"floor_price"`
}

// getMarketAvailability answers GET /api/v1/domains/available?domain=: can
// the name be bought in our marketplace now, and at what prices. A name we
// do not list is not available, with null prices. A host name asks about
// its registrable domain (www.example.com about example.com), as search
// and WHOIS do.
func (s *Server) getMarketAvailability(c *gin.Context) error {
	raw := c.Query("domain")
	if raw == "" {
		return fault.New(fault.BadRequest, "domain is required")
	}
	n, err := domainname.Parse(raw)
	if err != nil {
		return err
	}
	res := availabilityResponse{Domain: n.Registrable}
	l, listed, err := s.svc.Market.Public(c.Request.Context(), n.Registrable)
	if err != nil {
		return err
	}
	if listed {
		res.Locked = l.Locked(s.now())
		res.Available = !res.Locked
		res.BINPrice, res.FloorPrice = market.ToDollars(l.BINCents), market.ToDollars(l.FloorCents)
	}
	c.JSON(http.StatusOK, res)
	return nil
}
