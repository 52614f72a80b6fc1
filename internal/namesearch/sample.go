package namesearch

import (
	"math/rand/v2"
	"strings"
)

// SampleInventory returns n distinct, realistic domain names made of real
// English words ("cheapflightsnow.com", "petgroomingpro.com",
// "sunsetyoga.io"), for tests, benchmarks and a sandbox inventory. The
// same n and seed always give the same names in the same order, and with
// the same seed a longer list starts with a shorter one (the first 2,000
// of SampleInventory(3000, 1) are SampleInventory(2000, 1)). Every list
// starts with the example names. Labels combine one of 30 topics'
// words with modifiers and suffixes, a few with a hyphen or digits, on
// 47 TLDs, .com the commonest. A million names still come out
// whole; past a few million the combinations run out and fewer than n come
// back.
func SampleInventory(n int, seed int64) []string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6e616d6573656172)) // "namesear"
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	add := func(d string) {
		if !seen[d] && len(out) < n {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, d := range sampleAnchors {
		add(d)
	}
	for tries := 0; len(out) < n && tries < 20*n+1000; tries++ {
		add(sampleName(rng))
	}
	return out
}

// sampleAnchors are the names the issue uses as examples.
var sampleAnchors = []string{
	"budgetairfare.com", "cheapflightsnow.com", "petgroomingpro.com", "sunsetyoga.io", "bestcoffeeshop.com",
}

func sampleName(rng *rand.Rand) string {
	t := &sampleTopics[rng.IntN(len(sampleTopics))]
	core := pick(rng, t.cores)
	var words []string
	switch r := rng.IntN(100); {
	case r < 30: // cheapflights
		words = []string{pick(rng, t.modifiers), core}
	case r < 50: // petgroomingpro
		words = []string{core, pick(rng, sampleSuffixes)}
	case r < 65: // cheapflightsnow
		words = []string{pick(rng, t.modifiers), core, pick(rng, sampleSuffixes)}
	case r < 80: // sunsetyoga
		words = []string{pick(rng, sampleModifiers), core}
	case r < 90: // coffeeroasters
		words = []string{core, pick(rng, t.cores)}
	default: // getcheapflights
		words = []string{pick(rng, samplePrefixes), core}
	}
	sep := ""
	if rng.IntN(100) < 3 {
		sep = "-"
	}
	label := strings.Join(words, sep)
	if rng.IntN(100) < 3 {
		label += pick(rng, []string{"24", "247", "365", "360", "1", "4u"})
	}
	if len(label) > 63 {
		label = label[:63]
	}
	tld := pick(rng, sampleTLDs)
	if t.tld != "" && rng.IntN(100) < 15 {
		tld = t.tld
	}
	return label + "." + tld
}

func pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// sampleTLDs repeats a TLD to make it likelier.
var sampleTLDs = strings.Fields(`com com com com com com com com com com com com com com com com
	net net net org org io io io co co app dev ai shop store online xyz info biz club site tech us co.uk`)

var sampleModifiers = strings.Fields(`best top smart green happy urban local quick easy prime true bright golden blue
	royal fresh modern simple daily global first pure wild little big super sunset sunrise ocean mountain river city
	north south metro star silver red summit harbor maple cedar coastal lucky bold clear`)

var sampleSuffixes = strings.Fields(`now pro hub hq online direct zone spot place world center co club guide finder
	deals express works lab studio shop store plus central today experts group network source depot corner nation`)

var samplePrefixes = strings.Fields(`get my the go try buy find your all we`)

type sampleTopic struct {
	cores     []string // the topic's nouns, as they are written in a label
	modifiers []string // words that go before a core
	tld       string   // a TLD the topic sometimes takes
}

var sampleTopics = []sampleTopic{
	{strings.Fields("flights airfare airline travel trips vacation cruises tours getaway holidays hostel resorts hotels booking airfares"),
		strings.Fields("cheap budget discount lowcost bargain lastminute smart easy"), "travel"},
	{strings.Fields("petgrooming dogwalking petcare petsupplies dogtraining kennel vet pets dogs cats petsitting grooming"),
		strings.Fields("happy furry loyal pampered healthy best"), "pet"},
	{strings.Fields("coffee espresso cafe roasters beans brew latte coffeeshop coffeehouse barista"),
		strings.Fields("morning daily fresh artisan roasted organic best"), "cafe"},
	{strings.Fields("yoga dance fitness gym workout training meditation wellness bootcamp"),
		strings.Fields("power hot mindful strong fit active"), "fitness"},
	{strings.Fields("pizza bakery burger sushi tacos grill kitchen catering recipes bistro deli noodles"),
		strings.Fields("tasty hungry hot fresh homemade gourmet"), "kitchen"},
	{strings.Fields("homes realty property apartments condos housing rentals realestate mortgage estates"),
		strings.Fields("dream luxury affordable cozy prime new"), "realty"},
	{strings.Fields("law lawyer lawyers attorney legal lawfirm counsel injurylaw divorcelawyer"),
		strings.Fields("trusted honest expert local fair"), "law"},
	{strings.Fields("loans credit money invest wealth finance banking tax accounting insurance savings"),
		strings.Fields("smart quick easy fair secure personal"), "finance"},
	{strings.Fields("code software cloud hosting apps data security robot tech web server devops"),
		strings.Fields("fast secure smart open cloud instant"), "tech"},
	{strings.Fields("dental dentist clinic health doctor pharmacy therapy massage care medical"),
		strings.Fields("family gentle caring healthy"), "health"},
	{strings.Fields("beauty salon hair nails skincare makeup barber cosmetics spa"),
		strings.Fields("glam pretty chic luxe natural"), "beauty"},
	{strings.Fields("fashion apparel shoes boutique jewelry clothing style wear threads denim dresses"),
		strings.Fields("vintage chic urban trendy classic"), "fashion"},
	{strings.Fields("plumbing plumber roofing cleaning handyman electrician repair painting movers landscaping lawn"),
		strings.Fields("reliable affordable fast local expert"), ""},
	{strings.Fields("cars auto motors garage tires carwash autorepair trucks"),
		strings.Fields("used fast classic rapid"), "auto"},
	{strings.Fields("academy school tutor tutoring learn courses lessons college books"),
		strings.Fields("smart bright online clever"), "academy"},
	{strings.Fields("music guitar piano band beats records vinyl drums songs"),
		strings.Fields("loud electric acoustic indie"), "music"},
	{strings.Fields("photo photography camera pictures film video"),
		strings.Fields("instant candid vivid creative"), "photo"},
	{strings.Fields("bike cycling surf ski golf tennis hiking camping fishing soccer"),
		strings.Fields("extreme outdoor wild pro"), "bike"},
	{strings.Fields("wedding bride bridal party events flowers florist gifts cakes"),
		strings.Fields("perfect elegant lovely sweet"), "events"},
	{strings.Fields("baby kids toys nursery daycare"),
		strings.Fields("tiny little happy playful"), "baby"},
	{strings.Fields("games gaming gamer arcade play"),
		strings.Fields("epic retro pixel ultimate"), "games"},
	{strings.Fields("crypto bitcoin coin token blockchain wallet trading"),
		strings.Fields("secure instant smart"), "exchange"},
	{strings.Fields("solar energy power electric wind"),
		strings.Fields("clean green renewable bright"), "energy"},
	{strings.Fields("marketing media ads design branding agency social"),
		strings.Fields("creative digital bold viral"), "agency"},
	{strings.Fields("jobs careers hire hiring talent resume recruiting"),
		strings.Fields("dream remote better"), "jobs"},
	{strings.Fields("news times journal blog post review reviews"),
		strings.Fields("daily local honest weekly"), "news"},
	{strings.Fields("wine winery brewery beer cellar vineyard spirits"),
		strings.Fields("craft fine aged local"), "wine"},
	{strings.Fields("garden plants flowers seeds greenhouse"),
		strings.Fields("green organic wild urban"), "garden"},
	{strings.Fields("dating love match singles romance"),
		strings.Fields("true perfect sweet"), "dating"},
	{strings.Fields("shipping delivery storage courier freight moving"),
		strings.Fields("fast express rapid secure"), "delivery"},
}
