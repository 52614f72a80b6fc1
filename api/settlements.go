package api

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/dashboard/console"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/settlement"
	"github.com/domaind/domaind/models"
)

// runView is a settlement run as ops see it.
type runView struct {
	ID          string     `json:"id"`
	PeriodStart time.Time  `json:"period_start"`
	PeriodEnd   time.Time  `json:"period_end"`
	Status      string     `json:"status"`
	Trigger     string     `json:"trigger"`
	Error       *string    `json:"error"`
	StatusURL   string     `json:"status_url"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
}

func newRunView(r models.SettlementRun) runView {
	v := runView{ID: r.ID, PeriodStart: r.PeriodStart.UTC(), PeriodEnd: r.PeriodEnd.UTC(), Status: r.Status, Trigger: r.Trigger,
		StatusURL: "/api/ops/settlements/runs/" + r.ID, CreatedAt: r.CreatedAt.UTC(), StartedAt: models.UTC(r.StartedAt), FinishedAt: models.UTC(r.FinishedAt)}
	if r.Error != "" {
		v.Error = &r.Error
	}
	return v
}

// requestRun answers POST /api/ops/settlements/runs {period_start}: 202
// with the period's run, queued now or as it already is.
func (s *Server) requestRun(c *gin.Context) error {
	var in struct {
		PeriodStart *string `json:"period_start"`
	}
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	if in.PeriodStart == nil {
		return fault.Invalid("period_start", "is required: the start of a closed settlement period, a date (2026-11-16) or a time in RFC 3339")
	}
	start, err := console.PeriodStart(*in.PeriodStart, s.svc.Settlements.Closed().Start)
	if err != nil {
		return err
	}
	run, err := s.svc.Settlements.Request(c.Request.Context(), start, settlement.TriggerOps)
	if err != nil {
		return err
	}
	c.Header("Location", "/api/ops/settlements/runs/"+run.ID)
	c.JSON(http.StatusAccepted, newRunView(run))
	return nil
}

// listRuns answers GET /api/ops/settlements/runs: the newest runs.
func (s *Server) listRuns(c *gin.Context) error {
	runs, err := s.svc.Settlements.Runs(c.Request.Context())
	if err != nil {
		return err
	}
	out := make([]runView, len(runs))
	for i, r := range runs {
		out[i] = newRunView(r)
	}
	c.JSON(http.StatusOK, gin.H{"runs": out})
	return nil
}

// getRun answers GET /api/ops/settlements/runs/{id}: the run, its period's
// statements (every partner's) and their totals by currency.
func (s *Server) getRun(c *gin.Context) error {
	run, statements, err := s.svc.Settlements.RunStatements(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"run": newRunView(run), "statements": httpjson.NonNil(statements), "totals": settlement.Totals(statements)})
	return nil
}

// runCSV answers GET /api/ops/settlements/runs/{id}/statements.csv: the
// run's statements as CSV, one line each, amounts in cents, for finance's
// spreadsheets.
func (s *Server) runCSV(c *gin.Context) error {
	run, statements, err := s.svc.Settlements.RunStatements(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="settlement-%s.csv"`, run.PeriodStart.Format(time.DateOnly)))
	w := csv.NewWriter(c.Writer)
	w.Write([]string{"period_start", "period_end", "partner_id", "environment", "currency", "orders",
		"gross_cents", "refunds_cents", "commission_cents", "amount_owed_cents", "referral_cents", "payout_cents"})
	for _, st := range statements {
		w.Write([]string{st.PeriodStart.Format(time.RFC3339), st.PeriodEnd.Format(time.RFC3339), st.PartnerID, st.Environment,
			st.Currency, strconv.Itoa(st.Orders), cents(st.GrossCents), cents(st.RefundsCents), cents(st.CommissionCents),
			cents(st.AmountOwedCents), cents(st.ReferralCents), cents(st.PayoutCents)})
	}
	w.Flush()
	return w.Error()
}

func cents(n int64) string { return strconv.FormatInt(n, 10) }

// listPayouts answers GET /api/ops/payouts: payouts, newest period first,
// filtered by status, partner_id and environment, with limit and cursor.
func (s *Server) listPayouts(c *gin.Context) error {
	limit, err := httpjson.PageLimit(c)
	if err != nil {
		return err
	}
	payouts, next, err := s.svc.Payouts.List(c.Request.Context(), payout.Filter{PartnerID: c.Query("partner_id"),
		Environment: c.Query("environment"), Status: c.Query("status"), Limit: limit, Cursor: c.Query("cursor")})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"payouts": payout.Views(payouts), "next_cursor": httpjson.Nullable(next)})
	return nil
}

// markPayoutPaid answers POST /api/ops/payouts/{id}/mark-paid {reference}:
// finance has paid the payout; its ledger lines are written.
func (s *Server) markPayoutPaid(c *gin.Context) error {
	var in paidWith
	if err := httpjson.DecodeJSON(c, &in, false); err != nil {
		return err
	}
	p, err := s.svc.Payouts.MarkPaid(c.Request.Context(), c.Param("id"), in.Reference)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, payout.NewView(p))
	return nil
}
