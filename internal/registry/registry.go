// Package registry is what the service knows of the domain registry it sells
// through: availability checks, prices and per-TLD rules. A Provider is either
// the Realtime Register REST API (package rtr) or the sandbox simulation in
// the database (package sandbox); the rest of the service sees only this
// package's types.
package registry

import (
	"context"
	"errors"
)

// Ops are the priced operations, as the pricing endpoint names them.
const (
	OpRegister = "register"
	OpRenew    = "renew"
	OpTransfer = "transfer"
	OpRestore  = "restore"
)

// Ops lists every priced operation.
var Ops = []string{OpRegister, OpRenew, OpTransfer, OpRestore}

// ErrUnknownTLD means the provider does not sell the TLD.
var ErrUnknownTLD = errors.New("registry: TLD not offered")

// Provider is a registry the service sells through.
type Provider interface {
	// Name is the provider's name as stored in synced rows ("rtr", "sandbox").
	Name() string
	// TLDs lists the TLDs the provider sells.
	TLDs(ctx context.Context) ([]string, error)
	// TLDInfo returns the rules of one TLD, or ErrUnknownTLD.
	TLDInfo(ctx context.Context, tld string) (TLDInfo, error)
	// Prices returns the price list in USD cents.
	Prices(ctx context.Context) ([]Price, error)
	// Check reports whether a domain name can be registered and at what price.
	Check(ctx context.Context, name string) (Availability, error)
	// UpdateDomain applies u to a domain the account holds. change names
	// the change (a bulk item's id): a provider applies a change it has
	// seen before no second time, so a retried or resumed caller may send
	// it again. Errors a retry may fix wrap ErrTransient; ErrDomainNotHeld
	// means the registry does not know the domain under this account.
	UpdateDomain(ctx context.Context, name string, u Update, change string) error
	// PushDomain moves a domain the account holds to the registrar
	// recipient (a push transfer: the sale's delivery to the buyer's
	// registrar). change names the push, as with UpdateDomain. Errors a
	// retry may fix wrap ErrTransient; ErrPushRefused is a push that will
	// not happen as asked. An answer that leaves open whether an earlier
	// request of the change made the push (a registry refuses to push a
	// name twice) wraps neither.
	PushDomain(ctx context.Context, name, recipient, change string) error
}

// ErrPushRefused is a push transfer the registry refused (an unknown
// recipient, a domain locked at the registry).
var ErrPushRefused = errors.New("registry: push transfer refused")

// ErrTransient marks a failure a retry may fix (a timeout, a 429, a 5xx).
var ErrTransient = errors.New("registry: temporary failure")

// ErrDomainNotHeld means the account does not hold the domain at the registry.
var ErrDomainNotHeld = errors.New("registry: domain not held by this account")

// Contact roles of a domain.
const (
	RoleRegistrant = "registrant"
	RoleAdmin      = "admin"
	RoleTech       = "tech"
	RoleBilling    = "billing"
)

// Roles lists the contact roles.
var Roles = []string{RoleRegistrant, RoleAdmin, RoleTech, RoleBilling}

// Contact fills a role: an existing contact handle at the registry, or the
// details of a new contact, which the provider creates first.
type Contact struct {
	Handle  string          `json:"handle,omitempty"`
	Details *ContactDetails `json:"details,omitempty"`
}

// ContactDetails describe a person or organisation for a new contact.
type ContactDetails struct {
	Name         string `json:"name"`
	Organization string `json:"organization,omitempty"`
	Email        string `json:"email"`
	Phone        string `json:"phone"`
	Street       string `json:"street"`
	City         string `json:"city"`
	PostalCode   string `json:"postal_code"`
	Country      string `json:"country"`
}

// Update is a change to a registered domain. Nil fields stay as they are.
type Update struct {
	// Locked sets or clears the transfer lock (clientTransferProhibited).
	Locked *bool `json:"locked,omitempty"`
	// Nameservers replace the delegation.
	Nameservers []string `json:"nameservers,omitempty"`
	// Contacts replace the contacts of the roles present.
	Contacts map[string]Contact `json:"contacts,omitempty"`
}

// Price is one line of a price list. Cents is the price for one year.
type Price struct {
	TLD      string
	Op       string
	Cents    int64
	Currency string
}

// Reasons a provider gives for a name that is not available. Providers may
// give others (Realtime Register passes the registry's wording through);
// anything not recognised counts as registered.
const (
	ReasonRegistered = "registered"
	ReasonReserved   = "reserved"
	ReasonNotSold    = "not sold"
)

// Availability is the answer of a domain check.
type Availability struct {
	Available bool
	// Reason explains why a name is not available (e.g. "registered", "reserved").
	Reason  string
	Premium bool
	// Cents is the create price when known (premium names have their own).
	Cents    int64
	Currency string
}

// TLDInfo is the Realtime Register shape of a TLD's rules
// (GET /v2/tlds/{tld}/info), which the sandbox stores too. Fields the
// registry leaves out stay at their zero value.
type TLDInfo struct {
	Provider      string   `json:"provider"`
	ApplicableFor []string `json:"applicableFor"`
	Metadata      struct {
		CreateDomainPeriods      []int           `json:"createDomainPeriods"`
		RenewDomainPeriods       []int           `json:"renewDomainPeriods"`
		TransferDomainPeriods    []int           `json:"transferDomainPeriods"`
		Registrant               *Registrant     `json:"registrant"`
		Nameservers              *NameserverRule `json:"nameservers"`
		DomainSyntax             *DomainSyntax   `json:"domainSyntax"`
		PremiumSupport           string          `json:"premiumSupport"`
		TransferRequiresAuthcode bool            `json:"transferRequiresAuthcode"`
		FeaturesAvailable        []string        `json:"featuresAvailable"`
		RedemptionPeriod         int             `json:"redemptionPeriod"`
	} `json:"metadata"`
}

// Registrant is who may hold a name under the TLD.
type Registrant struct {
	OrganizationRequired bool     `json:"organizationRequired"`
	OrganizationAllowed  bool     `json:"organizationAllowed"`
	AllowedCountries     []string `json:"allowedCountries"`
}

// NameserverRule is how many nameservers a name under the TLD takes.
type NameserverRule struct {
	Min      int  `json:"min"`
	Max      int  `json:"max"`
	Required bool `json:"required"`
}

// DomainSyntax is which labels the TLD accepts.
type DomainSyntax struct {
	MinLength  int    `json:"minLength"`
	MaxLength  int    `json:"maxLength"`
	IDNSupport bool   `json:"idnSupport"`
	IDNType    string `json:"idnType"`
}

// Metadata is a TLD's rules in the fields of SPEC §2.8, derived from TLDInfo.
type Metadata struct {
	Provider                 string   `json:"provider"`
	PeriodsMonths            []int    `json:"periodsMonths"`
	MinPeriodMonths          int      `json:"minPeriodMonths"`
	MaxPeriodMonths          int      `json:"maxPeriodMonths"`
	AllowedYears             []int    `json:"allowedYears"`
	MinYears                 int      `json:"minYears"`
	MaxYears                 int      `json:"maxYears"`
	OrganizationRequired     bool     `json:"organizationRequired"`
	OrganizationAllowed      bool     `json:"organizationAllowed"`
	AllowedCountries         []string `json:"allowedCountries"`
	MinNameservers           int      `json:"minNameservers"`
	MaxNameservers           int      `json:"maxNameservers"`
	NameserversRequired      bool     `json:"nameserversRequired"`
	IDNSupport               bool     `json:"idnSupport"`
	PremiumSupport           string   `json:"premiumSupport"`
	TransferRequiresAuthcode bool     `json:"transferRequiresAuthcode"`
	FeaturesAvailable        []string `json:"featuresAvailable"`
}
