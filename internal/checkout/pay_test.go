package checkout

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/internal/platform/platformtest"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
	"github.com/domaind/domaind/tasks"
)

// shop is the hosted checkout of a fresh database selling through the
// sandbox processor, as the processor answers in processor.
type shop struct {
	s         *Service
	db        *gorm.DB
	processor *lossyProcessor
	book      *payment.Book
	now       time.Time
}

// lossyProcessor is the sandbox, and what goes wrong on the way: a lost answer
// after the charge, a seller's change of price while the card is
// charged, or an answer held back (slowAnswers: a charge taken is told on
// charged, and answered once the test closes gate).
type lossyProcessor struct {
	*payment.Sandbox
	db            *gorm.DB
	loseAnswers   atomic.Bool
	repriceTo     atomic.Int64
	slowAnswers   atomic.Bool
	charged, gate chan struct{}
}

func (p *lossyProcessor) Charge(ctx context.Context, ch payment.Charge) (string, error) {
	if cents := p.repriceTo.Load(); cents != 0 {
		p.db.Model(&models.SandboxListing{}).Where("domain = ?", ch.Description).Update("bin_cents", cents)
	}
	id, err := p.Sandbox.Charge(ctx, ch)
	if err == nil && p.loseAnswers.Load() {
		return "", payment.ErrLostAnswer
	}
	if err == nil && p.slowAnswers.CompareAndSwap(true, false) {
		p.charged <- struct{}{}
		<-p.gate
	}
	return id, err
}

func newShop(t *testing.T) *shop {
	t.Helper()
	return newShopWith(t, func(sh *shop) payment.Provider {
		sh.processor = &lossyProcessor{Sandbox: payment.NewSandbox(sh.db, payment.SandboxOptions{}), db: sh.db}
		return sh.processor
	})
}

// newShopWith is newShop selling through the processor that processor
// makes for it.
func newShopWith(t *testing.T, processor func(*shop) payment.Provider) *shop {
	t.Helper()
	db := modelstest.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ob := outbox.New(db, platformtest.NewRedis(t).Client, log)
	t.Cleanup(func() { ob.Close() })
	sh := &shop{db: db, now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return sh.now }
	key := []byte("test-secret-key-0123456789abcdef")
	providers := map[string]payment.Provider{models.EnvSandbox: processor(sh)}
	orders := order.New(db, ob, key, order.Options{}, clock)
	sh.s = New(db, orders, Options{BaseURL: "https://domaind.test", SecretKey: key, Providers: providers}, clock)
	sh.book = payment.NewBook(db, ob, providers, key, log, clock)
	if err := db.Create(&models.Partner{ID: "prt_a", Name: "Shop A", ContactEmail: "a@example.com", Status: "approved",
		CommissionBPS: 1500, CreatedAt: sh.now}).Error; err != nil {
		t.Fatal(err)
	}
	return sh
}

// list puts domain in the sandbox at cents.
func (sh *shop) list(t *testing.T, domain string, cents int64) {
	t.Helper()
	if err := sh.db.Create(&models.SandboxListing{ID: models.NewID(), Domain: domain, TLD: "com", BINCents: &cents, Currency: "USD",
		CreatedAt: sh.now}).Error; err != nil {
		t.Fatal(err)
	}
}

// open opens a checkout of domain and returns its link's token.
func (sh *shop) open(t *testing.T, domain string) string {
	t.Helper()
	s, err := sh.s.Create(context.Background(), "prt_a", models.EnvSandbox, NewSession{Domain: domain,
		ReturnURL: "https://shop.test/thanks", CancelURL: "https://shop.test/"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(s.CheckoutURL)
	return u.Query().Get("pt")
}

func buyer(token string, cents int64, card string) Payment {
	return Payment{Token: token, PriceCents: cents, Currency: "USD", CardNumber: card, Expiry: "12/30", CVC: "123",
		Name: "Ada Buyer", Email: "ada@example.com", Country: "NL"}
}

func (sh *shop) count(t *testing.T, model any, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := sh.db.Model(model).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func wantCode(t *testing.T, what string, err error, code fault.Code) *fault.Error {
	t.Helper()
	e, ok := fault.As(err)
	if !ok || e.Code != code {
		t.Fatalf("%s: err = %v, want %s", what, err, code)
	}
	return e
}

// Buyers of one name on separate checkouts pay at the same moment: one
// order, one charge, and every other buyer told the name went, uncharged.
// (Before the hold was the session's, each passed the checks and was
// charged, and all but one were left without an order.)
func TestBuyersRacingForOneNameAreChargedOnce(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	sh.list(t, "racedname.com", 40_000)
	const buyers = 8
	tokens := make([]string, buyers)
	for i := range tokens {
		tokens[i] = sh.open(t, "racedname.com")
	}
	errs := make([]error, buyers)
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() { _, errs[i] = sh.s.Pay(context.Background(), buyer(tokens[i], 40_000, payment.TestCardPays)) })
	}
	wg.Wait()
	paid := 0
	for _, err := range errs {
		if err == nil {
			paid++
			continue
		}
		if e := wantCode(t, "a buyer who lost the race", err, fault.Conflict); !strings.Contains(e.Message, "not charged") {
			t.Errorf("a losing buyer was told %q, want that the card was not charged", e.Message)
		}
	}
	charges := sh.count(t, &models.SandboxCharge{}, "1 = 1")
	orders := sh.count(t, &models.Order{}, "domain = ?", "racedname.com")
	if paid != 1 || charges != 1 || orders != 1 {
		t.Errorf("%d buyers paid, the processor took %d charges, %d orders; want one of each", paid, charges, orders)
	}
}

// Two tabs of one checkout: the first pays with the card that pays, and
// while its answer is on the way the second tries the declined card. The
// second shares the first's payment and idempotency key, so it is the
// same charge: the processor answers with it, and both tabs end at the
// one order. (Judging the second card declined the shared payment, and
// the first tab's charge, unable to make its order, was refunded with
// word that the name had been sold.)
func TestAnotherTabsDeclineLeavesThePaidChargeItsOrder(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	sh.list(t, "twotabs.com", 30_000)
	token := sh.open(t, "twotabs.com")
	sh.processor.charged, sh.processor.gate = make(chan struct{}, 1), make(chan struct{})
	sh.processor.slowAnswers.Store(true)

	first := make(chan error, 1)
	go func() {
		_, err := sh.s.Pay(context.Background(), buyer(token, 30_000, payment.TestCardPays))
		first <- err
	}()
	<-sh.processor.charged
	doneB, errB := sh.s.Pay(context.Background(), buyer(token, 30_000, payment.TestCardDeclined))
	close(sh.processor.gate)
	if errA := <-first; errA != nil || errB != nil {
		t.Fatalf("tab A (paid) = %v, tab B (declined card, same payment) = %v; want both at the order", errA, errB)
	}
	if !strings.HasPrefix(doneB, "https://shop.test/thanks") {
		t.Errorf("tab B goes to %q, want the return URL with the order", doneB)
	}
	orders := sh.count(t, &models.Order{}, "domain = ?", "twotabs.com")
	charges := sh.count(t, &models.SandboxCharge{}, "1 = 1")
	refunds := sh.count(t, &models.SandboxRefund{}, "1 = 1")
	failed := sh.count(t, &models.Payment{}, "status = ?", models.PaymentFailed)
	if orders != 1 || charges != 1 || refunds != 0 || failed != 0 {
		t.Errorf("%d orders, %d charges, %d refunds, %d failed payments; want one order of one charge, nothing refunded or failed",
			orders, charges, refunds, failed)
	}
}

// A charge whose answer was lost is not charged again when the buyer
// pays again: the same payment and key make the one order. One nobody
// comes back for is returned by the reconciliation.
func TestALostAnswerIsPaidOnceOrReturned(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	ctx := context.Background()
	sh.list(t, "lostanswer.com", 12_000)
	token := sh.open(t, "lostanswer.com")
	sh.processor.loseAnswers.Store(true)
	_, err := sh.s.Pay(ctx, buyer(token, 12_000, payment.TestCardPays))
	if e := wantCode(t, "a lost answer", err, fault.Unavailable); !strings.Contains(e.Message, "charged once") {
		t.Errorf("the buyer was told %q", e.Message)
	}
	sh.processor.loseAnswers.Store(false)
	to, err := sh.s.Pay(ctx, buyer(token, 12_000, payment.TestCardPays))
	if err != nil || !strings.Contains(to, "order_id=ord_") {
		t.Fatalf("paying again = %q, %v", to, err)
	}
	if charges, payments := sh.count(t, &models.SandboxCharge{}, "1 = 1"), sh.count(t, &models.Payment{}, "status = ?", models.PaymentSucceeded); charges != 1 || payments != 1 {
		t.Errorf("%d charges, %d succeeded payments; want one", charges, payments)
	}

	sh.list(t, "walkedaway.com", 15_000)
	away := sh.open(t, "walkedaway.com")
	sh.processor.loseAnswers.Store(true)
	if _, err := sh.s.Pay(ctx, buyer(away, 15_000, payment.TestCardPays)); err == nil {
		t.Fatal("a lost answer paid")
	}
	sh.now = sh.now.Add(payment.PendingAfter + time.Second)
	if n, err := sh.book.Reconcile(ctx, 10); err != nil || n != 1 {
		t.Fatalf("Reconcile = %d, %v", n, err)
	}
	var p models.Payment
	sh.db.Take(&p, "domain = ?", "walkedaway.com")
	if err := sh.book.Return(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	sh.db.Take(&p, "id = ?", p.ID)
	var c models.SandboxCharge
	sh.db.Take(&c, "id = ?", *p.ChargeID)
	if p.Status != models.PaymentRefunded || p.OrderID != nil || c.RefundedCents != 15_000 {
		t.Errorf("the abandoned charge: payment %+v, refunded %d at the processor", p, c.RefundedCents)
	}
}

// When the order cannot be recorded after the charge (the seller changed
// the price meanwhile), the buyer is told the card was charged and is
// being refunded, and the refund is queued: no charge without an order.
func TestAChargeThatCannotBecomeAnOrderIsRefunded(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	ctx := context.Background()
	sh.list(t, "repriced.com", 20_000)
	token := sh.open(t, "repriced.com")
	sh.processor.repriceTo.Store(25_000)
	_, err := sh.s.Pay(ctx, buyer(token, 20_000, payment.TestCardPays))
	if e := wantCode(t, "an order that could not be recorded", err, fault.Conflict); !strings.Contains(e.Message, "charged") || !strings.Contains(e.Message, "refunded") {
		t.Errorf("the buyer was told %q", e.Message)
	}
	var p models.Payment
	sh.db.Take(&p, "domain = ?", "repriced.com")
	if p.Status != models.PaymentSucceeded || p.OrderID != nil || p.ChargeID == nil {
		t.Errorf("the payment = %+v, want a charge without an order", p)
	}
	if n := sh.count(t, &models.OutboxEntry{}, "task_type = ?", tasks.TypePaymentReturn); n != 1 {
		t.Errorf("%d payment:return tasks, want 1", n)
	}
	if n := sh.count(t, &models.Order{}, "1 = 1"); n != 0 {
		t.Errorf("%d orders, want none", n)
	}
}

// A declined card is a failed payment and counts towards the session's
// limit; a card that then pays makes the order.
func TestADeclineIsAFailedPayment(t *testing.T) {
	t.Parallel()
	sh := newShop(t)
	ctx := context.Background()
	sh.list(t, "declined.com", 5_000)
	token := sh.open(t, "declined.com")
	_, err := sh.s.Pay(ctx, buyer(token, 5_000, payment.TestCardDeclined))
	wantCode(t, "a declined card", err, fault.CardDeclined)
	var cs models.CheckoutSession
	sh.db.Take(&cs, "domain = ?", "declined.com")
	if cs.Declines != 1 || sh.count(t, &models.Payment{}, "status = ? AND note LIKE ?", models.PaymentFailed, "%declined%") != 1 {
		t.Errorf("after a decline: %d declines, payments %d failed", cs.Declines, sh.count(t, &models.Payment{}, "status = ?", models.PaymentFailed))
	}
	if _, err := sh.s.Pay(ctx, buyer(token, 5_000, payment.TestCardPays)); err != nil {
		t.Fatalf("paying with a good card after a decline: %v", err)
	}
	if n := sh.count(t, &models.Payment{}, "status = ? AND order_id IS NOT NULL", models.PaymentSucceeded); n != 1 {
		t.Errorf("%d payments with an order, want 1", n)
	}
}
