package payment

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// ReturnsAwaitingOps is the condition, with ReturnStatuses as its one argument,
// of the payments whose return was given up (FailReturn) and that ops
// have neither paid back by hand (PaidBackByHand) nor refunded in the
// processor's dashboard (whose notice makes the payment refunded). Its
// partial index (idx_payments_return_given_up) holds just those.
const ReturnsAwaitingOps = "payments.return_given_up_at IS NOT NULL AND payments.paid_by_hand_at IS NULL AND payments.status IN ?"

// PaidBackByHand records that ops paid back by hand the charge of payment
// id, whose return was given up, with reference saying how: it leaves the
// payments awaiting ops and says so in its note. Recording it again with
// the same reference changes nothing; a payment whose return was not
// given up, or was refunded since, is a conflict.
func (b *Book) PaidBackByHand(ctx context.Context, id, reference string) (View, error) {
	reference = strings.TrimSpace(reference)
	if err := models.CheckReference(reference, "the buyer back"); err != nil {
		return View{}, err
	}
	var p models.Payment
	err := b.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := models.Found(models.ForUpdate(tx).Take(&p, "id = ?", id).Error, "payment "+id); err != nil {
			return err
		}
		switch {
		case p.PaidByHandAt != nil && p.PaidByHandReference == reference:
			return nil
		case p.PaidByHandAt != nil:
			return fault.New(fault.Conflict, "payment %s was already paid back by hand, with reference %q", id, p.PaidByHandReference)
		case p.ReturnGivenUpAt == nil:
			return fault.New(fault.Conflict, "payment %s has no return given up for ops: nothing to pay back by hand", id)
		case p.Status == models.PaymentRefunded:
			return fault.New(fault.Conflict, "payment %s was refunded in full through %s since its return was given up", id, p.Provider)
		}
		now := b.now().UTC()
		p.PaidByHandAt, p.PaidByHandReference, p.UpdatedAt = &now, reference, now
		p.Note = models.Cut(p.Note+"; paid back by hand ("+reference+")", 500)
		return tx.Model(&p).Select("paid_by_hand_at", "paid_by_hand_reference", "note", "updated_at").Updates(&p).Error
	})
	if err != nil {
		return View{}, err
	}
	return newView(p), nil
}
