package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/domaind/domaind/api/httpjson"
	"github.com/domaind/domaind/internal/domaininfo"
	"github.com/domaind/domaind/internal/domainname"
	"github.com/domaind/domaind/internal/fault"
	"github.com/domaind/domaind/internal/lookup"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/ratelimit"
	"github.com/domaind/domaind/internal/requestid"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/tasks"
)

// whoisQuota is SPEC §8's anonymous WHOIS quota.
var whoisQuota = ratelimit.PerDay("whois", 10)

// lookupWait is how long a WHOIS request waits for its lookup task. A lookup
// still running then goes on in the background and fills the cache.
const lookupWait = 15 * time.Second

type whoisRequest struct {
	Domain *string `json:"domain"`
}

// whoisResponse is SPEC §2.6.
type whoisResponse struct {
	Lookup    whoisLookup `json:"lookup"`
	Used      int         `json:"used"`
	Cap       int         `json:"cap"`
	Remaining int         `json:"remaining"`
}

type whoisLookup struct {
	ID        string            `json:"id"`
	Domain    string            `json:"domain"`
	Result    domaininfo.Result `json:"result"`
	CreatedAt time.Time         `json:"created_at"`
}

// createWhoisLookup answers POST /api/tools/whois: the cached answer of the
// last hour, or a new lookup run on the rdap queue and waited for. The name
// looked up is the registrable domain of the input (www.example.com asks
// about example.com).
func (s *Server) createWhoisLookup(c *gin.Context) error {
	var req whoisRequest
	if err := httpjson.DecodeJSON(c, &req, false); err != nil {
		return err
	}
	if req.Domain == nil || strings.TrimSpace(*req.Domain) == "" {
		return fault.New(fault.Validation, "domain is required")
	}
	name, err := domainname.Parse(*req.Domain)
	if err != nil {
		return err
	}
	a, failed, err := s.lookUp(c.Request.Context(), name.Registrable)
	if failed {
		refundQuota(c)
	}
	if err != nil {
		return err
	}
	q := c.MustGet(quotaCtxKey).(ratelimit.Result)
	c.JSON(http.StatusCreated, whoisResponse{
		Lookup: whoisLookup{ID: a.LookupID, Domain: a.Domain, Result: a.Record.Result(), CreatedAt: a.CreatedAt},
		Used:   q.Used, Cap: q.Limit, Remaining: q.Remaining,
	})
	return nil
}

// lookUp returns the registration record of domain (a registrable name):
// the cached answer of the last hour, or a new lookup run on the rdap
// queue and waited for; not_found when neither RDAP nor the WHOIS fallback
// has data. failed says a lookup ran and failed on our side or the
// registries' (the caller's quota unit may go back).
func (s *Server) lookUp(ctx context.Context, domain string) (a lookup.Answer, failed bool, err error) {
	a, ok, err := s.lookups.Get(ctx, domain)
	if err != nil {
		return a, false, err
	}
	if !ok {
		if a, err = s.runLookup(ctx, domain); err != nil {
			return a, true, err
		}
	}
	if !a.Found {
		return a, false, fault.New(fault.NotFound, "neither RDAP nor the WHOIS fallback has data for %s", a.Domain)
	}
	return a, false, nil
}

// runLookup creates a lookup and its task through the outbox and waits for
// the worker to finish it.
func (s *Server) runLookup(ctx context.Context, domain string) (lookup.Answer, error) {
	id := models.NewID()
	sub, err := s.lookups.Subscribe(ctx, id)
	if err != nil {
		return lookup.Answer{}, err
	}
	defer sub.Close()
	if err := s.createLookup(ctx, id, domain); err != nil {
		return lookup.Answer{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, lookupWait)
	defer cancel()
	for {
		if err := sub.Wait(wctx, time.Second); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return lookup.Answer{}, fault.New(fault.LookupFailed,
					"the lookup of %s is taking longer than %s; it goes on in the background, retry in a minute", domain, ratelimit.DescribeDuration(lookupWait))
			}
			return lookup.Answer{}, err
		}
		var l models.Lookup
		if err := s.db.WithContext(ctx).First(&l, "id = ?", id).Error; err != nil {
			return lookup.Answer{}, err
		}
		switch l.State {
		case models.LookupPending:
			continue
		case models.LookupFailed:
			return lookup.Answer{}, fault.New(fault.LookupFailed,
				"WHOIS data for %s is unavailable: RDAP and the WHOIS fallback both failed; retry later", domain)
		}
		return lookup.Answer{LookupID: l.ID, Domain: l.Domain, Found: l.State == models.LookupDone,
			Record: l.Record, CreatedAt: l.CreatedAt.UTC()}, nil
	}
}

// createLookup writes a pending lookup and its task in one transaction.
func (s *Server) createLookup(ctx context.Context, id, domain string) error {
	return s.outbox.Transaction(ctx, func(tx *outbox.Tx) error {
		l := models.Lookup{ID: id, Domain: domain, State: models.LookupPending, RequestID: requestid.From(ctx)}
		if err := tx.Create(&l).Error; err != nil {
			return err
		}
		tx.Add(tasks.LookupRunPayload{LookupID: id})
		return nil
	})
}
