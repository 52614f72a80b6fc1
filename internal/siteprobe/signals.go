package siteprobe

// A signal is a mark that a family of pages leaves: a phrase of its text, a
// host or path it loads from, a marker in its scripts. Needles are lower
// case and match on word boundaries: "dan.com" matches in
// "https://www.dan.com/buy" but not in "jordan.com".
type signal struct {
	in     where
	needle string
	// short signals are words that real sites also use; they count only
	// on a short page (fewer than shortPage words).
	short bool
}

// where says which part of a page a signal is looked for in.
type where int

const (
	// inText is the title and the visible text.
	inText where = iota
	// inURL is what the page loads (scripts, frames, images, stylesheets,
	// form targets) and where it sends the browser (meta refresh, script
	// redirects); for Probe, also the host an off-site redirect ended on.
	// Links and the text of inline scripts are not looked at: any site may
	// link to a marketplace, and a review site's page about one carries
	// its URLs in links and in the data of its scripts.
	inURL
	// inRedirect is where the page sends the browser, and only that.
	inRedirect
	// inScript is the source of the page's inline scripts (JavaScript, not
	// data blocks).
	inScript
	// inAttribute is the name of an attribute on any element.
	inAttribute
)

// families are the signal tables in the order Classify tries them, with
// the reason each gives.
var families = []struct {
	signals []signal
	reason  Reason
}{
	{parkingSignals, ReasonParked},
	{registrarDefaultSignals, ReasonRegistrarDefault},
	{serverDefaultSignals, ReasonServerDefault},
}

// parkingSignals mark pages of parking services and domain marketplaces:
// ads on the domain's traffic, or an offer to sell it.
var parkingSignals = []signal{
	{in: inURL, needle: "sedoparking.com"},               // Sedo's parking pages load their frames and scripts from here
	{in: inURL, needle: "sedo.com"},                      // Sedo's marketplace, where its for-sale banners lead
	{in: inURL, needle: "parkingcrew.net"},               // ParkingCrew (also behind Namecheap's parked pages): policy links, jsparkcaf.php
	{in: inURL, needle: "cdnpark.com"},                   // ParkingCrew's theme and asset host
	{in: inURL, needle: "bodis.com"},                     // Bodis parking
	{in: inURL, needle: "above.com"},                     // Above.com parking
	{in: inURL, needle: "parklogic.com"},                 // Parklogic parking
	{in: inURL, needle: "afternic.com"},                  // Afternic, GoDaddy's marketplace: for-sale landers
	{in: inURL, needle: "dan.com"},                       // Dan.com for-sale landers
	{in: inURL, needle: "undeveloped.com"},               // Dan.com's former name, still on old landers
	{in: inURL, needle: "hugedomains.com"},               // HugeDomains: the domain's page is their sales page, assets from static.hugedomains.com
	{in: inURL, needle: "buydomains.com"},                // BuyDomains, HugeDomains' sister marketplace
	{in: inURL, needle: "domainmarket.com"},              // DomainMarket sales pages
	{in: inURL, needle: "wsimg.com/parking-lander"},      // GoDaddy's parked-domain app (img1.wsimg.com/parking-lander/...)
	{in: inURL, needle: "/adsense/domains/caf.js"},       // Google AdSense for Domains, the ad feed only parking pages use
	{in: inScript, needle: "/adsense/domains/caf.js"},    // the same, loaded by the page's own loader script
	{in: inRedirect, needle: "/lander"},                  // GoDaddy's and others' parked root page: a script sending the browser to /lander
	{in: inScript, needle: "webpackjsonpparking-lander"}, // GoDaddy's parking app inlined in the page
	{in: inScript, needle: "lander_system"},              // GoDaddy's parking app: window.LANDER_SYSTEM="PW"
	{in: inScript, needle: "window.park"},                // newer parking landers: window.park = "<base64 page data>" and a loader script
	{in: inAttribute, needle: "data-adblockkey"},         // the Adblock Plus site key parking services put on <html> so their ads show
	{in: inText, needle: "this domain may be for sale"},  // Sedo and ParkingCrew banners
	{in: inText, needle: "buy this domain"},              // ParkingCrew, GoDaddy, Sedo for-sale banners
	{in: inText, needle: "domain is for sale"},           // "This domain is for sale": Dan.com, Afternic and most for-sale landers
	{in: inText, needle: "domain name is for sale"},      // marketplace landers: "The domain name example.com is for sale"
	{in: inText, needle: "parked free, courtesy of"},     // GoDaddy: "This web page is parked FREE, courtesy of GoDaddy.com"
	{in: inText, needle: "registered at namecheap"},      // Namecheap's parked page: "example.com - Registered at Namecheap.com"
}

// registrarDefaultSignals mark the placeholder a registrar or a hosting
// company serves until the owner puts a site up.
var registrarDefaultSignals = []signal{
	{in: inText, needle: "future home of"},                  // 101domain, GoDaddy: "Future home of something quite cool"
	{in: inText, needle: "default web site page"},           // cPanel's default page (defaultwebpage.cgi)
	{in: inURL, needle: "/cgi-sys/defaultwebpage.cgi"},      // cPanel: an empty account's page redirects there
	{in: inText, needle: "domain default page"},             // Plesk: "Domain Default page"
	{in: inText, needle: "web server's default page"},       // Plesk Obsidian's default page
	{in: inText, needle: "server default page"},             // Media Temple's Plesk servers: "Server Default Page"
	{in: inText, needle: "parked at loopia"},                // Loopia: "This domain has been purchased and parked by a customer of Loopia"
	{in: inText, needle: "coming soon", short: true},        // registrar and site-builder placeholders; shops also say it of products
	{in: inText, needle: "launching soon", short: true},     // site-builder placeholders
	{in: inText, needle: "under construction", short: true}, // placeholders; real sites say it of a section
}

// serverDefaultSignals mark the page a web server shows once installed,
// before anything is published on it.
var serverDefaultSignals = []signal{
	{in: inText, needle: "it works!", short: true},                     // Apache httpd's docroot index.html
	{in: inText, needle: "apache2 ubuntu default page"},                // Debian and Ubuntu's Apache package
	{in: inText, needle: "apache2 debian default page"},                // Debian's Apache package
	{in: inText, needle: "test page for the apache http server"},       // Red Hat, CentOS, Fedora and InterWorx Apache
	{in: inText, needle: "welcome to nginx!", short: true},             // nginx's html/index.html
	{in: inText, needle: "iis windows server", short: true},            // IIS 8 and later iisstart.htm (title; the rest is an image)
	{in: inText, needle: "internet information services", short: true}, // older IIS welcome pages
}
