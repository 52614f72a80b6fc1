package inventory

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/pagecursor"
	"github.com/domaind/domaind/models"
)

// Managed is a listing as ops manage it: its item, and when it sold.
type Managed struct {
	Item
	SoldAt *time.Time
}

var managedPages = pagecursor.Newest[Managed]{Name: "inventory/v1", KeyCol: "created_at", IDCol: "id",
	Key: func(m Managed) (time.Time, string) { return m.CreatedAt, m.ID }}

// List returns a page of env's listings, sold ones too, newest first,
// whose names contain q ("" for all), and the next page's cursor.
func (s *Service) List(ctx context.Context, env, q, cursor string, limit int) ([]Managed, string, error) {
	model, err := listingModel(env)
	if err != nil {
		return nil, "", err
	}
	query := s.db.WithContext(ctx).Model(model).
		Select("id", "domain", "tld", "bin_cents", "floor_cents", "currency", "locked_until", "created_at", "sold_at")
	if q = strings.ToLower(strings.TrimSpace(q)); q != "" {
		query = query.Where(`domain LIKE ? ESCAPE '\'`, models.LikeContains(q))
	}
	return managedPages.Page(query, s.secretKey, cursor, limit, env, q)
}

// checkPrices refuses a price that is not a positive number of cents, and
// a floor above the buy-it-now price.
func checkPrices(binCents, floorCents *int64) error {
	for field, v := range map[string]*int64{"bin_cents": binCents, "floor_cents": floorCents} {
		if v != nil && (*v <= 0 || *v > 1e12) {
			return fault.Invalid(field, "must be a positive number of cents")
		}
	}
	if binCents != nil && floorCents != nil && *floorCents > *binCents {
		return fault.Invalid("floor_cents", "must not exceed bin_cents")
	}
	return nil
}

// SetPrices changes the buy-it-now price and the floor of env's listing
// id (nil clears one); a sold or unknown listing is not_found.
func (s *Service) SetPrices(ctx context.Context, env, id string, binCents, floorCents *int64) error {
	model, err := listingModel(env)
	if err != nil {
		return err
	}
	if err := checkPrices(binCents, floorCents); err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Model(model).Where("id = ? AND sold_at IS NULL", id).
		Updates(map[string]any{"bin_cents": binCents, "floor_cents": floorCents})
	if res.Error != nil {
		return fmt.Errorf("price listing %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fault.New(fault.NotFound, "no unsold %s listing %s", env, id)
	}
	return nil
}

// MaxImportLines is the most names one import lists.
const MaxImportLines = 10_000

// ImportResult is what an import did: the names it listed, and each line
// it could not, by line number.
type ImportResult struct {
	Added  int
	Failed []ImportFailure
}

// ImportFailure is a line of an import that listed nothing, and why.
type ImportFailure struct {
	Line    int
	Domain  string
	Problem string
}

// Import lists in env the names of a CSV whose header is domain,
// bin_cents, floor_cents (the prices may be empty), each as Add does: a
// line that cannot be listed (a wrong name or price, a name listed
// already) is reported and the others are listed. A file that is not
// such a CSV, or longer than MaxImportLines, lists nothing.
func (s *Service) Import(ctx context.Context, env string, r io.Reader) (ImportResult, error) {
	if _, err := listingModel(env); err != nil {
		return ImportResult{}, err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	cr.TrimLeadingSpace = true
	records, err := cr.ReadAll()
	var parseErr *csv.ParseError
	switch {
	case errors.As(err, &parseErr):
		return ImportResult{}, fault.Invalid("file", "is not a CSV of domain,bin_cents,floor_cents: line %d: %v", parseErr.Line, parseErr.Err)
	case err != nil:
		return ImportResult{}, fmt.Errorf("read the import: %w", err)
	case len(records) == 0 || strings.Join(records[0], ",") != "domain,bin_cents,floor_cents":
		return ImportResult{}, fault.Invalid("file", "must start with the header line domain,bin_cents,floor_cents")
	case len(records)-1 > MaxImportLines:
		return ImportResult{}, fault.Invalid("file", "lists %d names; at most %d at once", len(records)-1, MaxImportLines)
	}
	var res ImportResult
	for i, rec := range records[1:] {
		line := i + 2
		bin, err1 := optionalCents("bin_cents", rec[1])
		floor, err2 := optionalCents("floor_cents", rec[2])
		err := errors.Join(err1, err2)
		if err == nil {
			_, err = s.Add(ctx, env, rec[0], bin, floor)
		}
		if e, ok := fault.As(err); ok {
			res.Failed = append(res.Failed, ImportFailure{Line: line, Domain: rec[0], Problem: e.Message})
			continue
		}
		if err != nil {
			return res, fmt.Errorf("import line %d: %w", line, err)
		}
		res.Added++
	}
	return res, nil
}

// optionalCents reads a whole number of cents, nil for "".
func optionalCents(field, v string) (*int64, error) {
	if v = strings.TrimSpace(v); v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fault.Invalid(field, "must be a whole number of cents, not %q", v)
	}
	return &n, nil
}
