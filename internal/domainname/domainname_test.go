package domainname

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	label63 = strings.Repeat("a", 63)
	label64 = strings.Repeat("a", 64)
	// name253 and name254 are a63.b63.c63.d57.com and the same with d58.
	name253 = label63 + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	name254 = label63 + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 58) + ".com"
	// idnLabel57 encodes to the 63 octets of aLabel63, idnLabel58 to 64.
	idnLabel57 = strings.Repeat("ü", 57)
	idnLabel58 = strings.Repeat("ü", 58)
	aLabel63   = "xn--tda" + strings.Repeat("a", 56)
)

var parseTests = []struct {
	name  string
	input string
	want  Name
}{
	{
		name:  "trim, trailing dot and case",
		input: "  ExAmple.COM. ",
		want:  Name{ASCII: "example.com", Unicode: "example.com", TLD: "com", Registrable: "example.com", Label: "example"},
	},
	{
		name:  "IDN in Unicode form",
		input: "Bücher.de",
		want:  Name{ASCII: "xn--bcher-kva.de", Unicode: "bücher.de", TLD: "de", Registrable: "xn--bcher-kva.de", Label: "xn--bcher-kva"},
	},
	{
		name:  "IDN as A-label",
		input: "xn--bcher-kva.de",
		want:  Name{ASCII: "xn--bcher-kva.de", Unicode: "bücher.de", TLD: "de", Registrable: "xn--bcher-kva.de", Label: "xn--bcher-kva"},
	},
	{
		name:  "A-label in upper case",
		input: "XN--BCHER-KVA.DE.",
		want:  Name{ASCII: "xn--bcher-kva.de", Unicode: "bücher.de", TLD: "de", Registrable: "xn--bcher-kva.de", Label: "xn--bcher-kva"},
	},
	{
		name:  "full-width letters and dot",
		input: "ＥＸＡＭＰＬＥ．ｃｏｍ",
		want:  Name{ASCII: "example.com", Unicode: "example.com", TLD: "com", Registrable: "example.com", Label: "example"},
	},
	{
		name:  "ideographic full stop",
		input: "例え。jp",
		want:  Name{ASCII: "xn--r8jz45g.jp", Unicode: "例え.jp", TLD: "jp", Registrable: "xn--r8jz45g.jp", Label: "xn--r8jz45g"},
	},
	{
		name:  "Cyrillic name and TLD",
		input: "пример.рф",
		want:  Name{ASCII: "xn--e1afmkfd.xn--p1ai", Unicode: "пример.рф", TLD: "xn--p1ai", Registrable: "xn--e1afmkfd.xn--p1ai", Label: "xn--e1afmkfd"},
	},
	{
		name:  "sharp s kept (non-transitional)",
		input: "ß.de",
		want:  Name{ASCII: "xn--zca.de", Unicode: "ß.de", TLD: "de", Registrable: "xn--zca.de", Label: "xn--zca"},
	},
	{
		name:  "right-to-left label",
		input: "שלום.com",
		want:  Name{ASCII: "xn--9dbne9b.com", Unicode: "שלום.com", TLD: "com", Registrable: "xn--9dbne9b.com", Label: "xn--9dbne9b"},
	},
	{
		name:  "Catalan middle dot between two l",
		input: "l·l.cat",
		want:  Name{ASCII: "xn--ll-0ea.cat", Unicode: "l·l.cat", TLD: "cat", Registrable: "xn--ll-0ea.cat", Label: "xn--ll-0ea"},
	},
	{
		name:  "Katakana middle dot with Katakana",
		input: "ア・イ.jp",
		want:  Name{ASCII: "xn--ccke4x.jp", Unicode: "ア・イ.jp", TLD: "jp", Registrable: "xn--ccke4x.jp", Label: "xn--ccke4x"},
	},
	{
		name:  "Hebrew geresh after a Hebrew letter",
		input: "א׳.com",
		want:  Name{ASCII: "xn--4db4e.com", Unicode: "א׳.com", TLD: "com", Registrable: "xn--4db4e.com", Label: "xn--4db4e"},
	},
	{
		name:  "digits-only label below the TLD",
		input: "123.com",
		want:  Name{ASCII: "123.com", Unicode: "123.com", TLD: "com", Registrable: "123.com", Label: "123"},
	},
	{
		name:  "label of 63",
		input: label63 + ".com",
		want:  Name{ASCII: label63 + ".com", Unicode: label63 + ".com", TLD: "com", Registrable: label63 + ".com", Label: label63},
	},
	{
		name:  "IDN label of 63 in ASCII form",
		input: idnLabel57 + ".de",
		want:  Name{ASCII: aLabel63 + ".de", Unicode: idnLabel57 + ".de", TLD: "de", Registrable: aLabel63 + ".de", Label: aLabel63},
	},
	{
		name:  "name of 253",
		input: name253,
		want:  Name{ASCII: name253, Unicode: name253, TLD: "com", Registrable: strings.Repeat("d", 57) + ".com", Label: strings.Repeat("d", 57)},
	},
	{
		name:  "multi-level suffix",
		input: "www.example.co.uk",
		want:  Name{ASCII: "www.example.co.uk", Unicode: "www.example.co.uk", TLD: "co.uk", Registrable: "example.co.uk", Label: "example"},
	},
	{
		name:  "private suffix falls back to ICANN",
		input: "foo.blogspot.com",
		want:  Name{ASCII: "foo.blogspot.com", Unicode: "foo.blogspot.com", TLD: "com", Registrable: "blogspot.com", Label: "blogspot"},
	},
	{
		name:  "private suffix herokuapp.com",
		input: "myapp.herokuapp.com",
		want:  Name{ASCII: "myapp.herokuapp.com", Unicode: "myapp.herokuapp.com", TLD: "com", Registrable: "herokuapp.com", Label: "herokuapp"},
	},
	{
		name:  "private suffix itself is registrable",
		input: "blogspot.com",
		want:  Name{ASCII: "blogspot.com", Unicode: "blogspot.com", TLD: "com", Registrable: "blogspot.com", Label: "blogspot"},
	},
	{
		name:  "exception to a wildcard rule",
		input: "www.ck",
		want:  Name{ASCII: "www.ck", Unicode: "www.ck", TLD: "ck", Registrable: "www.ck", Label: "www"},
	},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.input)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.input, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.input, d)
			}
		})
	}
}

var parseErrorTests = []struct {
	name    string
	input   string
	want    string // the Reason
	wantErr error  // the sentinel, if any
}{
	{name: "empty", input: "", want: "is empty"},
	{name: "only spaces", input: " \t ", want: "is empty"},
	{name: "only a dot", input: ".", want: "does not contain a domain name"},
	{name: "too long to look at", input: strings.Repeat("a", 2000), want: "is too long to be a domain name"},
	{name: "invalid UTF-8", input: "\xff.com", want: "is not valid UTF-8 text"},
	{name: "space inside", input: "exa mple.com", want: "contains a space"},
	{name: "no-break space inside", input: "exa\u00a0mple.com", want: "contains a space"},
	{name: "tab inside", input: "exa\tmple.com", want: "contains white space (U+0009)"},
	{name: "control character", input: "exa\x00mple.com", want: "contains a control character (U+0000)"},
	{name: "soft hyphen", input: "exam\u00adple.com", want: "contains an invisible character (U+00AD)"},
	{name: "zero-width space", input: "a\u200bb.com", want: "contains an invisible character (U+200B)"},
	{name: "variation selector", input: "a\ufe0f.com", want: "contains an invisible character (U+FE0F)"},
	{
		name:  "URL",
		input: "https://example.com/x",
		want:  `looks like a URL; remove "https://" and "/x" and give the domain name only`,
	},
	{
		name:  "URL with upper case host",
		input: "https://Example.com/path",
		want:  `looks like a URL; remove "https://" and "/path" and give the domain name only`,
	},
	{
		name:  "URL with every part",
		input: "http://user:pw@example.com:8080/x?y#z",
		want:  `looks like a URL; remove "http://", "user:pw@", ":8080" and "/x?y#z" and give the domain name only`,
	},
	{name: "scheme with one slash", input: "http:/example.com", want: `looks like a URL; remove "http:/" and give the domain name only`},
	{name: "scheme with backslashes", input: `https:\\example.com`, want: `looks like a URL; remove "https:\\\\" and give the domain name only`},
	{name: "scheme only", input: "https://", want: "does not contain a domain name"},
	{name: "port", input: "example.com:80", want: `contains a port number; remove ":80" and give the domain name only`},
	{name: "port after a single label", input: "localhost:8080", want: `contains a port number; remove ":8080" and give the domain name only`},
	{name: "path", input: "example.com/x", want: `contains a path; remove "/x" and give the domain name only`},
	{name: "query", input: "example.com?q=1", want: `contains a query string; remove "?q=1" and give the domain name only`},
	{name: "fragment", input: "example.com#top", want: `contains a fragment; remove "#top" and give the domain name only`},
	{name: "e-mail address", input: "bob@example.com", want: `looks like an e-mail address; remove "bob@" and give the domain name only`},
	{name: "port and path", input: "example.com:80/x", want: `looks like a URL; remove ":80" and "/x" and give the domain name only`},
	{name: "IPv4", input: "192.168.0.1", want: "is an IP address, not a domain name"},
	{name: "IPv4 with trailing dot", input: "192.168.0.1.", want: "is an IP address, not a domain name"},
	{name: "IPv6 in brackets", input: "[::1]", want: "is an IP address, not a domain name"},
	{name: "IPv6 bare", input: "2001:db8::1", want: "is an IP address, not a domain name"},
	{name: "IP and port", input: "1.2.3.4:80", want: `contains the IP address "1.2.3.4"; give a domain name instead`},
	{name: "IPv6 URL", input: "http://[::1]:8080/", want: `contains the IP address "::1"; give a domain name instead`},
	{name: "brackets around a name", input: "[example.com]", want: `contains "["; use only letters, digits, hyphens and dots`},
	{name: "colon not a port", input: "example.com:http", want: `contains ":"; use only letters, digits, hyphens and dots`},
	{name: "underscore", input: "a_b.com", want: `contains "_"; use only letters, digits, hyphens and dots`},
	{name: "wildcard", input: "*.example.com", want: `contains "*"; use only letters, digits, hyphens and dots`},
	{name: "heart", input: "i❤.com", want: `contains the symbol "❤"; emoji and symbols are not allowed in domain names`},
	{name: "heart on ws", input: "i❤.ws", want: `contains the symbol "❤"; emoji and symbols are not allowed in domain names`},
	{name: "emoji", input: "😀.com", want: `contains the symbol "😀"; emoji and symbols are not allowed in domain names`},
	{name: "emoji as A-label", input: "xn--i-7iq.ws", want: `label "xn--i-7iq" contains the symbol "❤"; emoji and symbols are not allowed in domain names`},
	{name: "trade mark sign", input: "acme™.com", want: `contains the symbol "™"; emoji and symbols are not allowed in domain names`},
	{name: "punctuation", input: "¡hola.com", want: `label "¡hola" contains "¡" (U+00A1), which is not allowed in domain names`},
	{name: "Unicode hyphen", input: "ab‐c.com", want: `label "ab‐c" contains "‐" (U+2010), which is not allowed in domain names`},
	{name: "enclosing keycap", input: "1\u20e3.com", want: `label "1⃣" contains "⃣" (U+20E3), which is not allowed in domain names`},
	{name: "old Hangul jamo", input: "a\u1100.com", want: `label "aᄀ" contains "ᄀ" (U+1100), which is not allowed in domain names`},
	{name: "middle dot out of context", input: "a·b.cat", want: `label "a·b" contains "·" (U+00B7) in a position where it is not allowed`},
	{name: "Katakana middle dot without Japanese", input: "a・b.jp", want: `label "a・b" contains "・" (U+30FB) in a position where it is not allowed`},
	{name: "Hebrew geresh after a Latin letter", input: "a׳.com", want: `label "a׳" contains "׳" (U+05F3) in a position where it is not allowed`},
	{name: "Arabic-Indic and extended Arabic-Indic digits mixed", input: "ب٣۳.com", want: `label "ب٣۳" contains "٣" (U+0663) in a position where it is not allowed`},
	{name: "leading combining mark", input: "\u0301ab.com", want: "label \"\u0301ab\" starts with a combining mark"},
	{name: "leading combining mark in an A-label", input: "xn--ab-7tb.com", want: "label \"xn--ab-7tb\" starts with a combining mark"},
	{name: "zero-width joiner out of context", input: "a\u200db.com", want: "uses a zero-width joiner or non-joiner where it is not allowed"},
	{name: "mixed directions", input: "aשלום.com", want: "mixes right-to-left and left-to-right text in a way domain names do not allow (RFC 5893)"},
	{name: "empty label", input: "a..com", want: "contains an empty label (two dots in a row, or a dot at the start)"},
	{name: "leading dot", input: ".example.com", want: "contains an empty label (two dots in a row, or a dot at the start)"},
	{name: "two trailing dots", input: "example.com..", want: "contains an empty label (two dots in a row, or a dot at the start)"},
	{name: "leading hyphen", input: "-example.com", want: `label "-example" starts with a hyphen`},
	{name: "trailing hyphen", input: "example-.com", want: `label "example-" ends with a hyphen`},
	{name: "hyphens in positions 3 and 4", input: "ab--cd.com", want: `label "ab--cd" has "--" in the third and fourth positions, which is reserved for xn-- labels`},
	{name: "hyphens in positions 3 and 4 counted in characters", input: "bü--cd.com", want: `label "bü--cd" has "--" in the third and fourth positions, which is reserved for xn-- labels`},
	{name: "invalid punycode", input: "xn--zz.com", want: `label "xn--zz" is not valid punycode`},
	{name: "punycode of plain ASCII", input: "xn--abc-.com", want: `label "xn--abc-" is not valid punycode`},
	{name: "empty punycode", input: "xn--.com", want: `label "xn--" is not valid punycode`},
	{name: "A-label of a decomposed name", input: "xn--bucher-xyd.de", want: "label \"xn--bucher-xyd\" decodes to \"bu\u0308cher\", which is not in normalised form"},
	{name: "A-label of an upper-case name", input: "xn--bcher-2pa.de", want: `label "xn--bcher-2pa" decodes to "bÜcher", which is not in normalised form`},
	{name: "A-label with punctuation", input: "xn--hola-zea.com", want: `label "xn--hola-zea" contains "¡" (U+00A1), which is not allowed in domain names`},
	{name: "A-label with a middle dot out of context", input: "xn--ab-0ea.cat", want: `label "xn--ab-0ea" contains "·" (U+00B7) in a position where it is not allowed`},
	{name: "label of 64", input: label64 + ".com", want: fmt.Sprintf("label %q is 64 characters long; the limit is 63", label64)},
	{name: "IDN label of 64 in ASCII form", input: idnLabel58 + ".de", want: `label "` + strings.Repeat("ü", 50) + `"… is 64 characters long in its ASCII (xn--) form; the limit is 63`},
	{name: "name of 254", input: name254, want: "is 254 characters long; the limit is 253"},
	{name: "IDN name of 254 in ASCII form", input: "ü." + name253[len("xn--tda"):], want: "is 254 characters long in its ASCII (xn--) form; the limit is 253"},
	{name: "single label", input: "localhost", want: `is a single label; give a full domain name such as "example.com"`},
	{name: "numeric TLD", input: "example.123", want: `top-level domain "123" is all digits`},
	{name: "not an IP address", input: "1.2.3.4.5", want: `top-level domain "5" is all digits`},
	{name: "unknown TLD", input: "example.notarealtld", want: `unknown top-level domain "notarealtld"`, wantErr: ErrUnknownTLD},
	{name: "special-use TLD", input: "printer.local", want: `unknown top-level domain "local"`, wantErr: ErrUnknownTLD},
	{name: "public suffix", input: "co.uk", want: "is a public suffix, not a registrable name", wantErr: ErrPublicSuffix},
	{name: "TLD alone", input: "com", want: "is a public suffix, not a registrable name", wantErr: ErrPublicSuffix},
	{name: "public suffix by wildcard", input: "example.ck", want: "is a public suffix, not a registrable name", wantErr: ErrPublicSuffix},
}

func TestParseError(t *testing.T) {
	for _, tt := range parseErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.input)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error %q", tt.input, got, tt.want)
			}
			checkError(t, err, tt.input, tt.want, tt.wantErr)
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{
			name: "short input",
			err:  &Error{Input: "exa mple.com", Reason: "contains a space"},
			want: `"exa mple.com": contains a space`,
		},
		{
			name: "control characters escaped",
			err:  &Error{Input: "a\x00\u202eb", Reason: "r"},
			want: `"a\x00\u202eb": r`,
		},
		{
			name: "long input cut on a character boundary",
			err:  &Error{Input: strings.Repeat("é", 80), Reason: "r"},
			want: `"` + strings.Repeat("é", 50) + `"…: r`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() mismatch (-want +got):\n-%s\n+%s", tt.want, got)
			}
		})
	}
}

func TestIsPlainLabelTLD(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  bool
	}{
		{name: "label.tld", input: "example.com", want: true},
		{name: "IDN label.tld", input: "bücher.de", want: true},
		{name: "multi-level suffix", input: "example.co.uk", want: false},
		{name: "subdomain", input: "www.example.com", want: false},
		{name: "below a private suffix", input: "foo.blogspot.com", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.input).IsPlainLabelTLD(); got != tt.want {
				t.Errorf("Parse(%q).IsPlainLabelTLD() = %v, want %v", tt.input, got, tt.want)
			}
		})
	}
}

func TestIsRegistrable(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  bool
	}{
		{name: "label.tld", input: "example.com", want: true},
		{name: "multi-level suffix", input: "example.co.uk", want: true},
		{name: "subdomain", input: "www.example.co.uk", want: false},
		{name: "below a private suffix", input: "myapp.herokuapp.com", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.input).IsRegistrable(); got != tt.want {
				t.Errorf("Parse(%q).IsRegistrable() = %v, want %v", tt.input, got, tt.want)
			}
		})
	}
}

func TestWithTLD(t *testing.T) {
	tests := []struct {
		name  string
		label string
		tld   string
		want  Name
	}{
		{
			name:  "ASCII",
			label: "example", tld: "net",
			want: Name{ASCII: "example.net", Unicode: "example.net", TLD: "net", Registrable: "example.net", Label: "example"},
		},
		{
			name:  "IDN label",
			label: "bücher", tld: "de",
			want: Name{ASCII: "xn--bcher-kva.de", Unicode: "bücher.de", TLD: "de", Registrable: "xn--bcher-kva.de", Label: "xn--bcher-kva"},
		},
		{
			name:  "A-label",
			label: "xn--bcher-kva", tld: "de",
			want: Name{ASCII: "xn--bcher-kva.de", Unicode: "bücher.de", TLD: "de", Registrable: "xn--bcher-kva.de", Label: "xn--bcher-kva"},
		},
		{
			name:  "multi-level suffix",
			label: "example", tld: "co.uk",
			want: Name{ASCII: "example.co.uk", Unicode: "example.co.uk", TLD: "co.uk", Registrable: "example.co.uk", Label: "example"},
		},
		{
			name:  "Unicode TLD",
			label: "example", tld: "рф",
			want: Name{ASCII: "example.xn--p1ai", Unicode: "example.рф", TLD: "xn--p1ai", Registrable: "example.xn--p1ai", Label: "example"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WithTLD(tt.label, tt.tld)
			if err != nil {
				t.Fatalf("WithTLD(%q, %q) error: %v", tt.label, tt.tld, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("WithTLD(%q, %q) mismatch (-want +got):\n%s", tt.label, tt.tld, d)
			}
		})
	}
}

func TestWithTLDError(t *testing.T) {
	tests := []struct {
		name    string
		label   string
		tld     string
		want    string
		wantErr error
	}{
		{name: "label with a dot", label: "www.example", tld: "com", want: `label "www.example" contains a dot`},
		{name: "label with an ideographic full stop", label: "www。example", tld: "com", want: `label "www。example" contains a dot`},
		{name: "empty label", label: "", tld: "com", want: "contains an empty label (two dots in a row, or a dot at the start)"},
		{name: "private suffix", label: "example", tld: "blogspot.com", want: `"blogspot.com" is not a public suffix`},
		{name: "unknown TLD", label: "example", tld: "notarealtld", want: `unknown top-level domain "notarealtld"`, wantErr: ErrUnknownTLD},
		{name: "invalid label", label: "ex_ample", tld: "com", want: `contains "_"; use only letters, digits, hyphens and dots`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WithTLD(tt.label, tt.tld)
			if err == nil {
				t.Fatalf("WithTLD(%q, %q) = %+v, want error %q", tt.label, tt.tld, got, tt.want)
			}
			checkError(t, err, tt.label+"."+tt.tld, tt.want, tt.wantErr)
		})
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{name: "name server", input: "ns1.example.net", want: "ns1.example.net"},
		{name: "trim, trailing dot and case", input: " NS1.Example.NET. ", want: "ns1.example.net"},
		{name: "IDN", input: "ns1.bücher.de", want: "ns1.xn--bcher-kva.de"},
		{name: "unknown TLD", input: "ns1.example.notarealtld", want: "ns1.example.notarealtld"},
		{name: "public suffix", input: "co.uk", want: "co.uk"},
		{name: "name of 253", input: name253, want: name253},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHost(tt.input)
			if err != nil {
				t.Fatalf("ParseHost(%q) error: %v", tt.input, err)
			}
			if got != tt.want {
				t.Errorf("ParseHost(%q) mismatch (-want +got):\n-%s\n+%s", tt.input, tt.want, got)
			}
		})
	}
}

func TestParseHostError(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{name: "single label", input: "localhost", want: `is a single label; give a full domain name such as "example.com"`},
		{name: "TLD alone", input: "net", want: `is a single label; give a full domain name such as "example.com"`},
		{name: "numeric TLD", input: "ns1.example.123", want: `top-level domain "123" is all digits`},
		{name: "underscore", input: "ns_1.example.net", want: `contains "_"; use only letters, digits, hyphens and dots`},
		{name: "IP address", input: "192.0.2.1", want: "is an IP address, not a domain name"},
		{name: "port", input: "ns1.example.net:53", want: `contains a port number; remove ":53" and give the domain name only`},
		{name: "label of 64", input: "ns1." + label64 + ".net", want: fmt.Sprintf("label %q is 64 characters long; the limit is 63", label64)},
		{name: "name of 254", input: name254, want: "is 254 characters long; the limit is 253"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHost(tt.input)
			if err == nil {
				t.Fatalf("ParseHost(%q) = %q, want error %q", tt.input, got, tt.want)
			}
			checkError(t, err, tt.input, tt.want, nil)
		})
	}
}

// checkError fails tb unless err is an *Error for input with the reason
// want, wrapping the sentinel wantErr (or neither sentinel when it is nil).
func checkError(tb testing.TB, err error, input, want string, wantErr error) {
	tb.Helper()
	var e *Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Input != input {
		tb.Errorf("Error.Input mismatch (-want +got):\n-%q\n+%q", input, e.Input)
	}
	if e.Reason != want {
		tb.Errorf("Error.Reason mismatch (-want +got):\n-%s\n+%s", want, e.Reason)
	}
	for _, sentinel := range []error{ErrUnknownTLD, ErrPublicSuffix} {
		if got, want := errors.Is(err, sentinel), sentinel == wantErr; got != want {
			tb.Errorf("errors.Is(err, %v) = %v, want %v", sentinel, got, want)
		}
	}
}

// mustParse returns Parse(input) and stops the test if it fails.
func mustParse(tb testing.TB, input string) Name {
	tb.Helper()
	n, err := Parse(input)
	if err != nil {
		tb.Fatalf("Parse(%q) error: %v", input, err)
	}
	return n
}

func TestParseQuery(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"mystartup", "mystartup.com"},
		{"My Startup", "mystartup.com"},
		{"  MyStartup.IO ", "mystartup.io"},
		{"my startup.io", "mystartup.io"},
		{"bücher", "xn--bcher-kva.com"},
		{"bücher。de", "xn--bcher-kva.de"},
		{"www.example.co.uk", "www.example.co.uk"},
	} {
		n, err := ParseQuery(tt.in, "com")
		if err != nil || n.ASCII != tt.want {
			t.Errorf("ParseQuery(%q) = %q, %v; want %q", tt.in, n.ASCII, err, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", "my_startup", "foo.notatld"} {
		if _, err := ParseQuery(bad, "com"); err == nil {
			t.Errorf("ParseQuery(%q) = ok, want an error", bad)
		}
	}
}
