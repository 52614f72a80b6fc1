package order

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
)

// listing is the columns of either environment's listings a sale reads.
type listing struct {
	ID          string
	Domain      string
	BINCents    *int64
	Currency    string
	LockedUntil *time.Time
	HeldBy      *string
	HeldSession *string
	HeldSince   *time.Time
	SoldAt      *time.Time
}

// holder is who buys or holds a listing: a partner itself (its quotes and
// orders), or a checkout session of the partner's, paying.
type holder struct {
	partnerID string
	sessionID string // "" for the partner itself
}

// mayTake reports whether h may hold or buy l at now: no hold is on it,
// or the partner's own quote holds it, or h is the session that holds it.
// While a session pays, neither another session nor the partner's own
// order may take it. mayTakeSQL is the same test in SQL.
func (l listing) mayTake(h holder, now time.Time) bool {
	if l.LockedUntil == nil || !l.LockedUntil.After(now) {
		return true
	}
	if l.HeldBy == nil || *l.HeldBy != h.partnerID {
		return false
	}
	return l.HeldSession == nil || (h.sessionID != "" && *l.HeldSession == h.sessionID)
}

// mayTakeSQL is mayTake, with its arguments: now, the partner, the session.
const mayTakeSQL = "(locked_until IS NULL OR locked_until <= ? OR (held_by = ? AND (held_session IS NULL OR held_session = ?)))"

// buyable returns the conflict that keeps h from buying l at now: it is
// sold, or someone else holds it.
func (l listing) buyable(h holder, now time.Time) error {
	switch {
	case l.SoldAt != nil:
		return fault.New(fault.Conflict, "%s is sold", l.Domain)
	case !l.mayTake(h, now):
		return fault.New(fault.Conflict, "%s is reserved until %s", l.Domain, l.LockedUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// table is env's listings: the marketplace's approved ones for live (a
// sold one is hidden from the marketplace but still found here), the
// sandbox inventory otherwise.
func table(db *gorm.DB, env string) *gorm.DB {
	if env == models.EnvLive {
		return db.Scopes(models.ShownOrSoldListings)
	}
	return db.Model(&models.SandboxListing{})
}

// findListing returns env's listing of domain, locked for the rest of tx
// (Postgres; SQLite has one writer anyway), or not_found. A malformed
// domain is a validation error naming field.
func findListing(tx *gorm.DB, env, domain, field string) (listing, error) {
	name, err := domainname.Parse(domain)
	if err != nil {
		return listing{}, fault.InvalidErr(field, err)
	}
	var l listing
	err = table(models.ForUpdate(tx), env).Where("domain = ?", name.Registrable).Take(&l).Error
	return l, models.FoundOr(err, "listing "+name.Registrable, "%s is not listed", name.Registrable)
}

// hold sets a hold of h on l until, unless someone else holds it or it is
// sold; it reports whether it did. A partner's quote records since, when
// its hold began (chainStart); a session's hold leaves it as it was.
func hold(tx *gorm.DB, env string, l listing, h holder, now, until time.Time, since *time.Time) (bool, error) {
	set := map[string]any{"locked_until": until, "held_by": h.partnerID, "held_session": nil}
	if h.sessionID != "" {
		set["held_session"] = h.sessionID
	}
	if since != nil {
		set["held_since"] = *since
	}
	res := tx.Model(model(env)).Where("id = ? AND sold_at IS NULL AND "+mayTakeSQL, l.ID, now, h.partnerID, h.sessionID).Updates(set)
	return res.RowsAffected == 1, res.Error
}

// sell marks l sold to h (hidden from the marketplace for live), unless
// it is sold already or held by someone else; it reports whether it did.
func sell(tx *gorm.DB, env string, l listing, h holder, now time.Time) (bool, error) {
	q, args := sellSQL(env, "id = ?", l.ID, h, now)
	res := tx.Exec(q, args...)
	return res.RowsAffected == 1, res.Error
}

// take sells env's listing of domain to h at now, as sell does, and
// returns it: one UPDATE … RETURNING finds the listing (a domain is listed
// once in either table) and claims it. When it claims none, the listing is
// read to say why: not_found, or the conflict buyable names. A malformed
// domain is a validation error naming field.
func take(tx *gorm.DB, env, domain, field string, h holder, now time.Time) (listing, error) {
	name, err := domainname.Parse(domain)
	if err != nil {
		return listing{}, fault.InvalidErr(field, err)
	}
	q, args := sellSQL(env, "domain = ?", name.Registrable, h, now)
	var sold []listing
	if err := tx.Raw(q+" RETURNING id, domain, bin_cents, currency", args...).Scan(&sold).Error; err != nil {
		return listing{}, fmt.Errorf("sell %s: %w", name.Registrable, err)
	}
	if len(sold) == 1 {
		return sold[0], nil
	}
	l, err := findListing(tx, env, name.Registrable, field)
	if err != nil {
		return l, err
	}
	if err := l.buyable(h, now); err != nil {
		return l, err
	}
	return l, fault.New(fault.Conflict, "%s was reserved or sold a moment ago", l.Domain)
}

// sellSQL is the UPDATE that marks the listing of env where key (a
// condition of one argument, arg) sold to h at now, and its arguments: it
// changes a listing only while it is for sale (for live, approved and on
// the marketplace, which it leaves) and h may take it.
func sellSQL(env, key string, arg any, h holder, now time.Time) (string, []any) {
	set := "sold_at = ?, locked_until = NULL, held_by = NULL, held_session = NULL"
	q := "UPDATE sandbox_listings SET " + set + " WHERE " + key
	if env == models.EnvLive {
		q = "UPDATE listings SET " + set + ", marketplace_visible = false WHERE " + key + " AND " + models.PublicListingSQL
	}
	return q + " AND sold_at IS NULL AND " + mayTakeSQL, []any{now, arg, now, h.partnerID, h.sessionID}
}

// putBackOnSale undoes sell after a refund or a cancellation.
func putBackOnSale(tx *gorm.DB, env, listingID string) error {
	set := map[string]any{"sold_at": nil}
	if env == models.EnvLive {
		set["marketplace_visible"] = true
	}
	return tx.Model(model(env)).Where("id = ? AND sold_at IS NOT NULL", listingID).Updates(set).Error
}

// model is env's listing model, for updates.
func model(env string) any {
	if env == models.EnvLive {
		return &models.Listing{}
	}
	return &models.SandboxListing{}
}
