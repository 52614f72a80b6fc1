package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"gorm.io/gorm"

	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/partner"
)

const partnerUsage = `usage: domaind partner create NAME CONTACT_EMAIL
       domaind partner approve PARTNER_ID
       domaind partner credential PARTNER_ID sandbox|live SCOPE[,SCOPE...]
       domaind partner revoke PARTNER_ID KEY_ID
       domaind partner list

scopes: ` + "search, embed, buy, broker, refer, report, webhook"

// partnerArgs are the number of arguments each partner subcommand takes.
var partnerArgs = map[string]int{"create": 2, "approve": 1, "credential": 3, "revoke": 2, "list": 0}

// checkPartnerArgs says whether args are a partner subcommand with its
// arguments, before anything is opened.
func checkPartnerArgs(args []string) error {
	if len(args) == 0 {
		return usageError(partnerUsage)
	}
	if n, ok := partnerArgs[args[0]]; !ok || len(args)-1 != n {
		return usageError(partnerUsage)
	}
	return nil
}

// partnerCommand runs `domaind partner …`, the ops API's partner management
// from the command line. A credential's secret is printed here once.
func partnerCommand(ctx context.Context, cfg *config.Config, db *gorm.DB, args []string, w io.Writer) error {
	partners := partner.New(db, cfg.SecretKey, time.Now)
	switch args[0] {
	case "create":
		p, err := partners.Create(ctx, args[1], args[2])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "partner %s created (%s); approve it with: domaind partner approve %s\n", p.ID, p.Status, p.ID)
	case "approve":
		p, err := partners.Approve(ctx, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "partner %s is %s\n", p.ID, p.Status)
	case "credential":
		c, err := partners.IssueCredential(ctx, args[1], args[2], strings.Split(args[3], ","))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "key_id  %s\nsecret  %s\nenvironment %s, scopes %s\nThe secret is shown this once; keep it safe.\n",
			c.KeyID, c.Secret, c.Environment, strings.Join(c.Scopes, " "))
	case "revoke":
		if err := partners.Revoke(ctx, args[1], args[2]); err != nil {
			return err
		}
		fmt.Fprintf(w, "credential %s revoked\n", args[2])
	case "list":
		ps, err := partners.List(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PARTNER\tNAME\tSTATUS\tKEY ID\tENVIRONMENT\tSCOPES\tREVOKED")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\n", p.ID, p.Name, p.Status)
			for _, c := range p.Credentials {
				revoked := ""
				if c.RevokedAt != nil {
					revoked = c.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "\t\t\t%s\t%s\t%s\t%s\n", c.KeyID, c.Environment, c.Scopes, revoked)
			}
		}
		return tw.Flush()
	}
	return nil
}
