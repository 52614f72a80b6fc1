package models_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/models/modelstest"
)

// Found answers a missing row as not_found in the caller's words, wraps
// any other error with what was looked for, and passes nil.
func TestFoundTranslatesNotFoundOnce(t *testing.T) {
	t.Parallel()
	db := modelstest.NewDB(t)
	var o models.Order
	err := models.Found(db.Take(&o, "public_id = ?", "ord_nosuch").Error, "order ord_nosuch")
	if e, ok := fault.As(err); !ok || e.Code != fault.NotFound || e.Message != "no order ord_nosuch" || !errors.Is(err, gorm.ErrRecordNotFound) {
		t.Errorf("a missing order = %v", err)
	}
	err = models.FoundOr(db.Take(&o, "public_id = ?", "x").Error, "listing x.com", "%s is not listed", "x.com")
	if e, ok := fault.As(err); !ok || e.Message != "x.com is not listed" {
		t.Errorf("a missing row in the caller's words = %v", err)
	}
	broken := errors.New("connection reset")
	if err := models.Found(broken, "order ord_1"); !errors.Is(err, broken) || err.Error() != "find order ord_1: connection reset" {
		t.Errorf("another error = %v", err)
	}
	if err := models.Found(nil, "order ord_1"); err != nil {
		t.Errorf("a row found = %v", err)
	}
}
