package brokerage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/pagecursor/pagecursortest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// The case lists' pages read their own rows, in the order of an index of
// their own, deep in the list as at its start: every case (ops), the
// cases of a status and a partner's. Walking a list gives each case once.
func TestCasePagesReadTheirOwnRows(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	s := New(db, nil, nil, nil, Options{SecretKey: testSecretKey}, time.Now)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := make([]models.BrokerageCase, 20_000)
	for i := range cases {
		cases[i] = models.BrokerageCase{ID: fmt.Sprintf("brk_%05d", i), PartnerID: fmt.Sprintf("prt_%d", i%100), Environment: models.EnvSandbox,
			Domain: fmt.Sprintf("name-%d.com", i), Tier: "standard", BuyerEmail: "buyer@example.com", BudgetCents: 100_000, Currency: "USD",
			Status: models.CaseClosedNoDeal, CreatedAt: start.Add(time.Duration(i/2) * time.Second), UpdatedAt: start}
		if i%50 == 7 {
			cases[i].Status = models.CaseNegotiating
		}
	}
	if err := db.CreateInBatches(cases, 500).Error; err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range []Filter{{}, {Status: models.CaseNegotiating}, {PartnerID: "prt_7", Environment: models.EnvSandbox}} {
		want := 0
		for _, c := range cases {
			if (f.Status == "" || c.Status == f.Status) && (f.PartnerID == "" || c.PartnerID == f.PartnerID) {
				want++
			}
		}
		page, cursors := pagecursortest.Walk(t, func(cursor string) ([]View, string, error) {
			f.Limit, f.Cursor = 25, cursor
			return s.List(ctx, f)
		})
		seen := map[string]bool{}
		for _, v := range page {
			if seen[v.CaseID] {
				t.Fatalf("%+v: case %s on two pages", f, v.CaseID)
			}
			seen[v.CaseID] = true
		}
		if len(seen) != want {
			t.Fatalf("%+v: walked %d cases, want %d", f, len(seen), want)
		}
		if !models.IsPostgres(db) {
			continue // the plan is Postgres's
		}
		if err := db.Exec("ANALYZE brokerage_cases").Error; err != nil {
			t.Fatal(err)
		}
		queries := modelstest.CaptureQueries(t, db, `FROM "brokerage_cases"`)
		f.Cursor = cursors[len(cursors)/2]
		if _, _, err := s.List(ctx, f); err != nil || len(queries()) != 1 {
			t.Fatalf("%v; %d queries of the cases, want 1", err, len(queries()))
		}
		index := map[string]string{"": "idx_brokerage_cases_created", models.CaseNegotiating: "idx_brokerage_cases_status_created", "prt_7": "idx_brokerage_partner"}[f.Status+f.PartnerID]
		modelstest.ReadsByIndex(t, db, queries()[0], index)
	}
}
