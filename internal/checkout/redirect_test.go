package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

var _ payment.Redirector = (*pageProcessor)(nil)

// pageProcessor is a processor on whose pages buyers pay, keeping its
// idempotency keys as Stripe does: a key sent again with the request it
// came with answers as it first did, and with another request is
// refused. A page closing less than payment.PageTTL after it is asked
// for is refused, and the refusal kept under its key (Stripe may not
// keep it; this is the harder case). What goes wrong on the way: a
// request that never arrives (drop), or a page made and its answer lost
// (lose).
type pageProcessor struct {
	now        func() time.Time
	mu         sync.Mutex
	keys       map[string]keptAnswer            // by idempotency key
	pages      map[string][]payment.Redirection // made, by our payment's id
	drop, lose bool
}

type keptAnswer struct {
	asked payment.Redirect
	page  payment.Redirection
	err   error
}

func (p *pageProcessor) Redirect(_ context.Context, r payment.Redirect) (payment.Redirection, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drop {
		return payment.Redirection{}, errors.New("dial tcp: connection refused")
	}
	if k, ok := p.keys[r.IdempotencyKey]; ok {
		if !sameRequest(k.asked, r) {
			return payment.Redirection{}, errors.New("idempotency_error: keys for idempotent requests can only be used with the same parameters")
		}
		if k.err != nil {
			return payment.Redirection{}, k.err
		}
		return k.page, p.answer()
	}
	if r.ExpiresAt.Before(p.now().Add(payment.PageTTL)) {
		err := fmt.Errorf("%w: at least 30 minutes from creation", payment.ErrExpiryRefused)
		p.keys[r.IdempotencyKey] = keptAnswer{asked: r, err: err}
		return payment.Redirection{}, err
	}
	ref := fmt.Sprintf("cs_%s_%d", r.PaymentID, len(p.pages[r.PaymentID])+1)
	page := payment.Redirection{Ref: ref, URL: "https://pay.test/" + ref, ExpiresAt: r.ExpiresAt}
	p.keys[r.IdempotencyKey] = keptAnswer{asked: r, page: page}
	p.pages[r.PaymentID] = append(p.pages[r.PaymentID], page)
	return page, p.answer()
}

func (p *pageProcessor) answer() error {
	if p.lose {
		return errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
	}
	return nil
}

// sameRequest reports whether a and b are one request as the processor
// reads it: its times in whole seconds.
func sameRequest(a, b payment.Redirect) bool {
	if a.ExpiresAt.Unix() != b.ExpiresAt.Unix() {
		return false
	}
	a.ExpiresAt, b.ExpiresAt = time.Time{}, time.Time{}
	return a == b
}

// made returns the pages made for our payment id, and the closing time
// of each.
func (p *pageProcessor) made(id string) (pages []string, closes []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pg := range p.pages[id] {
		pages = append(pages, pg.URL)
		for _, k := range p.keys {
			if k.page == pg {
				closes = append(closes, k.asked.ExpiresAt)
			}
		}
	}
	return pages, closes
}

func (p *pageProcessor) set(drop, lose bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop, p.lose = drop, lose
}

func (*pageProcessor) Name() string   { return "pages" }
func (*pageProcessor) TestMode() bool { return true }
func (*pageProcessor) Refund(context.Context, payment.Refund) (string, error) {
	return "", errors.New("no refund expected")
}
func (*pageProcessor) Lookup(context.Context, models.Payment) (string, bool, error) {
	return "", false, nil
}
func (*pageProcessor) ParseEvent([]byte, string) (payment.Event, error) {
	return payment.Event{}, payment.ErrBadSignature
}
func (*pageProcessor) Check(_ context.Context, ref string) (payment.Event, error) {
	return payment.Event{Ref: ref}, nil
}
func (*pageProcessor) Processor() payment.Processor {
	return payment.Processor{Name: "Pages", PageOrigin: "https://pay.test"}
}

func newPageShop(t *testing.T) (*shop, *pageProcessor) {
	t.Helper()
	var pp *pageProcessor
	sh := newShopWith(t, func(sh *shop) payment.Provider {
		pp = &pageProcessor{now: func() time.Time { return sh.now }, keys: map[string]keptAnswer{}, pages: map[string][]payment.Redirection{}}
		return pp
	})
	return sh, pp
}

// payment returns the one payment of domain.
func (sh *shop) payment(t *testing.T, domain string) models.Payment {
	t.Helper()
	var p models.Payment
	if err := sh.db.Take(&p, "domain = ?", domain).Error; err != nil {
		t.Fatal(err)
	}
	return p
}

// A buyer sent back to try again after the processor's page could not be
// opened is sent to the page the first try made, in whatever later
// minute the retry comes (here minutes later, the reconciliation, which
// gives up a payment left alone for 30 s, not running) and whatever
// email it gives: every request under a key says what the first one
// did, as the processor's idempotency requires. When the first try made
// no page and its time is now too near, the page is asked for with a new
// time; when the page made has closed meanwhile, the buyer is told so,
// and the page recorded for the reconciliation.
func TestARetriedPageIsTheOneTheFirstTryMade(t *testing.T) {
	t.Parallel()
	sh, pp := newPageShop(t)
	ctx := context.Background()
	pay := func(token, email string) (string, error) {
		b := buyer(token, 9_000, "")
		b.Email = email
		return sh.s.Pay(ctx, b)
	}
	// failedFirstTry opens a checkout of domain, whose first payment
	// fails as drop and lose say, and returns its token.
	failedFirstTry := func(t *testing.T, domain string, drop, lose bool) string {
		sh.list(t, domain, 9_000)
		token := sh.open(t, domain)
		pp.set(drop, lose)
		_, err := pay(token, "ada@example.com")
		wantCode(t, "the first try", err, fault.Unavailable)
		pp.set(false, false)
		return token
	}

	t.Run("its answer lost", func(t *testing.T) {
		token := failedFirstTry(t, "lostpage.com", false, true)
		sh.now = sh.now.Add(5 * time.Minute)
		to, err := pay(token, "ada.lovelace@example.com") // a typo put right
		p := sh.payment(t, "lostpage.com")
		pages, _ := pp.made(p.ID)
		if err != nil || len(pages) != 1 || to != pages[0] || p.RedirectURL != to {
			t.Fatalf("the retry 5 minutes later = %q, %v, recorded %q; pages made %q: want the one the first try made", to, err, p.RedirectURL, pages)
		}
	})

	t.Run("never asked", func(t *testing.T) {
		token := failedFirstTry(t, "droppedpage.com", true, false)
		sh.now = sh.now.Add(5 * time.Minute)
		for range 2 { // the second is sent to the page the first made
			to, err := pay(token, "ada@example.com")
			p := sh.payment(t, "droppedpage.com")
			pages, closes := pp.made(p.ID)
			if err != nil || len(pages) != 1 || to != pages[0] || p.RedirectURL != to {
				t.Fatalf("the retry 5 minutes later = %q, %v, recorded %q; pages made %q: want one, made now", to, err, p.RedirectURL, pages)
			}
			if p.PageExpiresAt == nil || !closes[0].Equal(*p.PageExpiresAt) || closes[0].Before(sh.now.Add(payment.PageTTL)) {
				t.Errorf("the page closes at %v, and the payment says %v; want one time, at least %v from now", closes, p.PageExpiresAt, payment.PageTTL)
			}
		}
	})

	t.Run("closed before the retry", func(t *testing.T) {
		token := failedFirstTry(t, "latepage.com", false, true)
		sh.now = sh.now.Add(payment.PageTTL + 2*time.Minute)
		_, err := pay(token, "ada@example.com")
		if e := wantCode(t, "a retry after its page closed", err, fault.Conflict); !strings.Contains(e.Message, "has closed") {
			t.Errorf("the buyer was told %q", e.Message)
		}
		p := sh.payment(t, "latepage.com")
		if pages, _ := pp.made(p.ID); len(pages) != 1 || p.RedirectURL != pages[0] {
			t.Errorf("the payment records page %q; pages made %q: want the closed one kept for the reconciliation, no other", p.RedirectURL, pages)
		}
	})

	t.Run("two tabs at once", func(t *testing.T) {
		sh.list(t, "twotabs.com", 9_000)
		token := sh.open(t, "twotabs.com")
		tos := make([]string, 4)
		errs := make([]error, len(tos))
		var wg sync.WaitGroup
		for i := range tos {
			wg.Go(func() { tos[i], errs[i] = pay(token, "ada@example.com") })
		}
		wg.Wait()
		pages, _ := pp.made(sh.payment(t, "twotabs.com").ID)
		for i := range tos {
			if errs[i] != nil || len(pages) != 1 || tos[i] != pages[0] {
				t.Errorf("tab %d went to %q, %v; pages made %q: want the one page", i, tos[i], errs[i], pages)
			}
		}
	})
}
