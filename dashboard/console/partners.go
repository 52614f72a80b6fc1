package console

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/idempotency"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/models"
)

// opsPartnersPageData is what the ops partners page shows.
type opsPartnersPageData struct {
	Title, Error, Done string
	// Once is the token of the forms that add a partner or issue a
	// credential, which a resend of the same form does not do again.
	Once string
	// Issued is a credential just issued, its secret shown this once.
	Issued       *partner.Issued
	Partners     []opsPartnerRow
	Scopes       []string
	Environments []string
}

// opsPartnerRow is a partner as the page shows it.
type opsPartnerRow struct {
	models.Partner
	// Commission is the rate as a percentage ("15.00").
	Commission, Created string
	Pending             bool
	Credentials         []opsCredentialRow
	Webhooks            []models.WebhookEndpoint
}

// opsCredentialRow is a credential without its secret.
type opsCredentialRow struct {
	KeyID, Environment, Scopes, Created, LastUsed string
	Revoked                                       bool
}

// opsPartnersPage answers GET /ops/partners: every partner, newest first,
// with forms to approve an application, change the commission and the
// affiliate flag, issue a credential and revoke one, as the ops API's
// partner routes do.
func (con *Console) opsPartnersPage(c *gin.Context) {
	con.renderOpsPartners(c, http.StatusOK, opsPartnersPageData{Done: con.notice(c)})
}

// renderOpsPartners shows the partners with status beside what view says
// (a problem, a notice, a credential just issued).
func (con *Console) renderOpsPartners(c *gin.Context, status int, view opsPartnersPageData) {
	view.Title, view.Scopes, view.Environments = "Partners", partner.AllScopes, []string{models.EnvSandbox, models.EnvLive}
	view.Once = idempotency.FormToken()
	listed, err := con.svc.Partners.List(c.Request.Context())
	if err != nil && view.Error == "" {
		status, view.Error = con.problem(c, err)
	}
	at := func(t time.Time) string { return t.UTC().Format(page.Time) }
	for _, l := range listed {
		row := opsPartnerRow{Partner: l.Partner, Commission: fmt.Sprintf("%d.%02d", l.CommissionBPS/100, l.CommissionBPS%100),
			Created: at(l.CreatedAt), Pending: l.Status == models.PartnerPending, Webhooks: l.Webhooks}
		for _, cr := range l.Credentials {
			cv := opsCredentialRow{KeyID: cr.KeyID, Environment: cr.Environment, Scopes: cr.Scopes, Created: at(cr.CreatedAt), Revoked: cr.RevokedAt != nil}
			if cr.LastUsedAt != nil {
				cv.LastUsed = at(*cr.LastUsedAt)
			}
			row.Credentials = append(row.Credentials, cv)
		}
		view.Partners = append(view.Partners, row)
	}
	con.render(c, status, "ops_partners.html", view)
}

// opsPartnerSubmit answers the page's forms that change a partner: back
// to the page (303) saying what was done, or the page with what went
// wrong.
func (con *Console) opsPartnerSubmit(c *gin.Context) {
	ctx, id := c.Request.Context(), c.Param("id")
	var p models.Partner
	var err error
	switch cmp.Or(c.Param("action"), "create") { // POST /ops/partners adds one
	case "create":
		p, err = formOnce(con, c, func(ctx context.Context) (models.Partner, error) {
			return con.svc.Partners.Create(ctx, c.PostForm("name"), c.PostForm("contact_email"))
		})
	case "approve":
		p, err = con.svc.Partners.Approve(ctx, id)
	case "terms":
		var t partner.Terms
		if t.CommissionBPS, err = formPercent("commission", c.PostForm("commission")); err == nil {
			affiliate := c.PostForm("affiliate") != ""
			t.Affiliate = &affiliate
			p, err = con.svc.Partners.Update(ctx, id, t)
		}
	case "revoke":
		if err = con.svc.Partners.Revoke(ctx, id, c.PostForm("key_id")); err == nil {
			con.done(c, "/ops/partners", fmt.Sprintf("%s: credential %s revoked", id, c.PostForm("key_id")))
			return
		}
	default:
		err = fault.New(fault.NotFound, "%q is not a change of a partner", c.Param("action"))
	}
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsPartners(c, status, opsPartnersPageData{Error: problem})
		return
	}
	con.done(c, "/ops/partners", fmt.Sprintf("%s (%s): %s, commission %d bps, affiliate %t", p.Name, p.ID, p.Status, p.CommissionBPS, p.Affiliate))
}

// opsCredentialSubmit answers the page's issue form with the page showing
// the new credential's secret, this once (the page is never cached, and a
// resend of the form issues none: it shows the first's, for a short
// while).
func (con *Console) opsCredentialSubmit(c *gin.Context) {
	issued, err := formOnce(con, c, func(ctx context.Context) (partner.Issued, error) {
		return con.svc.Partners.IssueCredential(ctx, c.Param("id"), c.PostForm("environment"), c.PostFormArray("scope"))
	})
	if err != nil {
		status, problem := con.problem(c, err)
		con.renderOpsPartners(c, status, opsPartnersPageData{Error: problem})
		return
	}
	con.renderOpsPartners(c, http.StatusCreated, opsPartnersPageData{Issued: &issued,
		Done: fmt.Sprintf("%s: %s credential %s issued", c.Param("id"), issued.Environment, issued.KeyID)})
}

// formPercent reads a commission typed as a percentage ("15", "12.5") as
// basis points, a validation error naming field otherwise.
func formPercent(field, v string) (*int, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
	frac += strings.Repeat("0", max(0, 2-len(frac)))
	w, err1 := strconv.Atoi(whole)
	f, err2 := strconv.Atoi(frac)
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	bps := min(w, 101)*100 + f // a larger whole part would wrap around
	if !digits(whole) || !digits(frac) || err1 != nil || err2 != nil || len(frac) > 2 || bps > partner.MaxCommissionBPS {
		return nil, fault.Invalid(field, "must be a percentage from 0 to 100 with at most two decimals, such as 15 or 12.5")
	}
	return &bps, nil
}
