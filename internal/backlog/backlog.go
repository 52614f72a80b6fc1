// Package backlog is the work the service leaves for ops, where only a
// person can decide: a transfer whose outcome the registry left unknown,
// a card refund that failed, a charge that paid for no order whose return
// was given up. The ops index lists it and a gauge counts it for alerts;
// each kind leaves the backlog through its own move (fail-transfer or
// confirm-delivery; a card refund retried, or a refund or a payment paid
// back by hand).
package backlog

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/order"
	"github.com/domaind/domaind/internal/payment"
	"github.com/domaind/domaind/models"
)

// Kind is a kind of work left for ops.
type Kind string

// The kinds, as the gauge's label and the ops index name them.
const (
	// TransferUnconfirmed is an order whose push the registry left
	// unconfirmed (order.UnconfirmedPushes): ops look at the registry,
	// then record fail-transfer or confirm-delivery.
	TransferUnconfirmed Kind = "transfer_unconfirmed"
	// CardRefundFailed is a hosted order's refund that could not go back
	// to the buyer's card (order.RefundsAwaitingOps): ops retry it, or
	// pay it by hand.
	CardRefundFailed Kind = "card_refund_failed"
	// ReturnGivenUp is a charge that paid for no order and could not be
	// given back (payment.ReturnsAwaitingOps): ops pay it by hand, or
	// refund it in the processor's dashboard.
	ReturnGivenUp Kind = "return_given_up"
)

// Kinds are every kind, in the order the ops index shows them.
var Kinds = []Kind{TransferUnconfirmed, CardRefundFailed, ReturnGivenUp}

// Item is one piece of work.
type Item struct {
	Kind Kind `json:"kind"`
	// ID is what the move takes: the order's public id, the refund's or
	// the payment's id.
	ID string `json:"id"`
	// OrderID is the order it is about ("" for a charge without one).
	OrderID string `json:"order_id"`
	Domain  string `json:"domain"`
	// AmountCents is the money owed to the buyer: the refund, or the
	// charge not given back yet (0 for a transfer, which owes the name).
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	// Since is when it was left for ops; Reason what the service knows
	// of why.
	Since  time.Time `json:"since"`
	Reason string    `json:"reason"`
	// UnmatchedRefundCents is, for a failed card refund, what the
	// processor's notices count as refunded on the order's charge beyond
	// the refunds sent: the failed one may have been made after all (an
	// answer lost), or ops refunded in the processor's dashboard. Ops
	// retry it (order.Service.RetryCardRefund), which finds a refund made
	// under its key, before paying by hand.
	UnmatchedRefundCents int64 `json:"unmatched_refund_cents"`
}

// Service reads the backlog from the database.
type Service struct {
	db *gorm.DB
}

// New returns the backlog of db.
func New(db *gorm.DB) *Service { return &Service{db: db} }

// scope is the rows of kind, over db.
func scope(db *gorm.DB, kind Kind) *gorm.DB {
	switch kind {
	case TransferUnconfirmed:
		return order.UnconfirmedPushes(db)
	case CardRefundFailed:
		return db.Model(&models.Refund{}).Where(order.RefundsAwaitingOps)
	case ReturnGivenUp:
		return db.Model(&models.Payment{}).Where(payment.ReturnsAwaitingOps, payment.ReturnStatuses)
	}
	panic("backlog: no kind " + string(kind))
}

// items are scope's rows as Items' columns, oldest first.
func items(db *gorm.DB, kind Kind) *gorm.DB {
	q := scope(db, kind)
	switch kind {
	case TransferUnconfirmed:
		return q.Select(`orders.public_id AS id, orders.public_id AS order_id, orders.domain, 0 AS amount_cents,
			orders.currency, unconfirmed.at AS since, unconfirmed.note AS reason, 0 AS unmatched_refund_cents`).Order("unconfirmed.at")
	case CardRefundFailed:
		return q.Joins("JOIN orders ON orders.public_id = refunds.order_id").Select(`refunds.id, refunds.order_id, orders.domain,
			refunds.amount_cents, refunds.currency, refunds.created_at AS since, refunds.card_error AS reason,
			COALESCE((SELECT max(p.refunded_cents) FROM payments p WHERE p.order_id = refunds.order_id), 0)
			- COALESCE((SELECT sum(s.amount_cents) FROM refunds s WHERE s.order_id = refunds.order_id AND s.card_status = ?), 0)
			AS unmatched_refund_cents`, models.CardRefundSent).Order("refunds.created_at")
	}
	return q.Select(`payments.id, '' AS order_id, payments.domain, payments.amount_cents - payments.refunded_cents AS amount_cents,
		payments.currency, payments.return_given_up_at AS since, payments.note AS reason, 0 AS unmatched_refund_cents`).Order("payments.return_given_up_at")
}

// Counts returns how much work of each kind waits, every kind named.
func (s *Service) Counts(ctx context.Context) (map[Kind]int64, error) {
	counts := make(map[Kind]int64, len(Kinds))
	for _, kind := range Kinds {
		var n int64
		if err := scope(s.db.WithContext(ctx), kind).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("count %s: %w", kind, err)
		}
		counts[kind] = n
	}
	return counts, nil
}

// CountsByName is Counts keyed by the kinds' names, as the gauge
// (metrics.RegisterBacklog) takes them.
func (s *Service) CountsByName(ctx context.Context) (map[string]int64, error) {
	counts, err := s.Counts(ctx)
	byName := make(map[string]int64, len(counts))
	for kind, n := range counts {
		byName[string(kind)] = n
	}
	return byName, err
}

// List returns up to limit items of each kind, oldest first within a
// kind, the kinds in the order of Kinds.
func (s *Service) List(ctx context.Context, limit int) ([]Item, error) {
	out := []Item{}
	for _, kind := range Kinds {
		var rows []Item
		if err := items(s.db.WithContext(ctx), kind).Limit(limit).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("list %s: %w", kind, err)
		}
		for i := range rows {
			rows[i].Kind = kind
			rows[i].Since = rows[i].Since.UTC()
			rows[i].UnmatchedRefundCents = max(rows[i].UnmatchedRefundCents, 0)
		}
		out = append(out, rows...)
	}
	return out, nil
}
