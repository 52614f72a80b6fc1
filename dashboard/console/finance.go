package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/dashboard/page"
	"github.com/domaind/domaind/internal/settlement"
)

// financePageData is what the finance page shows.
type financePageData struct {
	Title, Error string
	// Open says when the period now running closes.
	Open    string
	Chart   *chart
	Periods []financePeriodRow
}

// financePeriodRow is a closed period: its run, or a form to run it, and
// its totals by currency.
type financePeriodRow struct {
	Start, End string
	// StartParam is the period's start as the Run now form sends it.
	StartParam string
	RunID      string
	RunStatus  string
	Totals     []opsTotalRow
}

// financePage answers GET /ops/finance: the last settlement periods,
// newest first, each with its sales, refunds, commission, what partners
// are owed and paid out, a link to its run or a Run now form when it was
// never run, and a chart of them drawn here (SVG: no script runs).
func (con *Console) financePage(c *gin.Context) {
	view := financePageData{Title: "Finance"}
	status := http.StatusOK
	history, err := con.svc.Settlements.History(c.Request.Context())
	if err != nil {
		status, view.Error = con.problem(c, err)
	}
	open := con.svc.Settlements.Open()
	view.Open = fmt.Sprintf("The period from %s is open: it can be run once it closes at %s (the scheduler asks for its run then).",
		open.Start.Format(page.Time), open.End.Format(page.Time))
	view.Chart = newChart(history)
	for _, h := range history {
		row := financePeriodRow{Start: h.Start.Format(page.Time), End: h.End.Format(page.Time), StartParam: h.Start.Format(time.RFC3339)}
		if h.Run != nil {
			row.RunID, row.RunStatus = h.Run.ID, h.Run.Status
		}
		for _, t := range h.Totals {
			row.Totals = append(row.Totals, newOpsTotalRow(t))
		}
		view.Periods = append(view.Periods, row)
	}
	con.render(c, status, "ops_finance.html", view)
}

// chart is the finance page's bar chart: a period's sales (GMV) and the
// commission kept of them, oldest on the left, in the currency that sold
// most. Coordinates are the SVG's.
type chart struct {
	Currency      string
	Width, Height int
	// Max is the amount of the tallest bar, the scale's top.
	Max  string
	Bars []chartBar
}

// chartBar is one period's pair of bars and its label.
type chartBar struct {
	X, W, GrossY, GrossH, CommissionY, CommissionH int
	Label, Title                                   string
}

// Chart geometry: bars in a plot of chartHeight, with room for labels.
const (
	chartWidth  = 720
	chartHeight = 180
	chartSlot   = chartWidth / settlement.Periods
)

// newChart draws history (newest first) as bars, or returns nil when no
// period sold anything.
func newChart(history []settlement.PeriodSummary) *chart {
	sold := map[string]int64{}
	for _, h := range history {
		for _, t := range h.Totals {
			sold[t.Currency] += t.GrossCents
		}
	}
	c := &chart{Currency: "USD", Width: chartWidth, Height: chartHeight}
	for cur, cents := range sold {
		if cents > sold[c.Currency] || (cents == sold[c.Currency] && cur < c.Currency) {
			c.Currency = cur
		}
	}
	totals := make([]settlement.Total, len(history))
	var top int64
	for i, h := range history {
		if j := slices.IndexFunc(h.Totals, func(t settlement.Total) bool { return t.Currency == c.Currency }); j >= 0 {
			totals[i] = h.Totals[j]
		}
		top = max(top, totals[i].GrossCents)
	}
	if top == 0 {
		return nil // nothing sold: no bars to draw
	}
	c.Max = page.Money(c.Currency, top)
	height := func(cents int64) int { return int(max(0, cents) * chartHeight / top) }
	for i := len(history) - 1; i >= 0; i-- {
		t, slot := totals[i], len(history)-1-i
		b := chartBar{X: slot*chartSlot + 6, W: chartSlot - 12, GrossH: height(t.GrossCents), CommissionH: height(t.CommissionCents),
			Label: history[i].Start.Format("01-02"),
			Title: fmt.Sprintf("%s: sales %s, commission %s", history[i].Start.Format(time.DateOnly),
				page.Money(c.Currency, t.GrossCents), page.Money(c.Currency, t.CommissionCents))}
		b.GrossY, b.CommissionY = chartHeight-b.GrossH, chartHeight-b.CommissionH
		c.Bars = append(c.Bars, b)
	}
	return c
}
