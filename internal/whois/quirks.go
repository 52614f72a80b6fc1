package whois

import "strings"

// quirk is how one registry differs from the layout families the parser
// reads, and the question form its server wants. Only what a recorded
// answer shows belongs here; each entry names the answer.
type quirk struct {
	// query is the question sent for name; nil sends the name itself.
	query func(name string) string
	// keys are keys this registry uses in a sense of its own.
	keys map[string]field
	// monthFirst reads ambiguous numeric dates as month/day/year.
	monthFirst bool
	// nsHandles says a name-server key's own value is a handle, the host
	// name being on the line below.
	nsHandles bool
}

// quirks are the registries that need one, by TLD.
var quirks = map[string]quirk{
	// DENIC answers a bare name with its status only; "-T dn,ace" asks for
	// the name servers and dates too (noterror/de_google.de.txt was
	// recorded that way).
	"de": {query: func(name string) string { return "-T dn,ace " + name }},
	// JPRS answers in Japanese unless "/e" follows the name (its banner says
	// so: corpus/jp/*.txt). The second-level names (co.jp, ne.jp, ac.jp,
	// go.jp) put the expiry date in [State]: "Connected (2024/06/30)"
	// (corpus/jp/google.co.jp.txt).
	"jp": {
		query: func(name string) string { return name + "/e" },
		keys:  map[string]field{"state": fieldStateUntil, "状態": fieldStateUntil},
	},
	// Dot TK prints dates month first: "Domain registered: 12/18/2001"
	// (its answer for google.tk in likexian/whois-parser; the corpus holds
	// no registered .tk answer since it is taken through the look-ups).
	"tk": {monthFirst: true},
	// MYNIC's "k [Primary Name Server]  NS1GOOG0.SER" is a handle; the
	// server is on the next line (its answer for google.my in
	// weppos/whois-parser; no .my answer is in the corpus now).
	"my": {nsHandles: true},
	// DK Hostmaster's "DNS:" is the domain itself, not a name server as at
	// RNIDS or NIC.PR (corpus/dk/google.dk.txt, corpus/rs/google.rs.txt).
	"dk": {keys: map[string]field{"dns": fieldNone}},
	// IIS and TCI give the status as "state:" (corpus/se/google.se.txt,
	// corpus/ru/yandex.ru.txt), a key that elsewhere is a contact's
	// province ("State: CA").
	"se":       {keys: stateIsStatus},
	"nu":       {keys: stateIsStatus},
	"ru":       {keys: stateIsStatus},
	"su":       {keys: stateIsStatus},
	"xn--p1ai": {keys: stateIsStatus},
}

// stateIsStatus is the key of IIS's and TCI's statuses.
var stateIsStatus = map[string]field{"state": fieldStatus}

// quirkOf is the quirk of domain's TLD, or none.
func quirkOf(domain string) quirk {
	return quirks[strings.ToLower(domain[strings.LastIndexByte(domain, '.')+1:])]
}

// question is what is sent to a registry's WHOIS server to ask about
// domain.
func question(domain string) string {
	if q := quirkOf(domain).query; q != nil {
		return q(domain)
	}
	return domain
}
