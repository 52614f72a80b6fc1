package availability

import (
	"fmt"
	"strings"

	"github.com/domaind/domaind/internal/registry"
)

// SyntaxError says why a label is not allowed under a TLD. It is decided
// from the TLD's stored rules, before any registry is asked.
type SyntaxError struct {
	Label string // the label, in ASCII (A-label) form
	TLD   string
	// Rule is the broken rule: RuleMinLength, RuleMaxLength or RuleIDN.
	Rule string
	// Limit is the length bound of RuleMinLength and RuleMaxLength.
	Limit int
}

// The rules of registry.DomainSyntax a label can break.
const (
	RuleMinLength = "min_length"
	RuleMaxLength = "max_length"
	RuleIDN       = "idn"
)

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s.%s is not allowed: %s", e.Label, e.TLD, e.Reason())
}

// Reason is a short human phrase for the broken rule, fit for a search
// row's state_label ("Too short for .ly (3+ characters)").
func (e *SyntaxError) Reason() string {
	switch e.Rule {
	case RuleMinLength:
		return fmt.Sprintf("Too short for .%s (%d+ characters)", e.TLD, e.Limit)
	case RuleMaxLength:
		return fmt.Sprintf("Too long for .%s (at most %d characters)", e.TLD, e.Limit)
	case RuleIDN:
		return fmt.Sprintf("No internationalised names under .%s", e.TLD)
	}
	return "Not allowed under ." + e.TLD
}

// CheckLabel reports whether label (lower-case ASCII, an A-label for an
// internationalised name, as domainname.Parse gives it) is allowed under tld
// by the TLD's syntax rules: nil when it is, a *SyntaxError naming the first
// broken rule when it is not. Lengths count the ASCII form, the one the
// registry is asked about and the one DNS limits; a MinLength or MaxLength
// of 0 means the registry gave no such rule. An internationalised label
// needs IDNSupport.
func CheckLabel(label, tld string, rules registry.DomainSyntax) error {
	fail := func(rule string, limit int) error {
		return &SyntaxError{Label: label, TLD: tld, Rule: rule, Limit: limit}
	}
	switch n := len(label); {
	case strings.HasPrefix(label, "xn--") && !rules.IDNSupport:
		return fail(RuleIDN, 0)
	case rules.MinLength > 0 && n < rules.MinLength:
		return fail(RuleMinLength, rules.MinLength)
	case rules.MaxLength > 0 && n > rules.MaxLength:
		return fail(RuleMaxLength, rules.MaxLength)
	}
	return nil
}
