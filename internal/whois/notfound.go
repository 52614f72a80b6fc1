package whois

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// notFoundPhrases start the line in which a registry says it has no such
// domain, once notFoundLine has tidied it (lower case, comment marks, the
// domain itself, quotes and brackets gone), in the wordings of the
// registries and their languages.
var notFoundPhrases = []string{
	"no match", "no matching record", "no matching objects found", "not found", "no found", "nothing found",
	"no entries found", "no entry found", "no data found", "no data was found", "no object found",
	"no such domain", "object does not exist", "the queried object does not exist",
	"domain not found", "domain is not registered", "domain name does not exist", "not registered",
	"the domain name is not registered", "the domain has not been registered", "this domain name has not been registered",
	"the requested domain was not found", "we do not have an entry in our database matching your query",
	"there is no information available on the domain", "no information available about domain name",
	"invalid query or domain name not known", "this query returned 0 objects", "this domain is not available in",
	"no records", "no results", "unfortunately, no results", "no domain records", "no objects found",
	"no matching", "could not find", "we could not find",
	"not available for registration", "not available for second level registration",
	"no se encontro el objeto",       // NIC México: "No_Se_Encontro_El_Objeto/Object_Not_Found"
	"no existe",                      // NIC Chile: "<name>: no existe"
	"nincs talalat", "nincs találat", // .hu: "Nincs talalat / No match"
}

// notFoundLines are whole lines (tidied the same way) that say so.
var notFoundLines = map[string]bool{"is free": true, "available": true}

// notFoundStatuses are status values that say the name is not registered
// ("Status: AVAILABLE", "query_status: 220 Available").
var notFoundStatuses = map[string]bool{
	"available": true, "free": true, "not registered": true, "no object found": true, "not found": true,
}

var (
	// notRegistered is a sentence about the name, which notFoundLine has
	// taken out: "The domain <name> was not found", "Domain <name> not
	// registred", "Sorry, but domain: "<name>", not found in database",
	// "Key not found".
	notRegistered = regexp.MustCompile(`^(sorry,? but |unfortunately,? )?(the |above )?(requested )?(domain( name)?|object|key|data|entry|record)?:?[\s,]*(was |is |has been )?not (found|registered|registred|known)\b`)
	// isFree is "<name> is available", "Domain <name> is free".
	isFree = regexp.MustCompile(`^(the )?(domain( name)? )?is (available|free)\b`)
	// errorCode is the "ERROR:101:" RIPE-style servers put first.
	errorCode = regexp.MustCompile(`^error:?\s*(\d+:?)?\s*`)
	// lineNoise is what surrounds a domain in the sentence about it.
	lineNoise = strings.NewReplacer(`"`, " ", "'", " ", "[", " ", "]", " ", "(", " ", ")", " ", "_", " ", "!", " ")
)

// notFoundLine reports whether one line of an answer about domain says the
// registry holds no such domain. Comment lines count: several registries
// say it in a "%" line.
func notFoundLine(line, domain string) bool {
	l := strings.ToLower(strings.TrimLeft(line, "%#*>: \t"))
	l = errorCode.ReplaceAllString(l, "")
	if domain != "" {
		l = strings.ReplaceAll(l, strings.ToLower(domain), " ")
	}
	words := strings.Fields(lineNoise.Replace(l))
	words = slices.DeleteFunc(words, isDomainName) // the name, however the server spells it
	l = strings.Trim(strings.Join(words, " "), " :.")
	if notFoundText(l) {
		return true
	}
	// NIC Sénégal glues the label to its verdict:
	// "AJSFGASFREWQWERYGSDAJ785-58936712NOT FOUND"
	// (corpus/sn/ajsfgasfrewqwerygsdaj785-58936712.sn.txt).
	if label, _, ok := strings.Cut(strings.ToLower(domain), "."); ok && label != "" {
		if rest, ok := strings.CutPrefix(l, label); ok && rest != "" && isLetter(rest[0]) {
			return notFoundText(rest)
		}
	}
	return false
}

// notFoundText reports whether a tidied line is one of the wordings.
func notFoundText(l string) bool {
	if notFoundLines[l] || notRegistered.MatchString(l) || isFree.MatchString(l) {
		return true
	}
	for _, p := range notFoundPhrases {
		if strings.HasPrefix(l, p) && (len(l) == len(p) || !isLetter(l[len(p)])) {
			return true
		}
	}
	return false
}

// notFoundStatus reports whether a status value says the name is free
// ("AVAILABLE (No match for domain …)", "220 Available") or can be no
// one's ("Prohibited String - Object Cannot Be Registered").
func notFoundStatus(v string) bool {
	v = strings.ToLower(strings.TrimLeft(strings.TrimSpace(v), "0123456789 "))
	if strings.Contains(v, "cannot be registered") {
		return true
	}
	v, _, _ = strings.Cut(v, "(")
	return notFoundStatuses[strings.Join(strings.Fields(v), " ")]
}

// isDomainName reports a word that is a host name ("example.com,"), so a
// sentence about a name reads alike for every name.
func isDomainName(w string) bool {
	w = strings.Trim(w, ",.:;")
	return strings.Contains(w, ".") && strings.ContainsFunc(w, unicode.IsLetter) &&
		!strings.ContainsFunc(w, func(r rune) bool { return !(r == '.' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) })
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' }
