package whois

import (
	"strings"
	"unicode"
)

// field is the part of a record a key (or a block's value lines) fills.
type field int

// The fields of an answer. fieldRegistrantOrg stands in for the registrant
// when no name is given; fieldStateUntil is a status with the expiry date
// in parentheses after it ("Connected (2024/06/30)").
const (
	fieldNone field = iota
	fieldDomain
	fieldRegistrar
	fieldRegistrant
	fieldRegistrantOrg
	fieldCreated
	fieldExpires
	fieldUpdated
	fieldStatus
	fieldNS
	fieldReferral
	fieldStateUntil
)

// fields maps a normalised key (see normalizeKey) to the field it fills, in
// the wordings registries use, English first, then other languages.
var fields = map[string]field{
	"domain name": fieldDomain, "domain": fieldDomain, "domainname": fieldDomain, "domain information": fieldDomain,

	"registrar": fieldRegistrar, "registrar name": fieldRegistrar, "sponsoring registrar": fieldRegistrar, "sponsoring registrar organization": fieldRegistrar,
	"registration service provider": fieldRegistrar, "authorized agency": fieldRegistrar,
	"current registrar": fieldRegistrar, "current registar": fieldRegistrar, // KazNIC's spelling

	"registrant": fieldRegistrant, "registrant name": fieldRegistrant, "holder": fieldRegistrant, "owner": fieldRegistrant,
	"owner name": fieldRegistrant, "domain holder": fieldRegistrant, "domain registrant": fieldRegistrant,
	"registrant organization": fieldRegistrantOrg, "registrant organisation": fieldRegistrantOrg,
	"organization": fieldRegistrantOrg, "organisation": fieldRegistrantOrg, "org": fieldRegistrantOrg,

	"creation date": fieldCreated, "created": fieldCreated, "created on": fieldCreated, "created date": fieldCreated,
	"registered": fieldCreated, "registered on": fieldCreated, "registered date": fieldCreated,
	"registration date": fieldCreated, "registration time": fieldCreated, "domain registration date": fieldCreated,
	"record created": fieldCreated, "record created on": fieldCreated, "domain created": fieldCreated,
	"domain registered": fieldCreated, "domain record activated": fieldCreated, "first registration date": fieldCreated,
	"domain name commencement date": fieldCreated, "assigned": fieldCreated, "date registered": fieldCreated,
	"domain create date": fieldCreated, "create date": fieldCreated, "domain creation date": fieldCreated,
	"activated on": fieldCreated, "domain dateregistered": fieldCreated, "registration": fieldCreated,

	"registry expiry date": fieldExpires, "registrar registration expiration date": fieldExpires,
	"expiry date": fieldExpires, "expiration date": fieldExpires, "expiration time": fieldExpires,
	"expires": fieldExpires, "expires on": fieldExpires, "expire": fieldExpires, "expire date": fieldExpires,
	"paid till": fieldExpires, "valid until": fieldExpires, "validity": fieldExpires, "renewal date": fieldExpires,
	"domain expiration date": fieldExpires, "domain expires": fieldExpires, "exp date": fieldExpires,
	"record expires on": fieldExpires, "record will expire on": fieldExpires, "record expired": fieldExpires,
	"expiry": fieldExpires, "expired": fieldExpires, "expires at": fieldExpires, "renewal": fieldExpires,
	"domain currently expires": fieldExpires, "domain expiry date": fieldExpires, "domain datebilleduntil": fieldExpires,

	"updated date": fieldUpdated, "updated": fieldUpdated, "last updated": fieldUpdated, "last update": fieldUpdated,
	"last modified": fieldUpdated, "modified": fieldUpdated, "changed": fieldUpdated, "record last modified": fieldUpdated,

	"domain status": fieldStatus, "status": fieldStatus, "lock status": fieldStatus,
	"query status": fieldStatus,

	"name server": fieldNS, "nameserver": fieldNS, "nserver": fieldNS, "name servers": fieldNS, "nameservers": fieldNS,
	"ns name": fieldNS, "primary server": fieldNS, "secondary server": fieldNS,
	"primary name server": fieldNS, "secondary name server": fieldNS, "domain server": fieldNS, "dns": fieldNS, "ns": fieldNS,

	"registrar whois server": fieldReferral, "whois server": fieldReferral,

	// Japanese (JPRS without "/e").
	"ドメイン名": fieldDomain, "登録者名": fieldRegistrant, "組織名": fieldRegistrantOrg, "ネームサーバ": fieldNS,
	"登録年月日": fieldCreated, "有効期限": fieldExpires, "状態": fieldStatus, "最終更新": fieldUpdated,
	// Korean (KISA answers in Korean, then English).
	"도메인이름": fieldDomain, "등록인": fieldRegistrant, "등록일": fieldCreated, "사용 종료일": fieldExpires,
	"최근 정보 변경일": fieldUpdated, "등록대행자": fieldRegistrar,
	// Chinese.
	"域名": fieldDomain, "注册商": fieldRegistrar, "註冊商": fieldRegistrar, "注册时间": fieldCreated, "到期时间": fieldExpires,
	"域名服务器": fieldNS,
	// Spanish.
	"nombre de dominio": fieldDomain, "registrador": fieldRegistrar, "agente registrador": fieldRegistrar,
	"titular": fieldRegistrant, "fecha de creación": fieldCreated, "fecha de creacion": fieldCreated,
	"fecha de registro": fieldCreated, "fecha de vencimiento": fieldExpires, "fecha de expiración": fieldExpires,
	"fecha de expiracion": fieldExpires, "ultima actualización": fieldUpdated, "última actualización": fieldUpdated,
	"ultima actualizacion": fieldUpdated, "estatus del dominio": fieldStatus, "estado": fieldStatus,
	"servidor(es) de nombres de dominio": fieldNS, "servidores de nombres": fieldNS,
	// Portuguese.
	"data de criação": fieldCreated, "data de registo": fieldCreated, "data de expiração": fieldExpires,
	"servidores de nomes": fieldNS,
	// French.
	"nom de domaine": fieldDomain, "bureau d'enregistrement": fieldRegistrar, "titulaire": fieldRegistrant,
	"date de création": fieldCreated, "date d'expiration": fieldExpires, "serveurs de noms": fieldNS,
	// German.
	"inhaber": fieldRegistrant, "domaininhaber": fieldRegistrant, "registrierungsdatum": fieldCreated,
	"ablaufdatum": fieldExpires, "zuletzt geändert": fieldUpdated,
	// Italian.
	"registrante": fieldRegistrant, "data di creazione": fieldCreated, "data di scadenza": fieldExpires,
	"scadenza": fieldExpires, "stato": fieldStatus,
}

// kind is what a block (a heading and the lines under it) or a paragraph
// opened by a heading describes; it decides which keys inside count.
type kind int

// The kinds of block. kindPlain reads keys as at the top level.
const (
	kindPlain kind = iota
	kindRegistrar
	kindRegistrant
	kindContact
	kindNS
)

// headings are keys that start a block of their own: contacts, whose keys
// say nothing about the domain, and the headings of name-server lists
// whose values may follow a blank line. Other keys start a block when
// they map to a field that can take value lines (see blockKind).
var headings = map[string]kind{
	"admin": kindContact, "admin contact": kindContact, "administrative contact": kindContact,
	"administrative contact information": kindContact, "tech": kindContact, "technical": kindContact,
	"tech contact": kindContact, "technical contact": kindContact, "technical contacts": kindContact,
	"technical contact information": kindContact, "billing": kindContact, "billing contact": kindContact,
	"owner contact": kindContact, "registrant contact information": kindContact, "registrar technical contacts": kindContact,
	"abuse contact": kindContact, "onsite": kindContact, "reseller": kindContact, "contact information": kindContact,
	"contact": kindContact, "person": kindContact, "role": kindContact, "personname": kindContact,
	"nic hdl": kindContact, "nic hdl br": kindContact, "tech c": kindContact, "zone c": kindContact,
	"admin c": kindContact, "contacto administrativo": kindContact, "contacto técnico": kindContact,
	"contacto de cobranza": kindContact, "administrative contact/agent": kindContact,
	"organization using domain name": kindRegistrant,

	"nameservers": kindNS, "name servers": kindNS, "name servers information": kindNS, "nservers": kindNS,
	"name server information": kindNS, "domain nameservers": kindNS, "domain name servers": kindNS, "domain servers": kindNS, "dns servers": kindNS,
	"domain servers in listed order": kindNS, "nameserver in listed order": kindNS, "nsset": kindNS, "servers": kindNS,
	"name servers in the listed order": kindNS, "name servers in listed order": kindNS,
	"primary name server": kindNS, "secondary name server": kindNS, "1차 네임서버 정보": kindNS, "2차 네임서버 정보": kindNS,
	"servidor(es) de nombres de dominio": kindNS,
}

// nsKeys are the keys inside a name-server block that name a server
// ("Hostname: ns1.example.net" under "Nameservers").
var nsKeys = map[string]bool{"hostname": true, "host name": true, "host": true, "name": true, "server": true, "dns": true, "호스트이름": true}

// nsKey reports a key that names a server inside a name-server block:
// one of nsKeys, or a numbered one ("Primary Server Hostname", "Third
// Server Hostname") but not its address.
func nsKey(key string) bool {
	return nsKeys[key] || (strings.HasSuffix(key, "hostname") || strings.HasSuffix(key, "host name")) && !strings.Contains(key, "address")
}

// nameKeys are the keys inside a registrar or registrant block that give
// its name.
var nameKeys = map[string]bool{"name": true, "organization": true, "organisation": true, "org": true, "organization name": true}

// blockKind is the kind of block a key opens when it stands alone on its
// line, and whether it opens one at all.
func blockKind(key string, f field) (kind, bool) {
	if k, ok := headings[key]; ok {
		return k, true
	}
	switch f {
	case fieldRegistrar:
		return kindRegistrar, true
	case fieldRegistrant:
		return kindRegistrant, true
	case fieldNS:
		return kindNS, true
	case fieldDomain, fieldStatus, fieldCreated, fieldExpires, fieldUpdated:
		return kindPlain, true
	}
	return kindPlain, false
}

// normalizeKey makes the spellings of one key alike: lower case, "-" and
// "_" as spaces, no dot leaders ("domain.........."), no "(s)", no
// numbering ("Name Server 1", "ns_name_01"), single spaces. A bilingual
// key, "Servidores de nombre (Domain servers)" or "Data de expiração /
// Expiration Date (dd/mm/yyyy)", is whichever half is known.
func normalizeKey(k string) string {
	k = strings.ToLower(k)
	k = strings.NewReplacer("-", " ", "_", " ", "(s)", "", "\t", " ").Replace(k)
	k = strings.TrimRight(k, ". ")
	k = strings.TrimRightFunc(k, func(r rune) bool { return unicode.IsDigit(r) || r == ' ' })
	k = strings.Join(strings.Fields(k), " ")
	if known(k) {
		return k
	}
	k = formatHint.ReplaceAllString(k, "") // "expiration date (dd/mm/yyyy)"
	halves := strings.Split(k, " / ")      // "data de expiração / expiration date"
	if outer, inner, ok := strings.Cut(strings.TrimSuffix(k, ")"), " ("); ok && strings.HasSuffix(k, ")") {
		halves = []string{outer, inner} // "servidores de nombre (domain servers)"
	}
	for _, half := range halves {
		if known(half) {
			return half
		}
	}
	return k
}

// known reports a key the tables name.
func known(k string) bool {
	_, field := fields[k]
	_, heading := headings[k]
	return field || heading
}
