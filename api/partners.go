package api

import (
	"cmp"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/models"
)

// The partner API itself is package api/partner; here are the routes
// around it that people use: ops managing partners, credentials and
// inventory (behind the ops login), and a signed-in person applying.

// partnerView is a partner as ops and applicants see it.
type partnerView struct {
	ID            string           `json:"id"`
	Name          string           `json:"name"`
	ContactEmail  string           `json:"contact_email"`
	Status        string           `json:"status"`
	CommissionBPS int              `json:"commission_bps"`
	Affiliate     bool             `json:"affiliate"`
	CreatedAt     time.Time        `json:"created_at"`
	ApprovedAt    *time.Time       `json:"approved_at"`
	Credentials   []credentialView `json:"credentials,omitempty"`
	Webhooks      []webhookView    `json:"webhooks,omitempty"`
}

func newPartnerView(p models.Partner) partnerView {
	return partnerView{ID: p.ID, Name: p.Name, ContactEmail: p.ContactEmail, Status: p.Status,
		CommissionBPS: p.CommissionBPS, Affiliate: p.Affiliate, CreatedAt: p.CreatedAt.UTC(), ApprovedAt: models.UTC(p.ApprovedAt)}
}

// credentialView is a credential without its secret.
type credentialView struct {
	KeyID       string     `json:"key_id"`
	Environment string     `json:"environment"`
	Scopes      []string   `json:"scopes"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
}

// webhookView is an endpoint as ops see it: one set inactive by failures
// shows here.
type webhookView struct {
	Environment string `json:"environment"`
	URL         string `json:"url"`
	Active      bool   `json:"active"`
	Failures    int    `json:"failures"`
}

// createPartner answers POST /api/ops/partners: a pending partner.
func (s *Server) createPartner(c *gin.Context) error {
	var req struct {
		Name         string `json:"name"`
		ContactEmail string `json:"contact_email"`
	}
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	p, err := s.svc.Partners.Create(c.Request.Context(), req.Name, req.ContactEmail)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, newPartnerView(p))
	return nil
}

// listPartners answers GET /api/ops/partners: every partner with its
// credentials (no secrets) and webhook endpoints.
func (s *Server) listPartners(c *gin.Context) error {
	ps, err := s.svc.Partners.List(c.Request.Context())
	if err != nil {
		return err
	}
	out := make([]partnerView, len(ps))
	for i, p := range ps {
		v := newPartnerView(p.Partner)
		for _, cr := range p.Credentials {
			v.Credentials = append(v.Credentials, credentialView{KeyID: cr.KeyID, Environment: cr.Environment,
				Scopes: strings.Fields(cr.Scopes), CreatedAt: cr.CreatedAt.UTC(), LastUsedAt: models.UTC(cr.LastUsedAt), RevokedAt: models.UTC(cr.RevokedAt)})
		}
		for _, e := range p.Webhooks {
			v.Webhooks = append(v.Webhooks, webhookView{Environment: e.Environment, URL: e.URL, Active: e.Active, Failures: e.Failures})
		}
		out[i] = v
	}
	c.JSON(http.StatusOK, gin.H{"partners": out, "count": len(out)})
	return nil
}

// approvePartner answers POST /api/ops/partners/{id}/approve.
func (s *Server) approvePartner(c *gin.Context) error {
	p, err := s.svc.Partners.Approve(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, newPartnerView(p))
	return nil
}

// updatePartner answers PATCH /api/ops/partners/{id} {commission_bps?,
// affiliate?}: the partner with its new terms.
func (s *Server) updatePartner(c *gin.Context) error {
	var req partner.Terms
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	p, err := s.svc.Partners.Update(c.Request.Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, newPartnerView(p))
	return nil
}

// issueCredential answers POST /api/ops/partners/{id}/credentials with the
// new credential's secret, shown this once.
func (s *Server) issueCredential(c *gin.Context) error {
	var req struct {
		Environment string   `json:"environment"`
		Scopes      []string `json:"scopes"`
	}
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	cr, err := s.svc.Partners.IssueCredential(c.Request.Context(), c.Param("id"), req.Environment, req.Scopes)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store") // the secret is in this body
	c.JSON(http.StatusCreated, cr)
	return nil
}

// revokeCredential answers DELETE /api/ops/partners/{id}/credentials/{key_id}.
func (s *Server) revokeCredential(c *gin.Context) error {
	if err := s.svc.Partners.Revoke(c.Request.Context(), c.Param("id"), c.Param("key_id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// inventoryView is an inventory listing ops added.
type inventoryView struct {
	ID          string    `json:"id"`
	Domain      string    `json:"domain"`
	Environment string    `json:"environment"`
	BINCents    *int64    `json:"bin_cents"`
	FloorCents  *int64    `json:"floor_cents"`
	Currency    string    `json:"currency"`
	CreatedAt   time.Time `json:"created_at"`
}

// addListing answers POST /api/ops/listings: a name for partners to sell,
// in the live marketplace or the sandbox inventory.
func (s *Server) addListing(c *gin.Context) error {
	var req struct {
		Domain      string `json:"domain"`
		BINCents    *int64 `json:"bin_cents"`
		FloorCents  *int64 `json:"floor_cents"`
		Environment string `json:"environment"`
	}
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	it, err := s.svc.Inventory.Add(c.Request.Context(), req.Environment, req.Domain, req.BINCents, req.FloorCents)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, newInventoryView(it, req.Environment))
	return nil
}

func newInventoryView(it inventory.Item, env string) inventoryView {
	return inventoryView{ID: it.ID, Domain: it.Domain, Environment: env, BINCents: it.BINCents, FloorCents: it.FloorCents,
		Currency: it.Currency, CreatedAt: it.CreatedAt.UTC()}
}

// removeListing answers DELETE /api/ops/listings/{id}?environment=.
func (s *Server) removeListing(c *gin.Context) error {
	if err := s.svc.Inventory.Remove(c.Request.Context(), c.Query("environment"), c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// applyAsPartner answers POST /api/partner/applications: the signed-in
// person applies to sell through the partner API. Once ops approve, a
// sandbox credential is shown once on their account page.
func (s *Server) applyAsPartner(c *gin.Context) error {
	var req struct {
		Name         string `json:"name"`
		ContactEmail string `json:"contact_email"`
	}
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	u, _ := currentUser(c)
	p, err := s.svc.Partners.Apply(c.Request.Context(), u.ID, req.Name, cmp.Or(req.ContactEmail, u.Email))
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, newPartnerView(p))
	return nil
}
