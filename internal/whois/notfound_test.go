package whois

import "testing"

// TestNotFoundLine covers the wordings of free names beyond the corpus's
// (lines from registries' and registrars' real answers) and lines of
// registered answers that must not read as "free".
func TestNotFoundLine(t *testing.T) {
	tests := []struct {
		line, domain string
		want         bool
	}{
		{`No records matching u34jedzcq.ax found.`, "u34jedzcq.ax", true},
		{`Sorry, but domain: "u34jedzcq.uz", not found in database`, "u34jedzcq.uz", true},
		{`U34JEDZCQ.CO.CA is available.`, "u34jedzcq.co.ca", true},
		{`% Unfortunately, No Results Were Found`, "u34jedzcq.co.pl", true},
		{`Key not found`, "u34jedzcq.eu.org", true},
		{`% No records found for object U34JEDZCQ.IN.UA`, "u34jedzcq.in.ua", true},
		{`Data not found. This domain is available for registration.`, "u34jedzcq.kg", true},
		{`Above domain name is not registered to KRNIC.`, "u34jedzcq.kr", true},
		{`Domain u34jedzcq.ai not registred.`, "u34jedzcq.ai", true},
		{`No domain records were found to match "u34jedzcq.coop"`, "u34jedzcq.coop", true},
		{`The domain u34jedzcq.im was not found.`, "u34jedzcq.im", true},
		{`This Domain is not available in our whois database`, "u34jedzcq.lk", true},
		{`The domain u34jedzcq.pr is not registered.`, "u34jedzcq.pr", true},
		{`Domain u34jedzcq.tm is available for purchase`, "u34jedzcq.tm", true},
		{`No matching domain name found.`, "u34jedzcq.com", true},
		{`%error 230 No Objects Found`, "u34jedzcq.ma", true},
		{`# Object not found`, "u34jedzcq.fr", true},
		{`We could not find the requested domain on our system`, "u34jedzcq.com", true},
		{`>>> Domain "u34jedzcq.tattoo" is available for registration`, "u34jedzcq.tattoo", true},
		{`Domain notused.com is not registered here.`, "other.com", true}, // a registrar naming the name its own way
		{`%ERROR:101: no entries found`, "x.cz", true},
		{`U34JEDZCQNOT FOUND`, "u34jedzcq.sn", true}, // the label glued to the verdict
		{`No match for "NO.COM".`, "no.com", true},   // a label that starts the wording
		{`Nothing found for this query.`, "no.kz", true},

		{`Status:	NOT AVAILABLE`, "google.be", false},
		{`available..........: 4.8.2020 10:15:55`, "google.fi", false},
		{`NOTE: FAILURE TO LOCATE A RECORD IN THE WHOIS DATABASE IS NOT INDICATIVE OF THE`, "google.my", false},
		{`A Web interface for the .EDU EDUCAUSE Whois Server is available at: http://whois.educause.edu`, "cornell.edu", false},
		{`Registrant Email: Please query the RDDS service of the Registrar of Record`, "google.jobs", false},
		{`Domain Name: GOOGLE.COM`, "google.com", false},
	}
	for _, tc := range tests {
		if got := notFoundLine(tc.line, tc.domain); got != tc.want {
			t.Errorf("notFoundLine(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
