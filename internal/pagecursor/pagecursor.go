// Package pagecursor makes the opaque, tamper-proof cursors of keyset
// pagination. A cursor carries the sort key of the last item of a page and a
// fingerprint of the query (filters and sort) it was issued for, sealed
// with AES-256-GCM under a key derived from the service's secret key: a
// client can neither read it (a price sort's key is a price the caller may
// not be allowed to see), nor forge a position, nor reuse it with other
// filters.
package pagecursor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/secret"
)

// maxLen bounds a cursor a client sends back.
const maxLen = 1024

// Cursor is a position in one ordered query.
type Cursor struct {
	// Query fingerprints the filters and sort the cursor belongs to.
	Query string `json:"q"`
	// Key is the sort key of the last item shown (a time in Unix
	// nanoseconds, or a price in cents); ID breaks ties.
	Key int64  `json:"k"`
	ID  string `json:"i"`
}

// Fingerprint is a Cursor.Query for the query described by parts (a
// version, the sort, the filters, in a fixed order).
func Fingerprint(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:12])
}

// ErrInvalid is a cursor that is malformed, forged or from another query,
// coded for the client (400 invalid_cursor).
var ErrInvalid = fault.New(fault.InvalidCursor,
	"cursor is malformed or was issued for another list, other filters or another sort; start again without it")

var b64 = base64.RawURLEncoding

// purpose keeps the cursors' cipher apart from other uses of the secret key.
const purpose = "pagecursor encryption key"

// Encode seals c with secret.
func Encode(secretKey []byte, c Cursor) string {
	payload, _ := json.Marshal(c) // a struct of strings and an int never fails
	return b64.EncodeToString(secret.NewSealer(secretKey, purpose).Seal(payload))
}

// Decode opens s with secret and returns its cursor if it belongs to query.
func Decode(secretKey []byte, s, query string) (Cursor, error) {
	if len(s) > maxLen {
		return Cursor{}, ErrInvalid
	}
	sealed, err := b64.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrInvalid
	}
	payload, err := secret.NewSealer(secretKey, purpose).Open(sealed)
	if err != nil {
		return Cursor{}, ErrInvalid
	}
	var c Cursor
	if err := json.Unmarshal(payload, &c); err != nil || c.ID == "" || c.Query != query {
		return Cursor{}, ErrInvalid
	}
	return c, nil
}

// At is the cursor's key as a time (a key of Unix nanoseconds).
func (c Cursor) At() time.Time { return time.Unix(0, c.Key).UTC() }

// Trim cuts items, read with one more than limit to see whether a page
// follows, to limit, and returns them with the cursor of the next page:
// the last item's sort key and id (key gives them), sealed for query; ""
// when no page follows.
func Trim[T any](secretKey []byte, query string, items []T, limit int, key func(T) (int64, string)) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	k, id := key(items[limit-1])
	return items, Encode(secretKey, Cursor{Query: query, Key: k, ID: id})
}

// Page sizes of the partner API's and the ops' lists.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// Newest is a newest-first list of rows T: ordered by (KeyCol DESC,
// IDCol DESC), whose keys are times, paged by cursors sealed for the list
// and its filters. It is the one way the lists of orders, payouts,
// payments, brokerage cases, referred sales, transactions and webhook
// deliveries page.
type Newest[T any] struct {
	// Name names the list and its version in its cursors ("orders/v1").
	Name          string
	KeyCol, IDCol string
	// Key is a row's sort key and id.
	Key func(T) (time.Time, string)
}

// Page reads the page of q (the list's query, its filters applied) that
// cursor starts at ("" for the first): limit rows (DefaultLimit for 0, at
// most MaxLimit: a validation error naming limit otherwise), and the
// cursor of the next page ("" after the last). filters are the values of
// the list's filters, in a fixed order: a cursor of other filters is
// ErrInvalid.
func (l Newest[T]) Page(q *gorm.DB, secretKey []byte, cursor string, limit int, filters ...string) ([]T, string, error) {
	q, limit, fingerprint, err := l.head(q, secretKey, cursor, limit, filters)
	if err != nil {
		return nil, "", err
	}
	var rows []T
	if err := q.Scan(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list %s: %w", l.Name, err)
	}
	rows, next := Trim(secretKey, fingerprint, rows, limit, func(row T) (int64, string) {
		at, id := l.Key(row)
		return at.UnixNano(), id
	})
	return rows, next, nil
}

// Head narrows q to the rows the page that cursor starts at reads: those
// after the cursor's position, in the list's order, one more than limit
// at most (Page's arguments, checked as Page checks them). Page reads it.
// A list whose rows lie in several ranges of an index (a partner's
// deliveries, one range per endpoint) bounds each range with Head in a
// subquery, so that each reads about a page, and pages their union.
func (l Newest[T]) Head(q *gorm.DB, secretKey []byte, cursor string, limit int, filters ...string) (*gorm.DB, error) {
	q, _, _, err := l.head(q, secretKey, cursor, limit, filters)
	return q, err
}

// head is Head, and the page's size and its cursors' fingerprint.
func (l Newest[T]) head(q *gorm.DB, secretKey []byte, cursor string, limit int, filters []string) (*gorm.DB, int, string, error) {
	limit, err := Limit(limit, DefaultLimit, MaxLimit)
	if err != nil {
		return nil, 0, "", err
	}
	fingerprint := Fingerprint(append([]string{l.Name}, filters...)...)
	if q, err = Older(q, secretKey, cursor, fingerprint, l.KeyCol, l.IDCol); err != nil {
		return nil, 0, "", err
	}
	return q.Order(l.KeyCol + " DESC, " + l.IDCol + " DESC").Limit(limit + 1), limit, fingerprint, nil
}

// TimeKey is a filter's value for a fingerprint: a time's Unix
// nanoseconds, "" for none.
func TimeKey(t *time.Time) string {
	if t == nil {
		return ""
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// Limit is a page size asked for: def when limit is 0, else limit if it is
// from 1 to max, else a validation error naming limit.
func Limit(limit, def, max int) (int, error) {
	if limit == 0 {
		return def, nil
	}
	if limit < 1 || limit > max {
		return 0, fault.Invalid("limit", "must be from 1 to %d", max)
	}
	return limit, nil
}

// Older narrows q, a newest-first list ordered by (keyCol DESC, idCol
// DESC) whose keys are times, to the rows after cursor's position; q as
// it is when cursor is "". A cursor not sealed for query is ErrInvalid.
// The position is one row comparison, which an index on the list's
// filters and keyCol bounds: a page deep in the list reads its own rows,
// where "keyCol < ? OR (keyCol = ? AND …)" was a filter that read every
// newer row first.
func Older(q *gorm.DB, secretKey []byte, cursor, query, keyCol, idCol string) (*gorm.DB, error) {
	if cursor == "" {
		return q, nil
	}
	c, err := Decode(secretKey, cursor, query)
	if err != nil {
		return nil, err
	}
	return q.Where("("+keyCol+", "+idCol+") < (?, ?)", c.At(), c.ID), nil
}
