package models

import (
	"strings"
	"unicode"

	"github.com/domaind/domaind/internal/fault"
)

// MaxReference bounds the reference of money paid outside the service's
// processors: a payout, or a buyer paid back by hand.
const MaxReference = 100

// CheckReference validates ref, the reference of the bank transfer or
// payment that paid what (for the error: "the payout", say), already
// trimmed: required, printable, at most MaxReference bytes.
func CheckReference(ref, what string) error {
	if ref == "" {
		return fault.Invalid("reference", "is required: the reference of the bank transfer or payment that paid %s", what)
	}
	if len(ref) > MaxReference {
		return fault.Invalid("reference", "is longer than %d bytes", MaxReference)
	}
	if strings.IndexFunc(ref, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return fault.Invalid("reference", "holds a control character")
	}
	return nil
}
