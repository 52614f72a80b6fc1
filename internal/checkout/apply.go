package checkout

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// Apply acts on the processor's notice kept as eventID (payment.Book.
// Receive), once:
//   - paid: the payment's order is recorded as a card payment's is
//     (order.RecordHosted, with the buyer its form gave); when it cannot
//     be (the name was sold meanwhile, the price moved, the amount paid is
//     not the one asked), the whole charge goes back (order.Unrecorded);
//   - expired: the payment failed, and the name's hold ends;
//   - failed: the refusal is noted; the buyer may try another card;
//   - refunded: the payment counts what the processor says went back.
//
// A notice of a payment that is not ours (another integration's, on the
// same account) changes nothing. An error is for the task to retry; every
// step may run again.
func (s *Service) Apply(ctx context.Context, book *payment.Book, eventID string) error {
	ev, done, err := book.Event(ctx, eventID)
	if err != nil {
		return err
	}
	if done {
		tasks.FoundDone(ctx)
		return nil
	}
	var note string
	switch ev.Kind {
	case payment.EventPaid:
		note, err = s.paidOnPage(ctx, ev)
	case payment.EventExpired:
		note, err = s.expiredOnPage(ctx, ev)
	case payment.EventFailed:
		note, err = s.failedOnPage(ctx, ev)
	case payment.EventRefunded:
		note, err = s.refundedAtProcessor(ctx, ev)
	default:
		note = "not a notice acted on"
	}
	if err != nil {
		return err
	}
	return book.EventDone(ctx, eventID, note)
}

// errNotOurs is a notice naming no payment of ours.
var errNotOurs = errors.New("not a payment of this service")

// pagePayment is the payment ev names, when it is ours: made on the page
// ev is about.
func (s *Service) pagePayment(ctx context.Context, ev payment.Event) (models.Payment, error) {
	var p models.Payment
	err := s.db.WithContext(ctx).Take(&p, "id = ?", ev.PaymentID).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound) || err == nil && ev.Ref != "" && p.ProviderRef != ev.Ref:
		return p, errNotOurs
	case err != nil:
		return p, fmt.Errorf("find payment %s: %w", ev.PaymentID, err)
	}
	return p, nil
}

func (s *Service) paidOnPage(ctx context.Context, ev payment.Event) (string, error) {
	p, err := s.pagePayment(ctx, ev)
	if errors.Is(err, errNotOurs) {
		return "unknown checkout: nothing done", nil
	}
	if err != nil {
		return "", err
	}
	if p.OrderID != nil || p.ChargeID != nil {
		if p.ChargeID != nil && *p.ChargeID == ev.ChargeID {
			return "recorded before", nil
		}
		return "", fmt.Errorf("payment %s was settled with charge %v, and %s says it took %s: pay that back by hand", p.ID, p.ChargeID, p.Provider, ev.ChargeID)
	}
	hp, err := s.orders.PagePayment(ctx, p)
	if err != nil {
		return "", err
	}
	hp.ChargeID = ev.ChargeID
	if ev.AmountCents != p.AmountCents || ev.Currency != p.Currency {
		hp.PaidCents, hp.PaidCurrency = ev.AmountCents, ev.Currency
		why := fmt.Errorf("%d %s was paid for a price of %d %s", ev.AmountCents, ev.Currency, p.AmountCents, p.Currency)
		return "the amount paid is not the price: refunding it", s.orders.Unrecorded(ctx, hp, why)
	}
	v, err := s.orders.RecordHosted(ctx, hp)
	if _, coded := fault.As(err); coded {
		return "no order (" + models.ErrorText(err, 200) + "): refunding it", s.orders.Unrecorded(ctx, hp, err)
	}
	if err != nil {
		return "", err
	}
	return "order " + v.PublicID, nil
}

func (s *Service) expiredOnPage(ctx context.Context, ev payment.Event) (string, error) {
	p, err := s.pagePayment(ctx, ev)
	if errors.Is(err, errNotOurs) {
		return "unknown checkout: nothing done", nil
	}
	if err != nil || p.Status != models.PaymentPending {
		return "nothing pending", err
	}
	declined, err := s.orders.Abandoned(ctx, p, "the buyer left the processor's page without paying (it expired)")
	if err != nil || !declined {
		return "settled meanwhile: nothing done", err
	}
	return "payment failed; hold released", nil
}

func (s *Service) failedOnPage(ctx context.Context, ev payment.Event) (string, error) {
	p, err := s.pagePayment(ctx, ev)
	if errors.Is(err, errNotOurs) {
		return "unknown checkout: nothing done", nil
	}
	if err != nil {
		return "", err
	}
	return "noted", payment.Noted(s.db.WithContext(ctx), p.ID, "a card was refused on the processor's page: "+ev.Message, s.now().UTC())
}

func (s *Service) refundedAtProcessor(ctx context.Context, ev payment.Event) (string, error) {
	ours, err := payment.ChargeRefunded(s.db.WithContext(ctx), ev.ChargeID, ev.RefundedCents, s.now().UTC())
	if err != nil || !ours {
		return "unknown charge: nothing done", err
	}
	return fmt.Sprintf("%d cents refunded in all", ev.RefundedCents), nil
}
