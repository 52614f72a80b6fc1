// Package ledger is the service's book of money: a double-entry ledger in
// integer cents (models.LedgerEntry). Every change of money (a sale, a
// refund, a payout) is one transaction of lines that sum to zero, written
// by Post in the database transaction of the change itself; statements,
// transactions and payouts are queries over the lines, never a second
// copy of the numbers.
//
// The accounts, per partner, environment and currency (debits positive):
//
//	sales               the marketplace's sales: credited the gross of each
//	commission          the partners' share of sales: debited
//	partner_receivable  owed by a partner that collected a sale itself
//	partner_payable     owed to a partner for a sale the service collected
//	cash                money the service holds: hosted payments in
//	brokerage_fees      the marketplace's fees of brokered deals: credited
//	referral_commission what the service pays affiliates for referred sales
//	referral_pending    referral commission owed once its sale settles
//
// A partner-collected sale of G with commission C is sales −G,
// commission +C, partner_receivable +(G−C): the partner keeps its share
// and owes the rest. A hosted sale is cash +G, sales −G, commission +C,
// partner_payable −C: the service owes the partner its share. A refund
// reverses the sale in proportion, so that refunds adding up to the whole
// sale reverse exactly its commission. A brokered deal whose fee is F, of
// which the partner that opened the case earns C, is cash +F,
// brokerage_fees −F, commission +C, partner_payable −C: the fee is the
// service's, and it owes the partner its share (internal/brokerage).
//
// A referred sale earns the affiliate that referred it R, posted under the
// affiliate (internal/referral): referral_commission +R,
// referral_pending −R when the sale is made; refunds reverse it in
// proportion (referral_pending back, referral_commission back); what is
// left moves to partner_payable when the order settles, and is paid out
// with the affiliate's other commission.
package ledger

import (
	"fmt"
	"math/big"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/secret"
	"github.com/domaind/domaind/models"
)

// Accounts.
const (
	Sales      = "sales"
	Commission = "commission"
	Receivable = "partner_receivable"
	Payable    = "partner_payable"
	Cash       = "cash"
	// BrokerageFees is credited the fee of each brokered deal.
	BrokerageFees = "brokerage_fees"
	// ReferralCommission is debited the commission of referred sales.
	ReferralCommission = "referral_commission"
	// ReferralPending is credited referral commission until its sale
	// settles.
	ReferralPending = "referral_pending"
)

// Kinds of transactions.
const (
	KindSale   = "sale"
	KindRefund = "refund"
	KindPayout = "payout"
	// KindBrokerage is a brokered deal's fee and commission.
	KindBrokerage = "brokerage"
	// KindReferral is an affiliate's commission on a referred sale: its
	// accrual, its reversal by a refund (with the refund's id), and its
	// move to payable when the sale settles.
	KindReferral = "referral"
)

// Line is an amount on an account: a debit when positive.
type Line struct {
	Account     string
	AmountCents int64
}

// Ref is what a transaction is about and whose it is.
type Ref struct {
	PartnerID, Environment, Currency, Kind string
	OrderID, RefundID, PayoutID, CaseID    *string
}

// Post writes lines as one ledger transaction about ref in tx. Lines of
// zero are left out; the rest must sum to zero.
func Post(tx *gorm.DB, ref Ref, now time.Time, lines ...Line) error {
	return PostAll(tx, now, Txn{Ref: ref, Lines: lines})
}

// Txn is a ledger transaction to post: lines about Ref.
type Txn struct {
	Ref   Ref
	Lines []Line
}

// PostAll writes txns in tx with one insert, as Post writes each.
func PostAll(tx *gorm.DB, now time.Time, txns ...Txn) error {
	var entries []models.LedgerEntry
	for _, t := range txns {
		var sum int64
		id := secret.NewID("txn_")
		for _, l := range t.Lines {
			sum += l.AmountCents
			if l.AmountCents == 0 {
				continue
			}
			r := t.Ref
			entries = append(entries, models.LedgerEntry{TxnID: id, Account: l.Account, PartnerID: r.PartnerID,
				Environment: r.Environment, Currency: r.Currency, AmountCents: l.AmountCents, Kind: r.Kind,
				OrderID: r.OrderID, RefundID: r.RefundID, PayoutID: r.PayoutID, CaseID: r.CaseID, CreatedAt: now.UTC()})
		}
		if sum != 0 {
			return fmt.Errorf("ledger: the lines of a %s transaction sum to %d cents, not zero: %+v", t.Ref.Kind, sum, t.Lines)
		}
	}
	if err := models.InsertLedgerEntries(tx, entries); err != nil {
		return fmt.Errorf("ledger: post %d transactions: %w", len(txns), err)
	}
	return nil
}

// Share returns bps basis points of cents, rounded half to even.
func Share(cents int64, bps int) int64 { return MulDiv(cents, int64(bps), 10_000) }

// MulDiv returns a·b/d rounded half to even, exactly (the product may
// exceed 64 bits). d must be positive.
func MulDiv(a, b, d int64) int64 {
	n := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	q, r := new(big.Int).QuoRem(n, big.NewInt(d), new(big.Int))
	// Compare twice the remainder with the divisor, by magnitude.
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	switch c := twice.Cmp(big.NewInt(d)); {
	case c > 0 || (c == 0 && q.Bit(0) == 1):
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// Kept returns what is left of commission on a sale of gross once
// refunded cents of it are refunded: the commission less its share of the
// refunds, rounded half to even. Refund and ReferralRefund reverse the
// difference that each refund makes to it, so the parts of a whole refund
// reverse the commission exactly.
func Kept(gross, commission, refunded int64) int64 {
	if gross <= 0 {
		return commission
	}
	return commission - MulDiv(commission, refunded, gross)
}

// Sale returns the lines of a sale of gross cents with commission cents,
// collected by the partner (partner_collected) or by the service (hosted).
func Sale(paymentModel string, gross, commission int64) []Line {
	if paymentModel == models.PaymentHosted {
		return []Line{{Cash, gross}, {Sales, -gross}, {Commission, commission}, {Payable, -commission}}
	}
	return []Line{{Sales, -gross}, {Commission, commission}, {Receivable, gross - commission}}
}

// Refund returns the lines of refunding amount cents of a sale of gross
// with commission, of which refunded cents were refunded before: the sale
// reversed in proportion, its commission by the difference of the shares
// before and after, so that the parts of a whole refund reverse exactly
// the commission.
func Refund(paymentModel string, gross, commission, refunded, amount int64) []Line {
	back := Kept(gross, commission, refunded) - Kept(gross, commission, refunded+amount)
	if paymentModel == models.PaymentHosted {
		return []Line{{Cash, -amount}, {Sales, amount}, {Commission, -back}, {Payable, back}}
	}
	return []Line{{Sales, amount}, {Commission, -back}, {Receivable, back - amount}}
}

// Brokerage returns the lines of a brokered deal whose fee is fee cents,
// commission cents of which the partner earns.
func Brokerage(fee, commission int64) []Line {
	return []Line{{Cash, fee}, {BrokerageFees, -fee}, {Commission, commission}, {Payable, -commission}}
}

// Referral returns the lines of an affiliate's commission of cents on a
// sale it referred, pending until the sale settles.
func Referral(cents int64) []Line {
	return []Line{{ReferralCommission, cents}, {ReferralPending, -cents}}
}

// ReferralRefund returns the lines that reverse, for a refund of amount
// cents on a sale of gross of which refunded cents were refunded before,
// the part of the referral commission that goes with it (in proportion, as
// Refund reverses the seller's commission).
func ReferralRefund(gross, commission, refunded, amount int64) []Line {
	back := Kept(gross, commission, refunded) - Kept(gross, commission, refunded+amount)
	return []Line{{ReferralPending, back}, {ReferralCommission, -back}}
}

// ReferralSettled returns the lines that make the referral commission
// left on a settled sale of gross, refunded cents of it refunded, payable
// to the affiliate.
func ReferralSettled(gross, commission, refunded int64) []Line {
	left := Kept(gross, commission, refunded)
	return []Line{{ReferralPending, left}, {Payable, -left}}
}
