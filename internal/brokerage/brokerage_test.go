package brokerage

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/availability"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/inventory"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/ledger/ledgertest"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payout"
	"github.com/domaind/domaind/internal/period"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/internal/registry/sandbox"
	"github.com/domaind/domaind/internal/siteprobe"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

var testSecretKey = []byte("brokerage-test-secret-key-0123456789")

// day is the day the tests work in.
var day = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

type world struct {
	db  *gorm.DB
	s   *Service
	now time.Time
}

// newWorld is a brokerage on its own database and Redis, with a sandbox
// registry that sells .com (registered: the names of register), and
// partners prt_a (15 % commission) and prt_b (10 %).
func newWorld(t *testing.T, register ...string) *world {
	t.Helper()
	db := modelstest.NewDB(t)
	ledgertest.CheckAtEnd(t, db)
	r := platformtest.NewRedis(t)
	ob := outbox.New(db, r.Client, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { ob.Close() })
	w := &world{db: db, now: day.Add(9 * time.Hour)}
	clock := func() time.Time { return w.now }
	price := int64(1_000)
	w.create(t, &models.SandboxTLD{Name: "com", RegisterCents: &price})
	for _, name := range register {
		w.create(t, &models.SandboxName{Name: name, TLD: "com", State: models.SandboxRegistered})
	}
	for id, bps := range map[string]int{"prt_a": 1500, "prt_b": 1000} {
		w.create(t, &models.Partner{ID: id, Name: id, ContactEmail: id + "@example.com", Status: "approved", CommissionBPS: bps, CreatedAt: w.now})
	}
	checker := availability.New(sandbox.New(db, 0), r.Client, 5*time.Second)
	inv := inventory.New(db, []byte("test-secret-key-0123456789abcdef"), clock)
	t.Cleanup(inv.Close)
	w.s = New(db, ob, checker, inv, Options{BaseURL: "http://api.test", SecretKey: testSecretKey}, clock)
	return w
}

func (w *world) create(t *testing.T, row any) {
	t.Helper()
	if err := w.db.Create(row).Error; err != nil {
		t.Fatal(err)
	}
}

// checked records a day-fresh probe of domain.
func (w *world) checked(t *testing.T, domain string, active bool) {
	t.Helper()
	r := siteprobe.Result{Domain: domain, Verdict: siteprobe.Verdict{Reason: siteprobe.ReasonParked}}
	if active {
		r.Reason = siteprobe.ReasonActive
	}
	if err := RecordProbe(context.Background(), w.db, r, w.now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
}

// probes is how many brokerage:probe tasks of domain the outbox holds.
func (w *world) probes(t *testing.T, domain string) int {
	t.Helper()
	var entries []models.OutboxEntry
	if err := w.db.Where("task_type = ?", tasks.TypeBrokerageProbe).Find(&entries).Error; err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if p, _ := tasks.Decode[tasks.BrokerageProbePayload](asynq.NewTask(e.TaskType, e.Payload)); p.Domain == domain {
			n++
		}
	}
	return n
}

func isCode(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}

func TestEligibilityReasons(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "owned.com", "parked.com", "busy.com", "listed.com", "incase.com", "fresh.com")
	ctx := context.Background()
	w.checked(t, "parked.com", false)
	w.checked(t, "busy.com", true)
	w.checked(t, "incase.com", false)
	bin := int64(50_000)
	w.create(t, &models.SandboxListing{ID: models.NewID(), Domain: "listed.com", TLD: "com", BINCents: &bin, Currency: "USD", CreatedAt: w.now})
	if _, err := w.s.Open(ctx, "prt_b", models.EnvSandbox, NewCase{Domain: "incase.com", Tier: models.TierManaged, BuyerEmail: "ada@example.com", Budget: ptr(int64(100_000))}); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	tests := []struct {
		name, env, domain string
		want              Eligibility
	}{
		{"registered, parked", models.EnvSandbox, "parked.com", Eligibility{"parked.com", Eligible, &yes, []string{}}},
		{"an active site", models.EnvSandbox, "busy.com", Eligibility{"busy.com", Ineligible, &no, []string{ReasonActiveSite}}},
		{"not registered", models.EnvSandbox, "free.com", Eligibility{"free.com", Ineligible, &no, []string{ReasonNotRegistered}}},
		{"a TLD the registry does not know", models.EnvSandbox, "owned.org", Eligibility{"owned.org", Ineligible, &no, []string{ReasonRegistrationUnknown}}},
		{"listed for sale", models.EnvSandbox, "listed.com", Eligibility{"listed.com", Ineligible, &no, []string{ReasonListedForSale}}},
		{"listed in the other environment", models.EnvLive, "listed.com", Eligibility{"listed.com", Pending, nil, []string{ReasonSiteCheckPending}}},
		{"in an open case", models.EnvSandbox, "incase.com", Eligibility{"incase.com", Ineligible, &no, []string{ReasonInOpenCase}}},
		{"in a case of the other environment", models.EnvLive, "incase.com", Eligibility{"incase.com", Eligible, &yes, []string{}}},
		{"not looked at yet", models.EnvSandbox, "fresh.com", Eligibility{"fresh.com", Pending, nil, []string{ReasonSiteCheckPending}}},
		{"in upper case", models.EnvSandbox, "Parked.COM", Eligibility{"parked.com", Eligible, &yes, []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.s.Eligibility(ctx, tt.env, tt.domain)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Eligibility(%s, %s) (-want +got):\n%s", tt.env, tt.domain, diff)
			}
		})
	}
	for _, bad := range []string{"", "not a domain", "www.owned.com"} {
		if _, err := w.s.Eligibility(ctx, models.EnvSandbox, bad); !isField(err, "domain") {
			t.Errorf("Eligibility(%q) = %v, want validation_error of domain", bad, err)
		}
	}
}

func isField(err error, field string) bool {
	e, ok := fault.As(err)
	return ok && e.Code == fault.Validation && e.Field == field
}

// Concurrent asks about a site start one probe; a verdict older than a
// day, or a probe that never answered, is looked at again.
func TestSiteCheckStartsOneProbe(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "owned.com")
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if e, err := w.s.Eligibility(ctx, models.EnvLive, "owned.com"); err != nil || e.Status != Pending {
				t.Errorf("Eligibility = %+v, %v; want pending", e, err)
			}
		})
	}
	wg.Wait()
	if n := w.probes(t, "owned.com"); n != 1 {
		t.Fatalf("%d probes after five asks, want 1", n)
	}
	w.now = w.now.Add(ProbeGrace + time.Minute) // the probe was lost
	if e, _ := w.s.Eligibility(ctx, models.EnvLive, "owned.com"); e.Status != Pending || w.probes(t, "owned.com") != 2 {
		t.Errorf("after the grace: %+v and %d probes, want pending and a second probe", e, w.probes(t, "owned.com"))
	}
	if err := RecordProbe(ctx, w.db, siteprobe.Result{Domain: "owned.com", Verdict: siteprobe.Verdict{Reason: siteprobe.ReasonActive}}, w.now); err != nil {
		t.Fatal(err)
	}
	if e, _ := w.s.Eligibility(ctx, models.EnvLive, "owned.com"); e.Status != Ineligible || !slices.Equal(e.Reasons, []string{ReasonActiveSite}) {
		t.Errorf("after the probe: %+v, want ineligible, active_site", e)
	}
	w.now = w.now.Add(SiteCheckTTL + time.Second)
	if e, _ := w.s.Eligibility(ctx, models.EnvLive, "owned.com"); e.Status != Pending || w.probes(t, "owned.com") != 3 {
		t.Errorf("a day later: %+v and %d probes, want pending and a third probe", e, w.probes(t, "owned.com"))
	}
}

func TestOpenCase(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "owned.com", "busy.com")
	ctx := context.Background()
	w.checked(t, "owned.com", false)
	w.checked(t, "busy.com", true)
	good := NewCase{Domain: "owned.com", Tier: models.TierSelfServe, BuyerEmail: "ada@example.com", Budget: ptr(int64(250_000))}
	for _, tt := range []struct {
		field string
		edit  func(*NewCase)
	}{
		{"domain", func(c *NewCase) { c.Domain = "" }},
		{"domain", func(c *NewCase) { c.Domain = "-bad-.com" }},
		{"tier", func(c *NewCase) { c.Tier = "premium" }},
		{"buyer_email", func(c *NewCase) { c.BuyerEmail = "ada" }},
		{"buyer_email", func(c *NewCase) { c.BuyerEmail = "Ada <ada@example.com>" }},
		{"budget", func(c *NewCase) { c.Budget = ptr(int64(0)) }},
		{"budget", func(c *NewCase) { c.Budget = ptr(int64(MaxBudgetCents + 1)) }},
		{"budget", func(c *NewCase) { c.Budget = nil }},
		{"budget_cents", func(c *NewCase) { c.Budget, c.BudgetCents = nil, ptr(int64(0)) }}, // the deprecated name
		{"budget_cents", func(c *NewCase) { c.BudgetCents = ptr(int64(1)) }},                // both, differing
	} {
		in := good
		tt.edit(&in)
		if _, err := w.s.Open(ctx, "prt_a", models.EnvLive, in); !isField(err, tt.field) {
			t.Errorf("Open(%+v) = %v, want validation_error of %s", in, err, tt.field)
		}
	}
	busy := good
	busy.Domain = "busy.com"
	if _, err := w.s.Open(ctx, "prt_a", models.EnvLive, busy); !isCode(err, fault.Conflict) || !strings.Contains(err.Error(), ReasonActiveSite) {
		t.Errorf("Open(busy.com) = %v, want a conflict naming active_site", err)
	}

	v, err := w.s.Open(ctx, "prt_a", models.EnvLive, good)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != models.CaseOpen || v.Domain != "owned.com" || v.PartnerID != "prt_a" || v.Deal != nil || len(v.Timeline) != 1 ||
		v.Timeline[0].Actor != ActorPartner || v.Timeline[0].Status != models.CaseOpen {
		t.Errorf("opened %+v", v)
	}
	if _, err := w.s.Open(ctx, "prt_b", models.EnvLive, good); !isCode(err, fault.Conflict) || !strings.Contains(err.Error(), ReasonInOpenCase) {
		t.Errorf("a second case = %v, want a conflict naming in_open_case", err)
	}

	u, err := url.Parse(v.ProgressURL)
	if err != nil || u.Host != "api.test" || u.Path != ProgressPath {
		t.Fatalf("progress_url %q", v.ProgressURL)
	}
	token := u.Query().Get("t")
	if p, err := w.s.Progress(ctx, token); err != nil || p.CaseID != v.CaseID || len(p.Timeline) != 1 {
		t.Errorf("Progress = %+v, %v", p, err)
	}
	tampered := "bp1." + token[4:len(token)-2] + "AA"
	if tampered == token { // one signature in a thousand ends so
		tampered = "bp1." + token[4:len(token)-2] + "BA"
	}
	for _, bad := range []string{"", token + "x", tampered, v.CaseID} {
		if _, err := w.s.Progress(ctx, bad); !isCode(err, fault.NotFound) {
			t.Errorf("Progress(%q) = %v, want not_found", bad, err)
		}
	}

	if got, err := w.s.Get(ctx, "prt_a", models.EnvLive, v.CaseID); err != nil || got.CaseID != v.CaseID {
		t.Errorf("Get = %+v, %v", got, err)
	}
	for _, who := range [][2]string{{"prt_b", models.EnvLive}, {"prt_a", models.EnvSandbox}} {
		if _, err := w.s.Get(ctx, who[0], who[1], v.CaseID); !isCode(err, fault.NotFound) {
			t.Errorf("Get as %v = %v, want not_found", who, err)
		}
	}
	list, next, err := w.s.List(ctx, Filter{PartnerID: "prt_a", Environment: models.EnvLive})
	if err != nil || next != "" || len(list) != 1 || list[0].CaseID != v.CaseID || list[0].Timeline != nil {
		t.Errorf("List = %+v, %q, %v", list, next, err)
	}
	if list, _, err := w.s.List(ctx, Filter{PartnerID: "prt_b", Environment: models.EnvLive}); err != nil || len(list) != 0 {
		t.Errorf("prt_b sees %+v, %v", list, err)
	}
	if _, _, err := w.s.List(ctx, Filter{Status: "won"}); !isField(err, "status") {
		t.Errorf("List(status won) = %v, want validation_error of status", err)
	}
}

// inStatus writes a case of prt_a in status, as if moved there.
func (w *world) inStatus(t *testing.T, domain, tier, status string) string {
	t.Helper()
	c := models.BrokerageCase{ID: "bc_" + models.NewID()[:12], PartnerID: "prt_a", Environment: models.EnvLive, Domain: domain, Tier: tier,
		BuyerEmail: "ada@example.com", BudgetCents: 100_000, Currency: Currency, Status: status, CreatedAt: w.now, UpdatedAt: w.now}
	if status == models.CaseClosedDeal || status == models.CaseClosedNoDeal {
		c.ClosedAt = &w.now
	}
	w.create(t, &c)
	return c.ID
}

func TestEveryMove(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	in := MoveInput{AmountCents: 90_000, PriceCents: 95_000}
	// The legal moves, written out here (not read from Moves): every other
	// status × action is refused, and a closed case moves no more.
	legalMoves := []struct {
		from   string
		action Action
		to     string
	}{
		{models.CaseOpen, ContactOwner, models.CaseContactingOwner},
		{models.CaseOpen, CloseNoDeal, models.CaseClosedNoDeal},
		{models.CaseContactingOwner, RecordOffer, models.CaseNegotiating},
		{models.CaseContactingOwner, CloseNoDeal, models.CaseClosedNoDeal},
		{models.CaseNegotiating, RecordOffer, models.CaseNegotiating},
		{models.CaseNegotiating, CloseDeal, models.CaseClosedDeal},
		{models.CaseNegotiating, CloseNoDeal, models.CaseClosedNoDeal},
	}
	for i, status := range Statuses {
		for _, action := range AllActions {
			id := w.inStatus(t, "case"+string(rune('a'+i))+string(action)+".com", models.TierManaged, status)
			v, err := w.s.Move(ctx, id, action, in)
			var want string
			for _, m := range legalMoves {
				if m.from == status && m.action == action {
					want = m.to
				}
			}
			legal := want != ""
			switch {
			case legal && (err != nil || v.Status != want):
				t.Errorf("%s from %s = %s, %v; want %s", action, status, v.Status, err, want)
			case legal && (len(v.Timeline) != 1 || v.Timeline[0].Status != want || v.Timeline[0].Actor != ActorOps):
				t.Errorf("%s from %s: timeline %+v", action, status, v.Timeline)
			case !legal && (!isCode(err, fault.Conflict) || !strings.Contains(err.Error(), "is "+status+":")):
				t.Errorf("%s from %s = %v; want a conflict naming the status", action, status, err)
			}
		}
	}
	if got := Actions(models.CaseNegotiating); !slices.Equal(got, []Action{RecordOffer, CloseDeal, CloseNoDeal}) {
		t.Errorf("Actions(negotiating) = %v", got)
	}
	if _, err := w.s.Move(ctx, "bc_nothing", ContactOwner, MoveInput{}); !isCode(err, fault.NotFound) {
		t.Errorf("an unknown case = %v, want not_found", err)
	}
	id := w.inStatus(t, "inputs.com", models.TierManaged, models.CaseNegotiating)
	for _, tt := range []struct {
		action Action
		in     MoveInput
		field  string
	}{
		{RecordOffer, MoveInput{}, "amount_cents"},
		{CloseDeal, MoveInput{PriceCents: -1}, "price_cents"},
		{RecordOffer, MoveInput{AmountCents: 1, Note: string(make([]byte, 501))}, "note"},
		{CloseNoDeal, MoveInput{Reason: string(make([]byte, 501))}, "reason"},
	} {
		if _, err := w.s.Move(ctx, id, tt.action, tt.in); !isField(err, tt.field) {
			t.Errorf("%s %+v = %v, want validation_error of %s", tt.action, tt.in, err, tt.field)
		}
	}
}

// TestWorkThatCannotAnswerIsNotDone: a case opened or moved whose answer
// cannot be read (the database failing after its writes) is not opened or
// moved, so that the retry its error calls for is the only one: it opens
// the case, records the offer once, and closes the deal with one posting.
func TestWorkThatCannotAnswerIsNotDone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "owned.com")
	ctx := context.Background()
	w.checked(t, "owned.com", false)
	down := errors.New("the database went away")
	count := func(model any, where string, args ...any) (n int64) {
		w.db.Model(model).Where(where, args...).Count(&n)
		return n
	}
	failing := func(what string, do func() error) {
		t.Helper()
		restore := modelstest.FailReads(t, w.db, "brokerage_steps", down)
		defer restore()
		if err := do(); !errors.Is(err, down) {
			t.Fatalf("%s with the timeline's read failing = %v, want its error", what, err)
		}
	}

	in := NewCase{Domain: "owned.com", Tier: models.TierManaged, BuyerEmail: "ada@example.com", Budget: ptr(int64(250_000))}
	failing("Open", func() error { _, err := w.s.Open(ctx, "prt_a", models.EnvLive, in); return err })
	if n := count(&models.BrokerageCase{}, "domain = ?", "owned.com"); n != 0 {
		t.Errorf("after the failed Open: %d cases of owned.com, want none", n)
	}
	v, err := w.s.Open(ctx, "prt_a", models.EnvLive, in)
	if err != nil {
		t.Fatalf("Open retried: %v", err)
	}

	id := w.inStatus(t, "deal.com", models.TierManaged, models.CaseNegotiating)
	offer := MoveInput{AmountCents: 90_000}
	failing("record-offer", func() error { _, err := w.s.Move(ctx, id, RecordOffer, offer); return err })
	if n := count(&models.BrokerageStep{}, "case_id = ?", id); n != 0 {
		t.Errorf("after the failed record-offer: %d steps, want none", n)
	}
	if v, err = w.s.Move(ctx, id, RecordOffer, offer); err != nil || len(v.Timeline) != 1 {
		t.Fatalf("record-offer retried = %d steps, %v; want the one offer", len(v.Timeline), err)
	}

	deal := MoveInput{PriceCents: 95_000}
	failing("close-deal", func() error { _, err := w.s.Move(ctx, id, CloseDeal, deal); return err })
	var c models.BrokerageCase
	w.db.Take(&c, "id = ?", id)
	if lines := count(&models.LedgerEntry{}, "case_id = ?", id); c.Status != models.CaseNegotiating || lines != 0 {
		t.Errorf("after the failed close-deal: case %s, %d ledger lines; want it negotiating, nothing posted", c.Status, lines)
	}
	if v, err = w.s.Move(ctx, id, CloseDeal, deal); err != nil || v.Status != models.CaseClosedDeal || len(v.Timeline) != 2 {
		t.Fatalf("close-deal retried = %s with %d steps, %v; want the deal closed", v.Status, len(v.Timeline), err)
	}
}

// A case's whole life: the moves' steps, and a deal's fee, commission,
// ledger lines, event and payout, to the cent.
func TestDealPostsFeeCommissionEventAndPayout(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "deal.com")
	ctx := context.Background()
	w.checked(t, "deal.com", false)
	v, err := w.s.Open(ctx, "prt_a", models.EnvLive, NewCase{Domain: "deal.com", Tier: models.TierManaged, BuyerEmail: "ada@example.com", Budget: ptr(int64(1_200_000))})
	if err != nil {
		t.Fatal(err)
	}
	moves := []struct {
		action Action
		in     MoveInput
	}{
		{ContactOwner, MoveInput{}},
		{RecordOffer, MoveInput{AmountCents: 800_000, Note: "first offer"}},
		{RecordOffer, MoveInput{AmountCents: 1_000_030}},
		{CloseDeal, MoveInput{PriceCents: 1_000_030}},
	}
	for _, m := range moves {
		w.now = w.now.Add(time.Hour)
		if v, err = w.s.Move(ctx, v.CaseID, m.action, m.in); err != nil {
			t.Fatalf("%s: %v", m.action, err)
		}
	}
	// 15 % of 10,000.30 is 1,500.045: 150,004 cents (half to even); the
	// partner's 15 % of that is 22,500.6: 22,501.
	want := &Deal{PriceCents: 1_000_030, FeeBPS: 1500, FeeCents: 150_004, CommissionBPS: 1500, CommissionCents: 22_501}
	if diff := cmp.Diff(want, v.Deal); diff != "" || v.Status != models.CaseClosedDeal || v.ClosedAt == nil {
		t.Errorf("deal (-want +got):\n%s; status %s", diff, v.Status)
	}
	var statuses []string
	for _, st := range v.Timeline {
		statuses = append(statuses, st.Status)
	}
	if want := []string{"open", "contacting_owner", "negotiating", "negotiating", "closed_deal"}; !slices.Equal(statuses, want) {
		t.Errorf("timeline %v, want %v", statuses, want)
	}
	if last := v.Timeline[4]; last.Event == nil || *last.Event != EventCaseCompleted || last.AmountCents == nil || *last.AmountCents != 1_000_030 {
		t.Errorf("the last step %+v", last)
	}

	var lines []models.LedgerEntry
	w.db.Where("case_id = ?", v.CaseID).Order("id").Find(&lines)
	got := map[string]int64{}
	for _, l := range lines {
		if l.Kind != ledger.KindBrokerage || l.PartnerID != "prt_a" || l.Environment != models.EnvLive || l.Currency != "USD" || l.OrderID != nil {
			t.Errorf("line %+v", l)
		}
		got[l.Account] += l.AmountCents
	}
	if diff := cmp.Diff(map[string]int64{ledger.Cash: 150_004, ledger.BrokerageFees: -150_004, ledger.Commission: 22_501, ledger.Payable: -22_501}, got); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}

	var events []models.Event
	w.db.Where("partner_id = ? AND type = ?", "prt_a", EventCaseCompleted).Find(&events)
	if len(events) != 1 {
		t.Fatalf("%d case_completed events, want 1", len(events))
	}
	var data struct {
		Case View `json:"case"`
	}
	if err := json.Unmarshal(events[0].Data, &data); err != nil || data.Case.CaseID != v.CaseID || data.Case.Deal == nil ||
		data.Case.Deal.PriceCents != 1_000_030 || data.Case.Status != models.CaseClosedDeal {
		t.Errorf("event data %s (%v)", events[0].Data, err)
	}
	if _, err := w.s.Move(ctx, v.CaseID, CloseNoDeal, MoveInput{}); !isCode(err, fault.Conflict) {
		t.Errorf("closing a closed case = %v, want conflict", err)
	}

	// A deal closed the next day is the next period's.
	later := w.inStatus(t, "later.com", models.TierSelfServe, models.CaseNegotiating)
	w.now = day.AddDate(0, 0, 1).Add(time.Hour)
	if _, err := w.s.Move(ctx, later, CloseDeal, MoveInput{PriceCents: 2_500_000}); err != nil {
		t.Fatal(err)
	}
	if err := payout.Open(w.db, period.Period{Start: day, End: day.AddDate(0, 0, 1)}, w.now); err != nil {
		t.Fatal(err)
	}
	var payouts []models.Payout
	w.db.Find(&payouts)
	if len(payouts) != 1 || payouts[0].PartnerID != "prt_a" || payouts[0].AmountCents != 22_501 || payouts[0].Environment != models.EnvLive {
		t.Errorf("payouts %+v, want prt_a's 22501 of the day", payouts)
	}
}

func ptr[T any](v T) *T { return &v }

// Ops' offers, notes and reasons are theirs unless shared: the partner's
// view and the buyer's progress page show an internal step as its status
// move alone, ops see it whole and marked internal, and a shared offer is
// seen by all three.
func TestNotesStayInternalUnlessShared(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "quiet.com")
	ctx := context.Background()
	w.checked(t, "quiet.com", false)
	v, err := w.s.Open(ctx, "prt_a", models.EnvLive, NewCase{Domain: "quiet.com", Tier: models.TierManaged, BuyerEmail: "ada@example.com", Budget: ptr(int64(1_200_000))})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		action Action
		in     MoveInput
	}{
		{ContactOwner, MoveInput{}},
		{RecordOffer, MoveInput{AmountCents: 1_500_000, Note: "owner's floor is 14k"}},
		{RecordOffer, MoveInput{AmountCents: 1_300_000, Note: "owner's counter", Share: true}},
		{CloseNoDeal, MoveInput{Reason: "buyer's ceiling is 12k"}},
	} {
		if _, err := w.s.Move(ctx, v.CaseID, m.action, m.in); err != nil {
			t.Fatalf("%s: %v", m.action, err)
		}
	}
	token, _ := url.Parse(v.ProgressURL)
	partner, err := w.s.Get(ctx, "prt_a", models.EnvLive, v.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := w.s.Progress(ctx, token.Query().Get("t"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := w.s.Ops(ctx, v.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	for who, view := range map[string]View{"partner": partner, "buyer": buyer} {
		if len(view.Timeline) != 5 {
			t.Fatalf("%s sees %d steps, want 5", who, len(view.Timeline))
		}
		for i, st := range view.Timeline {
			if st.Internal || strings.Contains(st.Note, "floor") || strings.Contains(st.Note, "ceiling") ||
				(st.AmountCents != nil && *st.AmountCents == 1_500_000) {
				t.Errorf("%s sees step %d %+v: an internal note or offer", who, i, st)
			}
		}
		if st := view.Timeline[3]; st.AmountCents == nil || *st.AmountCents != 1_300_000 || !strings.Contains(st.Note, "counter") {
			t.Errorf("%s sees the shared offer as %+v", who, st)
		}
		if view.Timeline[4].Status != models.CaseClosedNoDeal {
			t.Errorf("%s does not see the case closed: %+v", who, view.Timeline[4])
		}
	}
	internal := []bool{false, false, true, false, true}
	for i, st := range ops.Timeline {
		if st.Internal != internal[i] {
			t.Errorf("ops see step %d %+v internal %v, want %v", i, st, st.Internal, internal[i])
		}
	}
	if st := ops.Timeline[2]; st.AmountCents == nil || *st.AmountCents != 1_500_000 || !strings.Contains(st.Note, "floor") {
		t.Errorf("ops see the internal offer as %+v", st)
	}
}
