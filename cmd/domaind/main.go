// Command domaind runs the domain search, marketplace and partner-sales
// service. One binary, several roles:
//
//	domaind [all]     every role in one process (the default; embedded mode when no URLs are set)
//	domaind api       the HTTP API
//	domaind worker    the task worker
//	domaind scheduler the periodic-task scheduler
//	domaind dashboard the queue dashboard (asynqmon) under /monitoring
//	domaind migrate   apply database migrations and exit
//	domaind seed      migrate, then load the demo data, and exit
//	domaind partner   manage partners and their credentials (see partnerUsage)
//
// Configuration comes only from DOMAIND_* environment variables (see docs/operations.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // while shutting down, a second signal kills at once
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "domaind:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a wrong command line.
type usageError string

func (e usageError) Error() string { return string(e) }

const usage = `usage: domaind [all|api|worker|scheduler|dashboard|migrate|seed [--listings N]|partner ...]

seed --listings N adds N marketplace listings (demo data, for benchmarks)
partner create|approve|credential|revoke|list manages partners (domaind partner help)`

// command is a parsed command line.
type command struct {
	role     string
	listings int      // seed only: marketplace listings to add
	partner  []string // partner only: the subcommand and its arguments
}

// run is main without the process: arguments, environment and output come in,
// an error goes out. It returns when ctx ends and every role has stopped.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := command{role: "all"}
	if len(args) > 0 {
		cmd.role, args = args[0], args[1:]
	}
	switch cmd.role {
	case "all", "api", "worker", "scheduler", "dashboard", "migrate", "seed":
	case "partner":
		if err := checkPartnerArgs(args); err != nil {
			return err
		}
		cmd.partner, args = args, nil
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return usageError(fmt.Sprintf("unknown role %q; %s", cmd.role, usage))
	}
	if cmd.role == "seed" {
		fs := flag.NewFlagSet("seed", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.IntVar(&cmd.listings, "listings", 0, "")
		if err := fs.Parse(args); err != nil || cmd.listings < 0 {
			return usageError(usage)
		}
		args = fs.Args()
	}
	if len(args) > 0 {
		return usageError(usage)
	}
	isTerminal := false
	if f, ok := stderr.(*os.File); ok {
		isTerminal = term.IsTerminal(int(f.Fd()))
	}
	return start(ctx, cmd, getenv, isTerminal, stdout, stderr)
}
