// Command dpproxy is a differentially private SQL proxy: it sits in front of
// MySQL/MariaDB (or an embedded SQLite for the demo), answers aggregate
// queries with calibrated noise, refuses row-level reads, and charges every
// answer to a per-user privacy budget.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/demo"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/sampledata"
	"github.com/dpproxy/dpproxy/server"
)

const usage = `dpproxy — a differentially private SQL proxy

Usage:
  dpproxy serve --config dpproxy.yaml     run in front of the backend the policy names
  dpproxy demo [--mysql-listen ADDR] [--pg-listen ADDR] [--admin-listen ADDR] [--data-dir DIR]
                                          run on an embedded SQLite with sample data
  dpproxy ledger show --config dpproxy.yaml
                                          print every budget's spending (proxy stopped)
  dpproxy ledger export --config dpproxy.yaml --format csv|json
                                          write the whole audit trail (proxy stopped)
  dpproxy hash-password                   read a password on stdin, print its verifiers
  dpproxy load-sample --driver D --dsn DSN
                                          load the sample tables (adult, pums) into a database
  dpproxy version
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "demo":
		err = runDemo(ctx, os.Args[2:])
	case "hash-password":
		err = hashPassword(os.Stdin, os.Stdout)
	case "load-sample":
		err = loadSample(ctx, os.Args[2:])
	case "ledger":
		err = ledgerCommand(ctx, os.Args[2:], os.Stdout)
	case "version", "--version", "-v":
		fmt.Println("dpproxy", proxy.Version)
	case "help", "--help", "-h":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "dpproxy: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dpproxy:", err)
		os.Exit(1)
	}
}

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config := fs.String("config", "dpproxy.yaml", "the policy file")
	level := fs.String("log-level", "info", "debug | info | warn | error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := logger(*level)
	if err != nil {
		return err
	}
	pol, err := policy.Load(*config)
	if err != nil {
		return err
	}
	if pol.Ledger.Path == "" {
		return fmt.Errorf("%s: ledger.path is required", *config)
	}
	srv, err := server.Start(ctx, server.Options{Policy: pol, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Wait(ctx)
}

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	listen := fs.String("mysql-listen", "127.0.0.1:3307", "address of the MySQL front door")
	pgListen := fs.String("pg-listen", "127.0.0.1:5433", "address of the PostgreSQL front door")
	adminListen := fs.String("admin-listen", "127.0.0.1:8433", "address of the metrics and budget page")
	dataDir := fs.String("data-dir", demo.DefaultDataDir(), "where the demo keeps its database and ledger")
	level := fs.String("log-level", "warn", "debug | info | warn | error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := logger(*level)
	if err != nil {
		return err
	}
	return demo.Run(ctx, demo.Options{MySQLListen: *listen, PGListen: *pgListen, AdminListen: *adminListen, DataDir: *dataDir, Logger: log}, os.Stdout)
}

func hashPassword(in io.Reader, out io.Writer) error {
	b, err := io.ReadAll(io.LimitReader(in, 4096))
	if err != nil {
		return err
	}
	pw := string(b)
	for len(pw) > 0 && (pw[len(pw)-1] == '\n' || pw[len(pw)-1] == '\r') {
		pw = pw[:len(pw)-1]
	}
	native, scram, err := policy.HashPassword(pw)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "password_hashes: [%q, %q]\n", native, scram)
	return nil
}

func loadSample(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load-sample", flag.ContinueOnError)
	driver := fs.String("driver", "mysql", "mysql | sqlite")
	dsn := fs.String("dsn", "", "the database to load into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" {
		return fmt.Errorf("load-sample: --dsn is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	b, err := backend.Open(ctx, *driver, *dsn, 4)
	if err != nil {
		return err
	}
	defer b.Close()
	return sampledata.Load(ctx, b.DB, *driver)
}
