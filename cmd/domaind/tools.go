package main

import (
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/dnslookup"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/registry"
	"github.com/domaind/domaind/internal/tools"
)

// newTools returns the free tools on the configured DNS resolver, with
// every user-given URL fetched through the SSRF-safe client.
func newTools(cfg *config.Config, reg registry.Provider) (*tools.Registry, error) {
	dns := &dnslookup.Resolver{Addr: cfg.DNSResolver}
	if cfg.DNSResolver == "" {
		var err error
		if dns, err = dnslookup.FromResolvConf("/etc/resolv.conf"); err != nil {
			return nil, err
		}
	}
	return tools.New(tools.Deps{
		Fetch:    fetch.New(fetch.Options{Allow: cfg.FetchAllowCIDRs}),
		DNS:      dns,
		Registry: reg,
	}), nil
}
