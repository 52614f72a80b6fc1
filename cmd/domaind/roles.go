package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/domaind/domaind/api"
	"github.com/domaind/domaind/dashboard"
	"github.com/domaind/domaind/internal/config"
	"github.com/domaind/domaind/internal/fetch"
	"github.com/domaind/domaind/internal/httpserver"
	"github.com/domaind/domaind/internal/logging"
	"github.com/domaind/domaind/internal/metrics"
	"github.com/domaind/domaind/internal/outbox"
	"github.com/domaind/domaind/internal/partner"
	"github.com/domaind/domaind/internal/platform"
	"github.com/domaind/domaind/internal/services"
	"github.com/domaind/domaind/models"
	"github.com/domaind/domaind/scheduler"
	"github.com/domaind/domaind/tasks"
	"github.com/domaind/domaind/worker"
)

// shutdownTimeout bounds how long in-flight HTTP requests may take to finish.
const shutdownTimeout = 25 * time.Second

// start loads the configuration, opens what role needs, runs it until ctx
// ends, and shuts it down in reverse order.
func start(ctx context.Context, cmd command, getenv func(string) string, isTerminal bool, stdout, stderr io.Writer) error {
	role := cmd.role
	cfg, err := config.Load(getenv, isTerminal)
	if err != nil {
		return err
	}
	if role == "all" || role == "api" || role == "dashboard" {
		if err := cfg.CheckOps(); err != nil {
			return err
		}
	}
	log := logging.New(stderr, cfg.LogFormat, cfg.LogLevel)
	redis.SetLogger(logging.Redis{Log: log})
	oneShot := role == "migrate" || role == "seed" || role == "partner"
	if cfg.Embedded() && role != "all" && !oneShot {
		return &config.Error{Var: "DOMAIND_DATABASE_URL", Msg: fmt.Sprintf(
			"the %s role alone needs DOMAIND_DATABASE_URL and DOMAIND_REDIS_URL; run `domaind all` for the embedded mode", role)}
	}
	log.Info("starting", "role", role, "config", cfg)

	// Listen before connecting anywhere, so a taken port fails at once.
	var ln net.Listener
	if !oneShot {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return &config.Error{Var: "DOMAIND_HTTP_ADDR", Msg: err.Error()}
		}
		defer ln.Close()
		ln = httpserver.LimitListener(ln, httpserver.MaxConnsPerClient, cfg.TrustedProxies)
	}

	p, err := platform.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer p.Close()

	migrate := role == "all" || role == "migrate" || role == "seed"
	if !migrate { // the other roles run on the schema `domaind migrate` made
		err := models.CheckMigrated(ctx, p.DB)
		switch {
		case errors.Is(err, models.ErrNotMigrated) && cfg.AutoMigrate:
			migrate = true
		case errors.Is(err, models.ErrSchemaNewer): // a rollback, or replicas of the last version during a rollout
			log.Warn("running on a database migrated by a newer binary", "err", err)
		case err != nil:
			return err
		}
	}
	if migrate {
		if err := models.Migrate(ctx, p.DB); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		log.Info("migrations applied")
	}
	if role == "migrate" {
		return nil
	}
	if role == "partner" {
		return partnerCommand(ctx, cfg, p.DB, cmd.partner, stdout)
	}
	reg, err := newRegistry(cfg, p.DB)
	if err != nil {
		return err
	}
	var demoKey *partner.Credential
	if role == "seed" || (role == "all" && cfg.SeedDemo) {
		if demoKey, err = seed(ctx, cfg, p.DB, reg, log, role == "seed", cmd.listings); err != nil {
			return err
		}
	}
	if role == "seed" {
		return nil
	}

	freeTools, err := newTools(cfg, reg)
	if err != nil {
		return err
	}
	m := metrics.New()
	client := asynq.NewClientFromRedisClient(p.Redis)
	defer client.Close()
	ob := outbox.New(p.DB, p.Redis, log)
	defer ob.Close()

	svc := services.New(services.Deps{Config: cfg, DB: p.DB, Redis: p.Redis, Outbox: ob, Log: log, Registry: reg, Tools: freeTools,
		Resources: api.Resources(cfg)})
	defer svc.Close() // after the HTTP server's shutdown and the worker's, before the outbox and the connections close

	var mon *dashboard.Dashboard
	if role == "all" || role == "dashboard" {
		mon = dashboard.New(p.RedisOpt, cfg.DashboardReadOnly)
		defer mon.Close()
	}
	if role == "all" || role == "api" || role == "dashboard" {
		m.RegisterQueues(asynq.NewInspectorFromRedisClient(p.Redis))
		m.RegisterBacklog(svc.Backlog.CountsByName)
	}

	if role == "all" || role == "worker" {
		lk, err := newLookups(ctx, cfg, p.DB, p.Redis, m, log)
		if err != nil {
			return err
		}
		w := worker.New(worker.Deps{
			DB: p.DB, Outbox: ob, Metrics: m, Log: log, RedisOpt: p.RedisOpt, Registry: reg,
			Resolver: lk.resolver, LookupCache: svc.Lookups,
			RDAP: lk.rdap, BootstrapSource: lk.bootstrapSource, HTTP: lk.http, Tools: freeTools,
			Webhooks:    svc.Webhooks,
			Orders:      svc.Orders,
			Payments:    svc.Processors,
			PaymentBook: svc.Payments,
			Checkout:    svc.Checkout,
			Settlements: svc.Settlements,
			Fetch:       fetch.New(fetch.Options{Allow: cfg.FetchAllowCIDRs}),
		})
		if err := w.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		defer w.Shutdown() // hands unfinished tasks back to the queue
	}
	if role == "all" || role == "scheduler" {
		every, offset := cfg.SettlementPeriod.Schedule()
		table := append(slices.Clone(scheduler.Table), scheduler.Entry{Every: every, Offset: offset, Payload: tasks.SettlementSchedulePayload{}})
		s := scheduler.New(client, log, table)
		s.Start(ctx)
		defer s.Stop()
	}

	deps := api.Deps{
		Config: cfg, Services: svc, Redis: p.Redis, Outbox: ob, Metrics: m, Log: log,
		Tools: freeTools, Check: p.Check, HealthOnly: role != "all" && role != "api",
	}
	if mon != nil {
		deps.Monitoring = mon
	}
	handler := api.New(deps)
	srv := httpserver.New(handler, log, httpserver.Options{})
	if role == "all" { // before serving: whoever sees the service ready has the text too
		printWelcome(stdout, cfg, ln.Addr(), demoKey)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("serving", "role", role, "addr", ln.Addr().String())

	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "role", role)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	return nil
}

// printWelcome tells a newcomer of the embedded mode where to look, and
// gives the demo partner's sandbox key when demo data was seeded.
func printWelcome(w io.Writer, cfg *config.Config, addr net.Addr, demoKey *partner.Credential) {
	base := cfg.BaseURL.String()
	fmt.Fprintf(w, "\ndomaind is running (listening on %s)\n\n", addr)
	fmt.Fprintf(w, "  Start here     %s/\n", base)
	fmt.Fprintf(w, "  API reference  %s/docs   (OpenAPI: %s/openapi.json)\n", base, base)
	fmt.Fprintf(w, "  API health     %s/healthz   readiness %s/readyz\n", base, base)
	fmt.Fprintf(w, "  Metrics        %s/metrics\n", base)
	fmt.Fprintf(w, "  Dashboard      %s/ops   (queues: %s/monitoring/; both take the ops login)\n", base, base)
	if cfg.OpsCredsGenerated {
		fmt.Fprintf(w, "  Ops login      user %q  password %q  (generated for this run; set DOMAIND_OPS_USER/DOMAIND_OPS_PASSWORD to fix them)\n", cfg.OpsUser, cfg.OpsPassword)
	} else {
		fmt.Fprintf(w, "  Ops login      user %q (password from DOMAIND_OPS_PASSWORD)\n", cfg.OpsUser)
	}
	if demoKey != nil {
		fmt.Fprintf(w, "  Partner key    id %s  secret %s  (the demo partner's sandbox key, every scope; README \"Partner API\")\n", demoKey.KeyID, demoKey.Secret)
	}
	if cfg.Embedded() {
		fmt.Fprintf(w, "  Data           %s (SQLite) and an in-process Redis; stop with Ctrl-C\n", cfg.DataDir)
	}
	fmt.Fprintln(w)
}
