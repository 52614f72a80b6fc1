package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/domaind/domaind/internal/fault"

	"golang.org/x/sync/errgroup"

	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/registry"
)

// domain-suggest limits: MaxSuggestions names asked for at most, under
// MaxSuggestTLDs TLDs at most.
const (
	MaxSuggestions = 50
	MaxSuggestTLDs = 10

	maxKeywords      = 5
	defaultSuggest   = 20
	suggestChecks    = 8  // registry checks at once
	maxSuggestChecks = 60 // registry checks per request
	suggestCheckTime = 3 * time.Second
)

// defaultSuggestTLDs are tried when the caller names none.
var defaultSuggestTLDs = []string{"com", "net", "org", "io", "co", "app", "dev", "ai"}

// Label affixes, in the order their names are offered.
var (
	suggestPrefixes = []string{"get", "try", "my", "the"}
	suggestSuffixes = []string{"hq", "app", "hub", "labs", "online"}
	keywordPattern  = regexp.MustCompile(`^[a-z0-9]{1,30}$`)
)

// SuggestInput asks domain-suggest for names.
type SuggestInput struct {
	Keywords string   `json:"keywords" jsonschema:"one to five words the names are made of, such as green energy"`
	TLDs     []string `json:"tlds,omitempty" jsonschema:"up to 10 TLDs to suggest names under (default: a common set)"`
	Limit    *int     `json:"limit,omitempty" jsonschema:"how many available names to return, 1 to 50 (default 20)"`
}

// Suggestion is one name idea and what the registry says of it.
type Suggestion struct {
	Domain     string `json:"domain"`
	Available  bool   `json:"available"`
	Premium    bool   `json:"premium"`
	PriceCents int64  `json:"price_cents,omitempty"`
	Currency   string `json:"currency,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// SuggestResult is domain-suggest's answer: available names, and those
// checked and taken or not answered for.
type SuggestResult struct {
	Keywords    []string     `json:"keywords"`
	Suggestions []Suggestion `json:"suggestions"`
	Checked     int          `json:"checked"`
	Unavailable []Suggestion `json:"unavailable"`
	// Unknown are names the registry did not answer for in time.
	Unknown []string `json:"unknown"`
}

func checkSuggest(_ context.Context, in *SuggestInput) error {
	words := strings.FieldsFunc(strings.ToLower(in.Keywords), func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	switch {
	case len(words) == 0:
		return fault.Invalid("keywords", "is required: one to %d words, e.g. \"green energy\"", maxKeywords)
	case len(words) > maxKeywords:
		return fault.Invalid("keywords", "has %d words; at most %d", len(words), maxKeywords)
	}
	for _, w := range words {
		if !keywordPattern.MatchString(w) {
			return fault.Invalid("keywords", "%q: words are letters a-z and digits, 1 to 30 of them", w)
		}
	}
	in.Keywords = strings.Join(words, " ")
	if len(in.TLDs) == 0 {
		in.TLDs = defaultSuggestTLDs
	}
	if len(in.TLDs) > MaxSuggestTLDs {
		return fault.Invalid("tlds", "lists %d TLDs; at most %d", len(in.TLDs), MaxSuggestTLDs)
	}
	var tlds []string
	for i, raw := range in.TLDs {
		field := fmt.Sprintf("tlds[%d]", i)
		tld, err := domainname.ParseTLD(raw)
		if err != nil {
			return fault.Invalid(field, "%v", err)
		}
		if _, err := domainname.WithTLD("example", tld); err != nil {
			return fault.Invalid(field, "%q is not a suffix names are registered under", tld)
		}
		if !slices.Contains(tlds, tld) {
			tlds = append(tlds, tld)
		}
	}
	in.TLDs = tlds
	return inRange(&in.Limit, "limit", defaultSuggest, MaxSuggestions)
}

// suggestLabels are the labels made of the keywords, best first.
func suggestLabels(words []string) []string {
	base := []string{strings.Join(words, "")}
	if len(words) > 1 {
		base = append(base, strings.Join(words, "-"))
	}
	labels := slices.Clone(base)
	for _, p := range suggestPrefixes {
		labels = append(labels, p+base[0])
	}
	for _, s := range suggestSuffixes {
		labels = append(labels, base[0]+s)
	}
	if len(words) > 1 {
		labels = append(labels, words...)
	}
	var out []string
	for _, l := range labels {
		if len(l) <= 63 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// suggest checks the keyword names under each TLD with the registry and
// returns up to limit available ones, best first (a name's label first,
// then the TLD's order), with their prices.
func suggest(ctx context.Context, reg registry.Provider, in SuggestInput) (any, error) {
	words := strings.Fields(in.Keywords)
	var names []string
	for _, label := range suggestLabels(words) {
		for _, tld := range in.TLDs {
			if n, err := domainname.WithTLD(label, tld); err == nil {
				names = append(names, n.ASCII)
			}
		}
	}
	names = names[:min(len(names), *in.Limit*2, maxSuggestChecks)]
	answers := make([]*Suggestion, len(names))
	var g errgroup.Group
	g.SetLimit(suggestChecks)
	for i, name := range names {
		g.Go(func() error {
			cctx, cancel := context.WithTimeout(ctx, suggestCheckTime)
			defer cancel()
			a, err := reg.Check(cctx, name)
			if err == nil {
				answers[i] = &Suggestion{Domain: name, Available: a.Available, Premium: a.Premium, PriceCents: a.Cents, Currency: a.Currency, Reason: a.Reason}
			}
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := SuggestResult{Keywords: words, Suggestions: []Suggestion{}, Unavailable: []Suggestion{}, Unknown: []string{}, Checked: len(names)}
	for i, a := range answers {
		switch {
		case a == nil:
			res.Unknown = append(res.Unknown, names[i])
		case a.Available && len(res.Suggestions) < *in.Limit:
			res.Suggestions = append(res.Suggestions, *a)
		case !a.Available:
			res.Unavailable = append(res.Unavailable, *a)
		}
	}
	if len(res.Unknown) == len(names) {
		return nil, fmt.Errorf("the registry answered none of %d checks", len(names))
	}
	return res, nil
}
