package payment

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

func testCard(number string) Card {
	return Card{Number: number, ExpMonth: 12, ExpYear: 2030, CVC: "123", Name: "Ada"}
}

func TestSandboxTestCards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := modelstest.NewDB(t)
	s := NewSandbox(db, SandboxOptions{})
	charge := func(number, key string) (string, error) {
		return s.Charge(ctx, Charge{AmountCents: 120_000, Currency: "USD", Card: testCard(number), IdempotencyKey: key, Description: "x.com"})
	}
	id, err := charge(TestCardPays, "pay_1")
	if err != nil || !strings.HasPrefix(id, "ch_test_") {
		t.Fatalf("4242… = %q, %v; want a charge", id, err)
	}
	if again, err := charge(TestCardPays, "pay_1"); err != nil || again != id {
		t.Errorf("the same key again = %q, %v; want the first charge %q", again, err, id)
	}
	// The buyer's other tab, under the same key with another card: the
	// first call's charge, nothing taken and nothing declined.
	for _, number := range []string{TestCardDeclined, "4242424242424241"} {
		if again, err := charge(number, "pay_1"); err != nil || again != id {
			t.Errorf("the same key with %s… = %q, %v; want the first charge %q", number[:4], again, err, id)
		}
	}
	if other, _ := charge(TestCardPays, "pay_2"); other == id {
		t.Errorf("another key gave the same charge %q", other)
	}
	for _, number := range []string{TestCardDeclined, "4111111111111111"} {
		if _, err := charge(number, "pay_3"); !isCode(err, fault.CardDeclined) {
			t.Errorf("%s… = %v, want card_declined", number[:4], err)
		}
	}
	if _, err := charge("4242424242424241", "pay_4"); !isCode(err, fault.Validation) {
		t.Errorf("a number failing Luhn = %v, want a validation error", err)
	}
	if _, err := s.Charge(ctx, Charge{AmountCents: 100, Currency: "USD", Card: testCard(TestCardPays)}); err == nil || isCode(err, fault.CardDeclined) {
		t.Errorf("a charge without an idempotency key = %v, want a plain error (the caller's bug)", err)
	}
	if _, err := s.Charge(ctx, Charge{AmountCents: 99, Currency: "USD", Card: testCard(TestCardPays), IdempotencyKey: "pay_1"}); err == nil {
		t.Error("a key used again for another amount charged")
	}
	var kept []models.SandboxCharge
	db.Order("idempotency_key").Find(&kept)
	if len(kept) != 2 || kept[0].ID != id || kept[0].AmountCents != 120_000 || kept[0].CardLast4 != "4242" || kept[0].Description != "x.com" {
		t.Errorf("the sandbox's charges = %+v, want the two paid ones", kept)
	}
	if found, ok, err := s.Lookup(ctx, models.Payment{IdempotencyKey: "pay_1"}); err != nil || !ok || found != id {
		t.Errorf("Lookup(pay_1) = %q %v %v, want %q", found, ok, err, id)
	}
	if _, ok, err := s.Lookup(ctx, models.Payment{IdempotencyKey: "pay_3"}); err != nil || ok {
		t.Errorf("Lookup of a declined key = %v %v, want not found", ok, err)
	}
}

func isCode(err error, code fault.Code) bool {
	e, ok := fault.As(err)
	return ok && e.Code == code
}

// A lost answer takes the charge and says nothing of it: Lookup finds it,
// and the same key again answers with it.
func TestSandboxLostAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := modelstest.NewDB(t)
	lossy := NewSandbox(db, SandboxOptions{LostAnswers: 1})
	_, err := lossy.Charge(ctx, Charge{AmountCents: 500, Currency: "USD", Card: testCard(TestCardPays), IdempotencyKey: "pay_lost"})
	if !errors.Is(err, ErrLostAnswer) {
		t.Fatalf("charge with every answer lost = %v", err)
	}
	id, ok, err := lossy.Lookup(ctx, models.Payment{IdempotencyKey: "pay_lost"})
	if err != nil || !ok {
		t.Fatalf("Lookup after a lost answer = %v %v", ok, err)
	}
	again, err := NewSandbox(db, SandboxOptions{}).Charge(ctx, Charge{AmountCents: 500, Currency: "USD", Card: testCard(TestCardPays), IdempotencyKey: "pay_lost"})
	if err != nil || again != id {
		t.Errorf("the key again = %q %v, want the lost charge %q", again, err, id)
	}
}

// The sandbox refunds its own charges, once per idempotency key, never
// more than was charged, and nothing else.
func TestSandboxRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := modelstest.NewDB(t)
	s := NewSandbox(db, SandboxOptions{})
	ch, err := s.Charge(ctx, Charge{AmountCents: 1_000, Currency: "USD", Card: testCard(TestCardPays), IdempotencyKey: "pay_r"})
	if err != nil {
		t.Fatal(err)
	}
	r := Refund{ChargeID: ch, AmountCents: 600, Currency: "USD", IdempotencyKey: "rfd_1"}
	a, err := s.Refund(ctx, r)
	b, err2 := s.Refund(ctx, r)
	if err != nil || err2 != nil || a != b || !strings.HasPrefix(a, "re_test_") {
		t.Errorf("two refunds of one key = %q %v, %q %v; want one id", a, err, b, err2)
	}
	if _, err := s.Refund(ctx, Refund{ChargeID: ch, AmountCents: 401, Currency: "USD", IdempotencyKey: "rfd_2"}); err == nil {
		t.Error("a refund beyond the charge was made")
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs { // four refunds of 400 at once: one fits
		wg.Go(func() {
			_, errs[i] = s.Refund(ctx, Refund{ChargeID: ch, AmountCents: 400, Currency: "USD", IdempotencyKey: "rfd_par" + string(rune('a'+i))})
		})
	}
	wg.Wait()
	var made int
	for _, err := range errs {
		if err == nil {
			made++
		}
	}
	var c models.SandboxCharge
	db.Take(&c, "id = ?", ch)
	if made != 1 || c.RefundedCents != 1_000 {
		t.Errorf("of four refunds of 400 at once %d were made; the charge has %d of 1000 refunded", made, c.RefundedCents)
	}
	for _, bad := range []Refund{
		{ChargeID: "ch_live_9", AmountCents: 5, Currency: "USD", IdempotencyKey: "k"},
		{ChargeID: "ch_test_nosuch", AmountCents: 5, Currency: "USD", IdempotencyKey: "k2"},
		{ChargeID: ch, AmountCents: 0, Currency: "USD", IdempotencyKey: "k3"},
		{ChargeID: ch, AmountCents: 5, Currency: "USD"},
	} {
		if _, err := s.Refund(ctx, bad); err == nil {
			t.Errorf("refund %+v: no error", bad)
		}
	}
}
