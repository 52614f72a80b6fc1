package brokerage

import (
	"context"
	"fmt"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/ledger"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/models"
)

// Action is something ops do to a case.
type Action string

// The ops actions (POST /api/ops/brokerage/{case_id}/{action}).
const (
	ContactOwner Action = "contact-owner"
	RecordOffer  Action = "record-offer"
	CloseDeal    Action = "close-deal"
	CloseNoDeal  Action = "close-no-deal"
)

// AllActions are the actions, in the order of a case's life.
var AllActions = []Action{ContactOwner, RecordOffer, CloseDeal, CloseNoDeal}

// Moves is every move a case can make: status × action → status. A pair
// not listed is refused as a conflict naming the status.
var Moves = map[string]map[Action]string{
	models.CaseOpen: {
		ContactOwner: models.CaseContactingOwner,
		CloseNoDeal:  models.CaseClosedNoDeal,
	},
	models.CaseContactingOwner: {
		RecordOffer: models.CaseNegotiating,
		CloseNoDeal: models.CaseClosedNoDeal,
	},
	models.CaseNegotiating: {
		RecordOffer: models.CaseNegotiating, // a counter-offer
		CloseDeal:   models.CaseClosedDeal,
		CloseNoDeal: models.CaseClosedNoDeal,
	},
}

// Actions lists what ops may do to a case in status, in the order of a
// case's life.
func Actions(status string) []Action {
	var out []Action
	for _, a := range AllActions {
		if _, ok := Moves[status][a]; ok {
			out = append(out, a)
		}
	}
	return out
}

// MoveInput is what an action takes besides the case.
type MoveInput struct {
	// AmountCents is record-offer's offer.
	AmountCents int64 `json:"amount_cents"`
	// PriceCents is close-deal's price.
	PriceCents int64 `json:"price_cents"`
	// Note is record-offer's note; Reason close-no-deal's.
	Note   string `json:"note"`
	Reason string `json:"reason"`
	// Share shows the offer and its note, or the reason, to the partner
	// and the buyer; without it they are ops' own. Contacting the owner
	// and the deal are always shared (they carry no note, and the case
	// shows the deal's price).
	Share bool `json:"share"`
}

// check validates what action needs of in.
func (in MoveInput) check(action Action) error {
	const maxText = 500
	switch {
	case action == RecordOffer && (in.AmountCents < 1 || in.AmountCents > MaxBudgetCents):
		return fault.Invalid("amount_cents", "must be from 1 to %d", MaxBudgetCents)
	case action == CloseDeal && (in.PriceCents < 1 || in.PriceCents > MaxBudgetCents):
		return fault.Invalid("price_cents", "must be from 1 to %d", MaxBudgetCents)
	case len(in.Note) > maxText:
		return fault.Invalid("note", "is longer than %d bytes", maxText)
	case len(in.Reason) > maxText:
		return fault.Invalid("reason", "is longer than %d bytes", maxText)
	}
	return nil
}

// Move applies action to case id as ops, writing the case and its step
// together. close-deal also records the fee and commission, posts them to
// the ledger and emits brokerage.case_completed, in the same transaction.
func (s *Service) Move(ctx context.Context, id string, action Action, in MoveInput) (View, error) {
	if err := in.check(action); err != nil {
		return View{}, err
	}
	var v View
	err := s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		c, err := find(models.ForUpdate(tx.DB), id)
		if err != nil {
			return err
		}
		to, ok := Moves[c.Status][action]
		if !ok {
			return fault.New(fault.Conflict, "brokerage case %s is %s: %s is not allowed from there", c.ID, c.Status, action)
		}
		now := s.now().UTC()
		c.Status, c.UpdatedAt = to, now
		st := models.BrokerageStep{Actor: ActorOps, Note: string(action), Shared: in.Share || action == ContactOwner || action == CloseDeal}
		switch action {
		case RecordOffer:
			st.AmountCents = &in.AmountCents
			if in.Note != "" {
				st.Note += ": " + in.Note
			}
		case CloseNoDeal:
			c.ClosedAt = &now
			if in.Reason != "" {
				st.Note += ": " + in.Reason
			}
		case CloseDeal:
			if err := s.closeDeal(tx, &c, in.PriceCents, now); err != nil {
				return err
			}
			st.AmountCents, st.Event = &in.PriceCents, EventCaseCompleted
		}
		if err := tx.Model(&models.BrokerageCase{ID: c.ID}).Select("status", "price_cents", "fee_bps", "fee_cents",
			"commission_bps", "commission_cents", "updated_at", "closed_at").Updates(&c).Error; err != nil {
			return fmt.Errorf("move brokerage case %s: %w", c.ID, err)
		}
		if err := s.recordStep(tx, c, st, now); err != nil {
			return err
		}
		// Read in the transaction: a move that cannot answer is not made,
		// so a retry of it is the only one.
		v, err = withTimeline(tx.DB, s.newView(c), forOps)
		return err
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// closeDeal sets c's deal at price (the fee of its tier, the commission
// of its partner's rate, each rounded once) and posts it to the ledger.
func (s *Service) closeDeal(tx *outbox.Tx, c *models.BrokerageCase, price int64, now time.Time) error {
	var p models.Partner
	if err := tx.Take(&p, "id = ?", c.PartnerID).Error; err != nil {
		return fmt.Errorf("find partner %s of brokerage case %s: %w", c.PartnerID, c.ID, err)
	}
	c.PriceCents, c.FeeBPS, c.CommissionBPS, c.ClosedAt = price, FeeBPS[c.Tier], p.CommissionBPS, &now
	c.FeeCents = ledger.Share(price, c.FeeBPS)
	c.CommissionCents = ledger.Share(c.FeeCents, c.CommissionBPS)
	ref := ledger.Ref{PartnerID: c.PartnerID, Environment: c.Environment, Currency: c.Currency, Kind: ledger.KindBrokerage, CaseID: &c.ID}
	return ledger.Post(tx.DB, ref, now, ledger.Brokerage(c.FeeCents, c.CommissionCents)...)
}

// Ops returns any case with its timeline, for ops.
func (s *Service) Ops(ctx context.Context, id string) (View, error) {
	return s.view(ctx, id, forOps, nil)
}
