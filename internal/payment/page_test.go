package payment

import (
	"context"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

var _ Redirector = (*pages)(nil)

// pages is a processor on whose pages buyers pay, answering Check with
// the outcome the test set for each page.
type pages struct {
	outcome map[string]string // page → kind ("" open)
}

func (*pages) Name() string                                                 { return "pages" }
func (*pages) TestMode() bool                                               { return true }
func (*pages) Refund(context.Context, Refund) (string, error)               { return "re_1", nil }
func (*pages) Lookup(context.Context, models.Payment) (string, bool, error) { return "", false, nil }
func (*pages) Redirect(context.Context, Redirect) (Redirection, error)      { return Redirection{}, nil }
func (*pages) ParseEvent([]byte, string) (Event, error)                     { return Event{}, ErrBadSignature }
func (*pages) Processor() Processor                                         { return Processor{Name: "Pages", PageOrigin: "https://pay.test"} }
func (p *pages) Check(_ context.Context, ref string) (Event, error) {
	return Event{Kind: p.outcome[ref], Ref: ref, ChargeID: "pi_" + ref, AmountCents: 900, Currency: "USD"}, nil
}

// A payment made on a processor's page whose notice is late is settled by
// asking the processor: a page paid or expired is acted on as its notice
// would be (a kept event and its task, once however often asked), and one
// still open is left pending, touched so that others are asked first.
func TestReconcileAsksAboutPagesWhoseNoticeIsLate(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	pr := &pages{outcome: map[string]string{"cs_paid": EventPaid, "cs_gone": EventExpired, "cs_open": ""}}
	bk.b.providers = map[string]Provider{models.EnvLive: pr}
	made := map[string]models.Payment{}
	for _, ref := range []string{"cs_paid", "cs_gone", "cs_open"} {
		err := bk.db.Transaction(func(tx *gorm.DB) error {
			p, err := Attempt(tx, NewAttempt{Provider: "pages", SessionID: "sess_" + ref, PartnerID: "prt_a", Environment: models.EnvLive,
				Domain: ref + ".com", AmountCents: 900, Currency: "USD"}, bk.now)
			if err == nil {
				_, err = Redirected(tx, p.ID, Redirection{Ref: ref, URL: "https://pay.test/" + ref, ExpiresAt: bk.now.Add(PageTTL)}, bk.now)
			}
			made[ref] = p
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	bk.now = bk.now.Add(PendingAfter + time.Second)
	for range 2 {
		if _, err := bk.b.Reconcile(context.Background(), 10); err != nil {
			t.Fatal(err)
		}
	}
	var kept []models.PaymentEvent
	bk.db.Order("id").Find(&kept)
	if len(kept) != 2 || kept[0].ID != "pages:check-expired-cs_gone" || kept[0].PaymentID != made["cs_gone"].ID ||
		kept[1].ID != "pages:check-paid-cs_paid" || kept[1].Kind != EventPaid {
		t.Fatalf("kept events = %+v; want one for the paid page and one for the expired, once each", kept)
	}
	var queued int64
	bk.db.Model(&models.OutboxEntry{}).Where("task_type = ?", tasks.TypePaymentEvent).Count(&queued)
	if queued != 2 {
		t.Errorf("%d payment:event tasks queued, want 2", queued)
	}
	if open := bk.payment(t, made["cs_open"].ID); open.Status != models.PaymentPending || !open.UpdatedAt.Equal(bk.now) {
		t.Errorf("the open page's payment = %s touched %v; want pending, touched now (%v)", open.Status, open.UpdatedAt, bk.now)
	}
}

// A page's closing time is set once, by the first of callers racing, and
// changed only by a caller naming the time it replaces (the one refused):
// a caller naming another (another tab changed it first) gets the time
// now stored. The time named matches however its zone writes it.
func TestPageExpiryIsSetOnceAndChangedOnlyFromTheTimeRefused(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	p, err := bk.attempt(t, "sess_page", 900)
	if err != nil {
		t.Fatal(err)
	}
	first := bk.now.Add(31 * time.Minute)
	got := make([]time.Time, 6)
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = PageExpiry(bk.db, p.ID, nil, first.Add(time.Duration(i)*time.Second)) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || !got[i].Equal(got[0]) {
			t.Fatalf("caller %d set %v, %v; caller 0 %v: want one time for all", i, got[i], errs[i], got[0])
		}
	}
	set := got[0]
	stale := set.Add(-time.Hour)
	if at, err := PageExpiry(bk.db, p.ID, &stale, set.Add(time.Hour)); err != nil || !at.Equal(set) {
		t.Errorf("replacing a time not stored = %v, %v; want %v, unchanged", at, err, set)
	}
	kolkata := set.In(time.FixedZone("IST", 5*3600+1800))
	later := set.Add(10 * time.Minute)
	if at, err := PageExpiry(bk.db, p.ID, &kolkata, later); err != nil || !at.Equal(later) {
		t.Errorf("replacing the stored time, named in another zone = %v, %v; want %v", at, err, later)
	}
}

// Tabs whose requests the processor answered with two pages (a retry
// refused as too near while another tab's was being made) send their
// buyers to the one page recorded first, the one whose notices count.
func TestRedirectedKeepsThePageRecordedFirst(t *testing.T) {
	t.Parallel()
	bk := newBooks(t)
	p, err := bk.attempt(t, "sess_pages", 900)
	if err != nil {
		t.Fatal(err)
	}
	first := Redirection{Ref: "cs_1", URL: "https://pay.test/cs_1", ExpiresAt: bk.now.Add(31 * time.Minute)}
	second := Redirection{Ref: "cs_2", URL: "https://pay.test/cs_2", ExpiresAt: bk.now.Add(33 * time.Minute)}
	for _, r := range []Redirection{first, second, first} {
		got, err := Redirected(bk.db, p.ID, r, bk.now)
		if err != nil || got.Ref != first.Ref || got.URL != first.URL || !got.ExpiresAt.Equal(first.ExpiresAt) {
			t.Errorf("recording %s = %+v, %v; want the first, %+v", r.Ref, got, err, first)
		}
	}
}
