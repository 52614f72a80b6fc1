package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/webhook"
	"github.com/domaind/domaind/models"
)

// accountPartner is the partner part of an approved partner's account
// page: its credentials, its webhook endpoints and their latest
// deliveries.
type accountPartner struct {
	Credentials  []accountCredentialRow
	Environments []string
	Scopes       []string
	Endpoints    []models.WebhookEndpoint
	Deliveries   []accountDeliveryRow
	// Issued is a credential just issued, its secret shown this once.
	Issued *partner.Issued
}

// accountCredentialRow is one of the person's partner credentials.
type accountCredentialRow struct {
	KeyID, Environment, Scopes, Created, LastUsed string
	Revoked                                       bool
}

// accountDeliveryRow is a delivery of the partner's events.
type accountDeliveryRow struct {
	webhook.DeliveryView
	Created, Latency string
}

// accountDeliveries is how many of the latest deliveries the page shows.
const accountDeliveries = 10

// partnerPart reads the partner part of the account page of p.
func (s *Server) partnerPart(ctx context.Context, p models.Partner) (*accountPartner, error) {
	part := &accountPartner{Environments: []string{models.EnvSandbox, models.EnvLive}, Scopes: partner.AllScopes}
	creds, err := s.svc.Partners.Credentials(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range creds {
		row := accountCredentialRow{KeyID: c.KeyID, Environment: c.Environment, Scopes: c.Scopes,
			Created: c.CreatedAt.UTC().Format(page.Time), Revoked: c.RevokedAt != nil}
		if c.LastUsedAt != nil {
			row.LastUsed = c.LastUsedAt.UTC().Format(page.Time)
		}
		part.Credentials = append(part.Credentials, row)
	}
	for _, env := range part.Environments {
		e, err := s.svc.Webhooks.Endpoint(ctx, p.ID, env)
		if e, ok := fault.As(err); ok && e.Code == fault.NotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		part.Endpoints = append(part.Endpoints, e)
	}
	deliveries, _, err := s.svc.Webhooks.Deliveries(ctx, webhook.DeliveryFilter{PartnerID: p.ID, Limit: accountDeliveries})
	if err != nil {
		return nil, err
	}
	for _, d := range deliveries {
		row := accountDeliveryRow{DeliveryView: d, Created: d.CreatedAt.UTC().Format(page.Time), Latency: page.Took(d.Latency())}
		part.Deliveries = append(part.Deliveries, row)
	}
	return part, nil
}

// errNotApproved refuses what only an approved partner may do.
var errNotApproved = fault.New(fault.Conflict, "your partner application is not approved yet: credentials and webhooks follow approval")

// ownPartner is the signed-in person's approved partner, for the account
// page's partner forms (which have checked the CSRF token).
func (s *Server) ownPartner(c *gin.Context, u models.User) (models.Partner, error) {
	p, err := s.svc.Partners.OwnedBy(c.Request.Context(), u.ID)
	if err != nil {
		return p, err
	}
	if p.Status != models.PartnerApproved {
		return p, errNotApproved
	}
	return p, nil
}

// partnerSubmit answers the account page's partner forms: issue a
// credential (the page shows its secret, this once; a resend of the form
// issues none), revoke one, send a
// test event to an endpoint.
func (s *Server) partnerSubmit(c *gin.Context, u models.User) (func(*accountPageData), error) {
	ctx := c.Request.Context()
	p, err := s.ownPartner(c, u)
	if err != nil {
		return nil, err
	}
	switch c.Param("action") {
	case "issue":
		issued, err := formOnce(s, c, u, func(ctx context.Context) (partner.Issued, error) {
			return s.svc.Partners.IssueCredential(ctx, p.ID, c.PostForm("environment"), c.PostFormArray("scope"))
		})
		return func(v *accountPageData) {
			v.PartnerPart.Issued = &issued
			v.Notice = fmt.Sprintf("%s credential %s issued with %s", issued.Environment, issued.KeyID, strings.Join(issued.Scopes, ", "))
		}, err
	case "revoke":
		return nil, s.svc.Partners.Revoke(ctx, p.ID, c.PostForm("key_id"))
	case "test-event":
		_, err := s.svc.Webhooks.SendTest(ctx, s.outbox, p.ID, c.PostForm("environment"))
		return nil, err
	}
	return nil, fault.New(fault.NotFound, "%q is not a partner action of the account page", c.Param("action"))
}
