package whois

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domaind/domaind/internal/domaininfo"
)

// corpusCase is one answer under testdata/corpus (see testdata/SOURCES.md)
// and what it says, read from the file by hand: the registrar, name
// servers, dates and statuses it publishes (empty where it gives none),
// or that the name is not registered.
type corpusCase struct {
	file      string // under testdata/corpus; the name asked about is the file's name less ".txt"
	notFound  bool
	registrar string
	ns        string // space-separated, in the answer's order, lower case
	created   string // RFC 3339, or a date (midnight UTC)
	expires   string
	statuses  []string // RDAP's spelling
}

// google4 are the name servers most of Google's names list.
const google4 = "ns1.google.com ns2.google.com ns3.google.com ns4.google.com"

// serverRenewProhibited completes the statuses of whois_test.go.
const serverRenewProhibited = "server renew prohibited"

// corpusCases read by hand, in the files' order. Some calls to make:
// "before 1 January 1996" is read as that day; a registrar given by its
// handle only (CZ.NIC's "REG-MARKMONITOR") is that handle, while a
// handle followed by the registrar's name (SK-NIC, UA) is the name; JPRS's
// second-level names give their expiry in "[State] Connected (date)";
// times without a zone are UTC.
var corpusCases = []corpusCase{
	{file: "ac/google.ac.txt", registrar: "MarkMonitor, Inc.", ns: "ns1.google.com ns4.google.com ns3.google.com ns2.google.com", created: "2006-04-03T13:38:02Z", expires: "2020-04-03T07:00:00Z", statuses: markMonitorLocks},
	{file: "ac/likexian-have-no-money-to-register.ac.txt", notFound: true},
	{file: "aero/google.aero.txt", registrar: "101domain GRS Limited", ns: "ns1.101domain.com ns2.101domain.com", created: "2021-11-11T09:40:23Z", expires: "2022-11-11T09:40:23Z", statuses: []string{clientTransferProhibited}},
	{file: "aero/likexian-have-no-money-to-register.aero.txt", notFound: true},
	{file: "ar/afip.gob.ar.txt", registrar: "nicar", ns: "ns1.afip.gov.ar ns2.afip.gov.ar", created: "1997-05-26", expires: "2019-05-26"},
	{file: "asia/business.asia.txt", registrar: "DotAsia Organisation", ns: "ns1.domaindiscount24.net ns2.domaindiscount24.net ns3.domaindiscount24.net", created: "2008-08-25T10:34:13Z", expires: "2020-08-25T10:34:13Z", statuses: []string{"ok"}},
	{file: "asia/likexian-have-no-money-to-register.asia.txt", notFound: true},
	{file: "at/0wnz.at.txt", registrar: "NETPLANET GmbH", ns: "a.ns.0wnz.at b.ns.0wnz.at c.ns.0wnz.at d.ns.0wnz.at"},
	{file: "at/samsung.at.txt", registrar: "ANEXIA Internetdienstleistungs GmbH", ns: "anexia.fifthns.com anexia.firstns.cc anexia.fourthns.systems anexia.secondns.at anexia.thirdns.de"},
	{file: "at/u34jedzcq.at.txt", notFound: true},
	{file: "au/google.com.au.txt", registrar: "MarkMonitor Corporate Services Inc", ns: google4, statuses: []string{clientDeleteProhibited, clientUpdateProhibited, serverDeleteProhibited, serverRenewProhibited, serverUpdateProhibited}},
	{file: "au/likexian-have-no-money-to-register.au.txt", notFound: true},
	{file: "ax/regeringen.ax.txt", ns: "ns.regeringen.ax ns2.regeringen.ax ns2.alcom.aland.fi ns3.alcom.aland.fi", created: "2006-08-03"},
	{file: "ax/u34jedzcq.ax.txt", notFound: true},
	{file: "be/google.be.txt", registrar: "MarkMonitor", ns: "ns4.google.com ns3.google.com ns1.google.com ns2.google.com", created: "2000-12-12", statuses: []string{"not available"}},
	{file: "be/u34jedzcq.be.txt", notFound: true},
	{file: "berlin/google.berlin.txt", registrar: "MarkMonitor Inc.", ns: "ns1.googledomains.com ns2.googledomains.com ns3.googledomains.com ns4.googledomains.com", created: "2014-02-15T20:24:48Z", expires: "2020-02-15T20:24:48Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "berlin/likexian-have-no-money-to-register.berlin.txt", notFound: true},
	{file: "bg/abv.bg.txt", ns: "ns.netinfo.bg ns2.netinfo.bg"},
	{file: "bg/ajsfgasfrewqwerygsdaj785-58936712.bg.txt", notFound: true},
	{file: "br/likexian-have-no-money-to-register.br.txt", notFound: true},
	{file: "br/unip.br.txt", ns: "datcenter.unip.br datcenter2.unip.br", created: "1999-07-17", statuses: []string{"published"}},
	{file: "by/google.by.txt", registrar: "Open Contact, Ltd", ns: google4, created: "2004-05-14", expires: "2023-02-09"},
	{file: "by/u34jedzcq.by.txt", notFound: true},
	{file: "ca/google.ca.txt", registrar: "MarkMonitor International Canada Ltd.", ns: google4, created: "2000-10-04T02:21:23Z", expires: "2020-04-28T04:00:00Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited, serverDeleteProhibited, serverTransferProhibited, serverUpdateProhibited}},
	{file: "ca/likexian-have-no-money-to-register.ca.txt", notFound: true},
	{file: "cat/gencat.cat.txt", registrar: "10dencehispahard S.L. (CDmon.com)", ns: "dns.gencat.net dns2.gencat.cat", created: "2006-02-14T09:12:37Z", expires: "2020-02-14T09:12:37Z", statuses: []string{"ok"}},
	{file: "cat/likexian-have-no-money-to-register.cat.txt", notFound: true},
	{file: "cc/google.cc.txt", registrar: "MARKMONITOR INC.", ns: google4, created: "1999-06-07T04:00:00Z", expires: "2018-06-07T04:00:00Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited, serverDeleteProhibited, serverTransferProhibited, serverUpdateProhibited}},
	{file: "cc/likexian-have-no-money-to-register.cc.txt", notFound: true},
	{file: "ch/google.ch.txt", registrar: "MarkMonitor", ns: google4, created: "1999-05-31"},
	{file: "ch/likexian-have-no-money-to-register.ch.txt", notFound: true},
	{file: "ch/switch.ch.txt", registrar: "Gandi SAS", ns: "ns2.switch.ch ns3.switch.ch scsnms.switch.ch", created: "1996-01-01"},
	{file: "cl/google.cl.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2002-10-22T20:48:23Z", expires: "2019-11-20T17:48:02Z"},
	{file: "cl/u34jedzcq.cl.txt", notFound: true},
	{file: "cm/google.cm.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2009-10-07T09:02:00Z", expires: "2014-10-07T09:02:00Z", statuses: []string{"active"}},
	{file: "cm/u34jedzcq.cm.txt", notFound: true},
	{file: "cn/google.cn.txt", registrar: "厦门易名科技股份有限公司", ns: "ns2.google.com ns1.google.com ns3.google.com ns4.google.com", created: "2003-03-17T12:20:05Z", expires: "2021-03-17T12:48:36Z", statuses: []string{clientDeleteProhibited, serverDeleteProhibited, serverUpdateProhibited, clientTransferProhibited, serverTransferProhibited}},
	{file: "cn/u34jedzcq.cn.txt", notFound: true},
	{file: "coop/likexian-have-no-money-to-register.coop.txt", notFound: true},
	{file: "cx/google.cx.txt", registrar: "MarkMonitor", ns: "ns1.google.com ns3.google.com ns4.google.com ns2.google.com", created: "2010-07-29T18:15:42.56Z", expires: "2022-07-29T18:15:42.158Z", statuses: []string{serverUpdateProhibited, serverTransferProhibited, serverDeleteProhibited, clientUpdateProhibited, clientTransferProhibited, clientDeleteProhibited}},
	{file: "cx/likexian-have-no-money-to-register.cx.txt", notFound: true},
	{file: "cz/google.cz.txt", registrar: "REG-MARKMONITOR", ns: "ns2.google.com ns4.google.com ns3.google.com ns1.google.com", created: "2000-07-21T15:21:00Z", expires: "2014-07-22"},
	{file: "cz/u34jedzcq.cz.txt", notFound: true},
	{file: "dk/google.dk.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "1999-01-10", expires: "2023-03-31", statuses: []string{"active"}},
	{file: "dk/likexian-no-money-registe.dk.txt", notFound: true},
	{file: "edu/cornell.edu.txt", ns: "bigred.cit.cornell.edu drdns.cit.cornell.edu dns.cit.cornell.edu cudns.cit.cornell.edu drdns2.cit.cornell.edu", created: "1985-07-15", expires: "2022-07-31"},
	{file: "edu/likexian-have-no-money-to-register.edu.txt", notFound: true},
	{file: "ee/google.ee.txt", registrar: "Zone Media OÜ", ns: google4, created: "2010-07-04T01:34:46Z", expires: "2021-11-09", statuses: []string{"ok"}},
	{file: "ee/likexian-have-no-money-to-register.ee.txt", notFound: true},
	{file: "es/google.es.txt", ns: "ns2.google.com ns1.google.com", created: "2003-09-16", expires: "2014-09-16"},
	{file: "es/u34jedzcq.es.txt", notFound: true},
	{file: "eu/git.eu.txt", registrar: "Frankcom EU Service", ns: "wally.ns.cloudflare.com thomas.ns.cloudflare.com"},
	{file: "eu/google.eu.txt", registrar: "MarkMonitor Inc.", ns: "ns3.google.com ns4.google.com ns1.google.com ns2.google.com"},
	{file: "eu/likexian-have-no-money-to-register.eu.txt", notFound: true},
	{file: "fi/google.fi.txt", registrar: "MarkMonitor Inc.", ns: "ns3.google.com ns4.google.com ns1.google.com ns2.google.com", created: "2006-06-30", expires: "2020-07-04T10:15:55Z", statuses: []string{"registered"}},
	{file: "fi/likexian-have-no-money-to-register.fi.txt", notFound: true},
	{file: "fr/1c2.fr.txt", registrar: "EPAG Domainservices GmbH", ns: "ns.magic.fr ns2.magic.fr", created: "2004-05-20T11:28:40Z", expires: "2019-05-07T07:43:45Z", statuses: []string{"active"}},
	{file: "fr/likexian-have-no-money-to-register.fr.txt", notFound: true},
	{file: "gg/google.gg.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2003-04-30", statuses: []string{"active", "delete prohibited by registrar", "update prohibited by registrar", "transfer prohibited by registrar"}},
	{file: "gg/u34jedzcq.gg.txt", notFound: true},
	{file: "gov/fda.gov.txt", statuses: []string{"active"}},
	{file: "gov/likexian-have-no-money-to-register.gov.txt", notFound: true},
	{file: "hk/google.hk.txt", registrar: "MARKMONITOR INC.", ns: google4, created: "2004-04-06", expires: "2020-03-31", statuses: []string{"active"}},
	{file: "hk/u34jedzcq.hk.txt", notFound: true},
	{file: "hm/u34jedzcq.hm.txt", notFound: true},
	{file: "hr/google.hr.txt", expires: "2014-09-21"},
	{file: "hr/u34jedzcq.hr.txt", notFound: true},
	{file: "hu/likexian-have-no-money-to-register.hu.txt", notFound: true},
	{file: "hu/nic.hu.txt", created: "1996-06-27T13:36:21Z"},
	{file: "id/google.co.id.txt", registrar: "Digital Registra", ns: "ns2.google.com ns4.google.com ns1.google.com ns3.google.com", created: "2004-12-18T13:33:21Z", expires: "2019-09-01T23:59:59Z", statuses: []string{clientTransferProhibited, serverTransferProhibited}},
	{file: "id/u34jedzcq.co.id.txt", notFound: true},
	{file: "ie/google.ie.txt", registrar: "Markmonitor Inc", ns: "ns1.google.com ns2.google.com ns3.google.com", created: "2002-03-21T00:00:00Z", expires: "2022-03-21T14:13:27Z", statuses: []string{serverDeleteProhibited, serverTransferProhibited, serverUpdateProhibited}},
	{file: "ie/u34jedzcq.ie.txt", notFound: true},
	{file: "il/google.co.il.txt", registrar: "Domain The Net Technologies Ltd", ns: google4, created: "1999-06-05", expires: "2026-06-05", statuses: []string{"transfer locked"}},
	{file: "il/u34jedzcq.co.il.txt", notFound: true},
	{file: "in/google.in.txt", registrar: "Mark Monitor (R84-AFIN)", ns: google4, created: "2005-02-14T20:35:14Z", expires: "2016-02-14T20:35:14Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "in/likexian-have-no-money-to-register.in.txt", notFound: true},
	{file: "int/likexian-have-no-money-to-register.int.txt", notFound: true},
	{file: "int/wto.int.txt", ns: "ns.unicc.org ns1.gva.ch.colt.net", created: "2001-09-10"},
	{file: "ir/google.ir.txt", ns: "ns3.google.com ns4.google.com ns1.google.com ns2.google.com", expires: "2014-12-22"},
	{file: "ir/likexian-have-no-money-to-register.ir.txt", notFound: true},
	{file: "is/ajsfgasfrewqwerygsdaj785-58936712.is.txt", notFound: true},
	{file: "is/google.is.txt", ns: "ns1.google.com ns2.google.com", created: "2002-05-22", expires: "2014-05-22"},
	{file: "it/google.it.txt", registrar: "MarkMonitor International Limited", ns: google4, created: "1999-12-10", expires: "2020-04-21", statuses: []string{"ok"}},
	{file: "it/likexian-have-no-money-to-register.it.txt", notFound: true},
	{file: "jobs/google.jobs.txt", registrar: "MarkMonitor Inc.", ns: "ns1.google.com ns2.google.com", created: "2005-09-15T04:00:00Z", expires: "2020-09-15T04:00:00Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "jobs/likexian-have-no-money-to-register.jobs.txt", notFound: true},
	{file: "jp/goo.ne.jp.txt", ns: "ns1.goo.ne.jp ns2.goo.ne.jp ns.intervia.ad.jp ns.via.or.jp", created: "2004-06-15", expires: "2024-06-30", statuses: []string{"connected"}},
	{file: "jp/google.co.jp.txt", ns: google4, created: "2001-03-22", expires: "2024-03-31", statuses: []string{"connected", "agent change locked"}},
	{file: "jp/likexian-have-no-money-to-register.jp.txt", notFound: true},
	{file: "jp/mod.go.jp.txt", ns: "ns1.mod.go.jp ns2.mod.go.jp ns3.mod.go.jp ns5.mod.go.jp ns6.mod.go.jp ns6-tk01.ocn.ad.jp auth1.ns.gin.ntt.net auth2.ns.gin.ntt.net auth3.ns.gin.ntt.net auth4.ns.gin.ntt.net auth5.ns.gin.ntt.net", created: "2006-12-19", expires: "2024-12-31", statuses: []string{"connected"}},
	{file: "jp/titech.ac.jp.txt", ns: "ns.fujisawa.wide.ad.jp ns1.noc.titech.ac.jp ns2.noc.titech.ac.jp", expires: "2024-03-31", statuses: []string{"connected"}},
	{file: "jp/yahoo.co.jp.txt", ns: "ns01.yahoo.co.jp ns02.yahoo.co.jp ns11.yahoo.co.jp ns12.yahoo.co.jp", created: "2019-09-27", expires: "2025-09-30", statuses: []string{"connected", "agent change locked"}},
	{file: "ke/google.co.ke.txt", registrar: "Afriregister Limited", ns: google4, created: "2003-04-17T21:00:00Z", expires: "2014-12-31T21:00:00Z", statuses: []string{"active"}},
	{file: "ke/u34jedzcq.co.ke.txt", notFound: true},
	{file: "kg/ajsfgasfrewqwerygsdaj785-58936712.kg.txt", notFound: true},
	{file: "kr/google.kr.txt", registrar: "(주)후이즈", ns: "ns1.google.com ns2.google.com", created: "2007-03-02", expires: "2015-03-02"},
	{file: "kr/likexian-have-no-money-to-register.kr.txt", notFound: true},
	{file: "kz/google.kz.txt", registrar: "KAZNIC", ns: "ns1.google.com ns2.google.com", created: "1999-06-07T13:01:43Z", statuses: []string{"ok"}},
	{file: "la/google.la.txt", registrar: "TLD Registrar Solutions Ltd", ns: google4, created: "2002-07-18T01:00:00Z", expires: "2022-07-18T23:59:59Z", statuses: []string{clientTransferProhibited}},
	{file: "la/likexian-have-no-money-to-register.la.txt", notFound: true},
	{file: "li/liechtenstein.li.txt", registrar: "switchplus AG", ns: "pdns.llv.li scsnms.switch.ch", created: "1996-02-08"},
	{file: "london/google.london.txt", registrar: "MarkMonitor Inc.", ns: "ns4.googledomains.com ns1.googledomains.com ns2.googledomains.com ns3.googledomains.com", created: "2015-03-04T10:30:28Z", expires: "2020-03-04T10:30:28Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "london/likexian-have-no-money-to-register.london.txt", notFound: true},
	{file: "lt/google.lt.txt", registrar: "MarkMonitor, Inc.", ns: "ns1.google.com ns2.google.com ns3.google.com", created: "1999-06-06", statuses: []string{"registered"}},
	{file: "lt/u34jedzcq.lt.txt", notFound: true},
	{file: "lu/google.lu.txt", registrar: "Markmonitor", ns: google4},
	{file: "lu/u34jedzcq.lu.txt", notFound: true},
	{file: "lv/google.lv.txt", registrar: "MarkMonitor Inc.", ns: google4, statuses: []string{"active"}},
	{file: "lv/u34jedzcq.lv.txt", notFound: true},
	{file: "ly/google.ly.txt", ns: "ns2.google.com ns1.google.com ns4.google.com ns3.google.com", created: "2007-10-03T13:36:48Z", expires: "2010-10-03T13:36:48Z", statuses: []string{"active"}},
	{file: "mo/likexian-have-no-money-to-register.mo.txt", notFound: true},
	{file: "mo/yp.mo.txt", ns: "kim.ns.cloudflare.com art.ns.cloudflare.com", created: "2005-04-15T21:43:27Z", expires: "2020-11-02"},
	{file: "mobi/google.mobi.txt", registrar: "MarkMonitor, Inc.", ns: "ns4.google.com ns3.google.com ns2.google.com ns1.google.com", created: "2006-05-11T21:08:42Z", expires: "2020-05-11T07:00:00Z", statuses: []string{clientUpdateProhibited, clientTransferProhibited, clientDeleteProhibited}},
	{file: "mobi/likexian-have-no-money-to-register.mobi.txt", notFound: true},
	{file: "museum/likexian-have-no-money-to-register.museum.txt", notFound: true},
	{file: "mx/google.mx.txt", registrar: "MarkMonitor", ns: "ns2.google.com ns4.google.com ns3.google.com ns1.google.com", created: "2009-05-12", expires: "2020-05-11"},
	{file: "mx/u34jedzcq.mx.txt", notFound: true},
	{file: "name/davidwalsh.name.txt", registrar: "Name.com, Inc.", statuses: []string{clientTransferProhibited}},
	{file: "name/likexian-have-no-money-to-register.name.txt", notFound: true},
	{file: "name/login.name.txt", notFound: true},
	{file: "name/science.name.txt", notFound: true},
	{file: "nc/domaine.nc.txt", ns: "any-ns1.nc ns1.nc ns2.nc", created: "2006-05-14", expires: "2016-05-14"},
	{file: "nc/u34jedzcq.nc.txt", notFound: true},
	{file: "ng/nic.net.ng.txt", registrar: "nira", ns: "rns1.nic.net.ng rns2.nic.net.ng rns3.nic.net.ng rns4.nic.net.ng", created: "2009-05-13T14:27:27.009Z", expires: "2020-07-30T23:00:00Z", statuses: []string{"ok"}},
	{file: "ng/u34jedzcq.net.ng.txt", notFound: true},
	{file: "nl/google.nl.txt", registrar: "MarkMonitor Inc.", ns: google4, statuses: []string{"active"}},
	{file: "nl/likexian-have-no-money-to-register.nl.txt", notFound: true},
	{file: "no/google.no.txt", created: "2001-02-26"},
	{file: "no/u34jedzcq.no.txt", notFound: true},
	{file: "nu/google.nu.txt", registrar: "MarkMonitor Inc", ns: google4, created: "1999-06-07", expires: "2023-06-07", statuses: []string{"active", "ok"}},
	{file: "nu/likexian-have-no-money-to-register.nu.txt", notFound: true},
	{file: "nz/google.co.nz.txt", registrar: "MarkMonitor", ns: google4, created: "1999-02-16T11:00:00Z", expires: "2014-02-16T11:00:00Z", statuses: []string{"active"}},
	{file: "nz/likexian-have-no-money-to-register.nz.txt", notFound: true},
	{file: "pe/google.com.pe.txt", registrar: "MarkMonitor Inc.", ns: google4, statuses: []string{clientTransferProhibited, clientDeleteProhibited, clientUpdateProhibited}},
	{file: "pe/u34jedzcq.pe.txt", notFound: true},
	{file: "pl/google.pl.txt", registrar: "Markmonitor, Inc.", ns: google4, created: "2002-09-19T13:00:00Z", expires: "2022-09-18T14:00:00Z"},
	{file: "pl/likexian-have-no-money-to-register.pl.txt", notFound: true},
	{file: "pr/google.pr.txt", ns: google4, created: "2005-09-15", expires: "2014-09-15"},
	{file: "pr/u34jedzcq.pr.txt", notFound: true},
	{file: "pro/google.pro.txt", registrar: "MarkMonitor Inc.", ns: "ns1.google.com ns2.google.com", created: "2008-07-22T00:00:00Z", expires: "2016-09-08T00:00:00Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "pro/likexian-have-no-money-to-register.pro.txt", notFound: true},
	{file: "pt/sapo.pt.txt", ns: "ns2.sapo.pt dns02.sapo.pt ns.sapo.pt dns01.sapo.pt", created: "2002-10-30", expires: "2018-11-02", statuses: []string{"active"}},
	{file: "pt/u34jedzcq.pt.txt", notFound: true},
	{file: "re/likexian-have-no-money-to-register.re.txt", notFound: true},
	{file: "re/nic.re.txt", registrar: "AFNIC registry", ns: "ns1.nic.fr ns2.nic.fr ns3.nic.fr", created: "1994-12-31T23:00:00Z", expires: "2019-12-31T23:00:00Z", statuses: []string{"active"}},
	{file: "ro/google.ro.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2000-07-17", expires: "2020-09-16", statuses: []string{"update prohibited"}},
	{file: "ro/likexian-have-no-money-to-register.ro.txt", notFound: true},
	{file: "rs/google.rs.txt", registrar: "NINET Company d.o.o.", ns: google4, created: "2008-03-10T12:31:19Z", expires: "2015-03-10T12:31:19Z", statuses: []string{"locked"}},
	{file: "rs/u34jedzcq.rs.txt", notFound: true},
	{file: "ru/likexian-have-no-money-to-register.ru.txt", notFound: true},
	{file: "ru/yandex.ru.txt", registrar: "RU-CENTER-RU", ns: "ns1.yandex.ru ns2.yandex.ru ns9.z5h64q92x9.net", created: "1997-09-23T09:45:07Z", expires: "2018-09-30T21:00:00Z", statuses: []string{"registered", "delegated", "verified"}},
	{file: "se/git.se.txt", registrar: "www.NameSRS.com", ns: "ns1.ifenix.se ns2.ifenix.se", created: "2005-01-28", expires: "2024-01-28", statuses: []string{"active", "ok"}},
	{file: "se/google.se.txt", registrar: "MarkMonitor Inc", ns: google4, created: "2003-08-27", expires: "2023-10-20", statuses: []string{"active", serverUpdateProhibited, serverDeleteProhibited, serverTransferProhibited}},
	{file: "se/likexian-have-no-money-to-register.se.txt", notFound: true},
	{file: "se/xn--fl-fka.se.txt", registrar: "Rymdweb AB", ns: "ns1.rymdweb.com ns2.rymdweb.com ns3.rymdweb.com", created: "2021-12-29", expires: "2023-12-29", statuses: []string{"active", "ok"}},
	{file: "se/xn--likexian-have-n-money-to-register-ckd.se.txt", notFound: true},
	{file: "sg/google.com.sg.txt", registrar: "MarkMonitor Inc.", ns: "ns1.google.com ns2.google.com", created: "2002-07-05T09:42:32Z", expires: "2025-07-04T16:00:00Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "sh/google.sh.txt", registrar: "MarkMonitor Inc.", ns: "ns1.google.com ns2.google.com", created: "1999-06-07T17:23:46Z", expires: "2020-06-06T17:23:46Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "sh/likexian-have-no-money-to-register.sh.txt", notFound: true},
	{file: "si/google.si.txt", registrar: "AOI d.o.o.", ns: google4, created: "2005-04-04", expires: "2015-07-19", statuses: []string{serverDeleteProhibited, serverTransferProhibited, serverUpdateProhibited}},
	{file: "si/u34jedzcq.si.txt", notFound: true},
	{file: "sk/google.sk.txt", registrar: "MarkMonitor International Limited", ns: google4, created: "2003-07-24", expires: "2025-07-24", statuses: []string{clientTransferProhibited, clientUpdateProhibited, clientDeleteProhibited}},
	{file: "sk/u34jedzcq.sk.txt", notFound: true},
	{file: "sn/ajsfgasfrewqwerygsdaj785-58936712.sn.txt", notFound: true},
	{file: "su/google.su.txt", registrar: "RUCENTER-SU", ns: "ns3.nic.ru ns4.nic.ru ns8.nic.ru", created: "2005-10-15T20:00:00Z", expires: "2019-10-15T21:00:00Z", statuses: []string{"registered", "not delegated"}},
	{file: "su/u34jedzcq.su.txt", notFound: true},
	{file: "sy/tld.sy.txt", registrar: "nans", ns: "ns4.tld.sy ns3.tld.sy", created: "2010-12-02T16:01:27.664Z", expires: "2017-12-01T22:00:00Z", statuses: []string{"ok"}},
	{file: "sy/u34jedzcq.sy.txt", notFound: true},
	{file: "tel/likexian-have-no-money-to-register.tel.txt", notFound: true},
	{file: "th/google.co.th.txt", registrar: "T.H.NIC Co., Ltd.", ns: google4, created: "2004-10-08", expires: "2013-10-07", statuses: []string{"active"}},
	{file: "th/u34jedzcq.co.th.txt", notFound: true},
	{file: "tk/u34jedzcq.tk.txt", notFound: true},
	{file: "tm/google.tm.txt", ns: google4, expires: "2020-01-30", statuses: []string{"client updt lock"}},
	{file: "tm/u34jedzcq.tm.txt", notFound: true},
	{file: "top/business.top.txt", registrar: "Dynadot LLC", ns: "ns1.sedoparking.com ns2.sedoparking.com", created: "2017-03-28T07:04:16Z", expires: "2023-03-28T07:04:16Z", statuses: []string{clientTransferProhibited}},
	{file: "top/likexian-have-no-money-to-register.top.txt", notFound: true},
	{file: "tr/google.com.tr.txt", ns: google4, created: "2001-08-23", expires: "2019-08-22"},
	{file: "travel/likexian-have-no-money-to-register.travel.txt", notFound: true},
	{file: "tv/google.tv.txt", registrar: "MarkMonitor, Inc.", ns: "ns1.google.com ns3.google.com ns2.google.com", created: "2004-08-02T07:00:00Z", expires: "2020-08-02T07:00:00Z", statuses: markMonitorLocks},
	{file: "tv/likexian-have-no-money-to-register.tv.txt", notFound: true},
	{file: "tw/google.net.tw.txt", registrar: "NET-CHINESE", ns: "ns1.afraid.org ns2.afraid.org", created: "2010-08-13T15:16:40Z", expires: "2021-08-12T16:00:00Z", statuses: []string{clientTransferProhibited}},
	{file: "tw/u34jedzcq.tw.txt", notFound: true},
	{file: "ua/google.ua.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2011-07-21T15:03:50Z", expires: "2023-07-21T15:03:50Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited, clientUpdateProhibited}},
	{file: "ua/likexian-have-no-money-to-register.ua.txt", notFound: true},
	{file: "us/about.us.txt", registrar: "Neustar, Inc.", ns: "ns1.usatfus.about.us ns2.usatfus.about.us", created: "2002-04-18T15:16:22Z", expires: "2018-04-17T23:59:59Z", statuses: []string{serverTransferProhibited, clientDeleteProhibited, clientTransferProhibited, serverDeleteProhibited}},
	{file: "us/likexian-have-no-money-to-register.us.txt", notFound: true},
	{file: "ve/ajsfgasfrewqwerygsdaj785-58936712.ve.txt", notFound: true},
	{file: "ve/google.co.ve.txt", ns: google4, created: "2003-03-06", expires: "2018-03-06", statuses: []string{"activo"}},
	{file: "ws/google.ws.txt", registrar: "MarkMonitor Inc.", ns: google4, created: "2002-03-03T17:00:26Z", expires: "2020-03-03T23:00:26Z", statuses: []string{clientTransferProhibited, clientDeleteProhibited, clientUpdateProhibited}},
	{file: "ws/likexian-have-no-money-to-register.ws.txt", notFound: true},
	{file: "xn--fiqs8s/xn--6qq79v.xn--fiqs8s.txt", registrar: "厦门易名科技股份有限公司", ns: "ns3.dns.com ns4.dns.com", created: "2004-08-08T22:27:10Z", expires: "2021-08-08T22:27:10Z", statuses: []string{clientDeleteProhibited, clientTransferProhibited}},
	{file: "xn--mgba3a4f16a/likexian-have-no-money-to-register.xn--mgba3a4f16a.txt", notFound: true},
	{file: "xn--p1ai/u34jedzcq.xn--p1ai.txt", notFound: true},
	{file: "xxx/likexian-have-no-money-to-register.xxx.txt", notFound: true},
	{file: "za/joburg.org.za.txt", registrar: "ZA Central Registry", ns: "demeter.is.co.za jupiter.is.co.za titan.is.co.za", created: "1997-10-03T09:46:34Z", expires: "2999-12-31T21:59:59Z", statuses: []string{"ok"}},
	{file: "za/nosuchdomain.org.za.txt", notFound: true},
}

// measured is an answer the corpus figures count, with what it says.
type measured struct {
	name, domain string
	text         []byte
	notFound     bool
	want         domaininfo.Record // Domain, Registrar, Nameservers, Created, Expires, Statuses
}

// measuredAnswers are the corpus and the client tests' fixtures together.
func measuredAnswers(tb testing.TB) []measured {
	tb.Helper()
	var all []measured
	for _, c := range corpusCases {
		domain := strings.TrimSuffix(filepath.Base(c.file), ".txt")
		m := measured{name: "corpus/" + c.file, domain: domain, text: fixture(tb, "corpus/"+c.file), notFound: c.notFound}
		if !c.notFound {
			m.want = domaininfo.Record{Domain: domain, Registrar: c.registrar, Nameservers: strings.Fields(c.ns),
				Created: day(c.created), Expires: day(c.expires), Statuses: c.statuses}
		}
		all = append(all, m)
	}
	for _, tc := range fixtureCases {
		all = append(all, measured{name: tc.file, domain: fixtureDomain(tc.file), text: fixture(tb, tc.file), notFound: !tc.found(), want: tc.want})
	}
	return all
}

// day reads a table's date: RFC 3339, a bare date (midnight UTC), or ""
// for none.
func day(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if len(s) == len(time.DateOnly) {
		s += "T00:00:00Z"
	}
	return date(s)
}

// coverage counts, for one field, the answers that publish it and those
// it was read from.
type coverage struct{ published, read int }

func (c coverage) percent() float64 {
	if c.published == 0 {
		return 100
	}
	return 100 * float64(c.read) / float64(c.published)
}

func (c coverage) String() string {
	return fmt.Sprintf("%3d/%3d = %5.1f%%", c.read, c.published, c.percent())
}

// count adds one answer's field to c: published when want is not empty,
// read when got equals it. A value that differs from the answer's, or
// one the answer does not publish, is an error, not a miss.
func count[T any](t *testing.T, c *coverage, what string, want, got T, empty func(T) bool, equal func(T, T) bool) {
	t.Helper()
	switch {
	case empty(want) && !empty(got):
		t.Errorf("%s = %v, the answer publishes none", what, got)
	case empty(want):
	case equal(want, got):
		c.published++
		c.read++
	case empty(got):
		c.published++
		t.Logf("%s missing, want %v", what, want)
	default:
		c.published++
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func noString(s string) bool       { return s == "" }
func noTime(t time.Time) bool      { return t.IsZero() }
func noStrings(s []string) bool    { return len(s) == 0 }
func sameTime(a, b time.Time) bool { return a.Equal(b) }
func same[T comparable](a, b T) bool {
	return a == b
}

// TestCorpus reads every recorded answer and measures what the parser
// gets out of them against what they say. It prints the figures (go test
// -v -run TestCorpus) and fails below the targets: 97% of the registrars
// and name-server lists that answers publish, 95% of their expiry dates,
// every unregistered name.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range corpusCases {
		listed = append(listed, "testdata/corpus/"+c.file)
	}
	if slices.Sort(files); !slices.Equal(files, listed) {
		t.Fatalf("corpusCases and testdata/corpus differ (cases sorted as the files are):\n-cases %q\n+files %q", listed, files)
	}

	var registrar, ns, expires, created, statuses, notFound coverage
	tlds := map[string]bool{}
	registered := 0
	for _, m := range measuredAnswers(t) {
		tlds[m.domain[strings.LastIndexByte(m.domain, '.')+1:]] = true
		t.Run(m.name, func(t *testing.T) {
			got, err := Parse(m.domain, m.text)
			if m.notFound {
				notFound.published++
				if errors.Is(err, domaininfo.ErrNotFound) {
					notFound.read++
				} else {
					t.Errorf("Parse error = %v, want ErrNotFound", err)
				}
				return
			}
			registered++
			if err != nil {
				t.Errorf("Parse error = %v on a registered name", err)
			}
			if got.Domain != m.want.Domain {
				t.Errorf("domain = %q, want %q", got.Domain, m.want.Domain)
			}
			count(t, &registrar, "registrar", m.want.Registrar, got.Registrar, noString, same[string])
			count(t, &ns, "name servers", m.want.Nameservers, got.Nameservers, noStrings, slices.Equal[[]string])
			count(t, &expires, "expiry", m.want.Expires, got.Expires, noTime, sameTime)
			count(t, &created, "creation", m.want.Created, got.Created, noTime, sameTime)
			count(t, &statuses, "statuses", m.want.Statuses, got.Statuses, noStrings, slices.Equal[[]string])
		})
	}

	t.Logf("WHOIS corpus: %d answers from %d TLDs, %d registered and %d not registered", registered+notFound.published, len(tlds), registered, notFound.published)
	for _, f := range []struct {
		name   string
		c      coverage
		target float64 // 0: no target
	}{
		{"registrar", registrar, 97}, {"name servers", ns, 97}, {"expiry date", expires, 95},
		{"creation date", created, 0}, {"statuses", statuses, 0}, {"not found", notFound, 100},
	} {
		t.Logf("  %-14s %s", f.name, f.c)
		if f.c.percent() < f.target {
			t.Errorf("%s read from %.1f%% of the answers that publish it, target %.0f%%", f.name, f.c.percent(), f.target)
		}
	}
}
