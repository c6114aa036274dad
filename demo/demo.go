// Package demo runs dpproxy with nothing installed: an embedded SQLite
// backend filled from the project's copies of UCI Adult and the Census PUMS
// sample, a Badger ledger, and a policy with public bounds and categories for
// every column.
package demo

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the demo backend

	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/sampledata"
	"github.com/dpproxy/dpproxy/server"
)

//go:embed policy.yaml
var policyYAML []byte

// PolicyYAML is the demo's policy file as shipped.
func PolicyYAML() []byte { return policyYAML }

// Database is the database (schema) name the demo's clients see.
const Database = "demo"

// Options configure the demo.
type Options struct {
	MySQLListen string // default 127.0.0.1:3307
	PGListen    string // default 127.0.0.1:5433
	AdminListen string // metrics and the budget page; default 127.0.0.1:8433
	DataDir     string // default DefaultDataDir()
	Logger      *slog.Logger
}

// DefaultDataDir is where the demo keeps its database and ledger between
// runs: $XDG_DATA_HOME/dpproxy/demo, or ~/.local/share/dpproxy/demo.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "dpproxy", "demo")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "dpproxy", "demo")
	}
	return filepath.Join(os.TempDir(), "dpproxy-demo")
}

// Policy is the demo policy with its paths under dataDir.
func Policy(opts Options) (*policy.Policy, error) {
	pol, err := policy.Parse(policyYAML)
	if err != nil {
		return nil, fmt.Errorf("demo: the embedded policy: %w", err)
	}
	pol.Listen.MySQL = opts.MySQLListen
	pol.Listen.Postgres = opts.PGListen
	pol.Listen.Admin = opts.AdminListen
	pol.Backend.DSN = filepath.Join(opts.DataDir, "demo.db")
	pol.Ledger.Path = filepath.Join(opts.DataDir, "ledger")
	return pol, pol.Validate()
}

// Prepare creates the data directory and fills the SQLite database on first
// start; later starts find it filled and leave it alone.
func Prepare(ctx context.Context, pol *policy.Policy) error {
	if err := os.MkdirAll(filepath.Dir(pol.Backend.DSN), 0o700); err != nil {
		return fmt.Errorf("demo: creating the data directory: %w", err)
	}
	db, err := sql.Open("sqlite", pol.Backend.DSN)
	if err != nil {
		return fmt.Errorf("demo: opening %s: %w", pol.Backend.DSN, err)
	}
	defer db.Close()
	if err := sampledata.Load(ctx, db, "sqlite"); err != nil {
		return fmt.Errorf("demo: loading the sample data into %s: %w", pol.Backend.DSN, err)
	}
	return nil
}

// Start prepares and starts the demo; the caller closes the server.
func Start(ctx context.Context, opts Options) (*server.Server, error) {
	if opts.MySQLListen == "" {
		opts.MySQLListen = "127.0.0.1:3307"
	}
	if opts.PGListen == "" {
		opts.PGListen = "127.0.0.1:5433"
	}
	if opts.AdminListen == "" {
		opts.AdminListen = "127.0.0.1:8433"
	}
	if opts.DataDir == "" {
		opts.DataDir = DefaultDataDir()
	}
	pol, err := Policy(opts)
	if err != nil {
		return nil, err
	}
	if err := Prepare(ctx, pol); err != nil {
		return nil, err
	}
	return server.Start(ctx, server.Options{Policy: pol, Logger: opts.Logger, Database: Database})
}

// Run starts the demo, prints how to connect, and serves until ctx ends.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	srv, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	PrintWelcome(out, srv.MySQLAddr(), srv.PostgresAddr(), srv.AdminAddr())
	return srv.Wait(ctx)
}

// PrintWelcome tells a new user how to connect and what to try.
func PrintWelcome(out io.Writer, mysqlAddr, pgAddr, adminAddr string) {
	host, port, _ := net.SplitHostPort(mysqlAddr)
	pgHost, pgPort, _ := net.SplitHostPort(pgAddr)
	fmt.Fprintf(out, `dpproxy demo is running: a differentially private proxy in front of an
embedded SQLite database with UCI Adult (table adult) and Census PUMS (table pums,
several rows per person pid, and pums_person, one row per person).

Connect as the analyst (privacy budget ε=10, at most ε=2 per query):
  mariadb -h %[1]s -P %[2]s -u analyst -panalyst demo
  mysql   -h %[1]s -P %[2]s -u analyst -panalyst demo
  psql "host=%[3]s port=%[4]s user=analyst password=analyst dbname=demo sslmode=disable"
or as the DBA (admin, password dba): the same with -u dba / user=dba.
Budgets and metrics for DBAs: http://%[5]s/

Try:
  SELECT sex, COUNT(*), AVG(age) FROM adult GROUP BY sex;
  SELECT race, SUM(income) FROM pums WHERE age > 30 GROUP BY race;
  EXPLAIN PRIVACY SELECT education, AVG(hours_per_week) FROM adult GROUP BY education;
  SELECT p.sex, COUNT(*) FROM pums_person p JOIN pums v ON p.pid = v.pid GROUP BY p.sex;
  TRAIN PRIVATE LOGREG m ON (SELECT age, education_num, sex, income FROM adult)
    LABEL income = '>50K' WITH (epsilon = 1);
  SET dp_epsilon = 0.5;
  SHOW PRIVACY BUDGET;
  SELECT * FROM adult;      -- refused: it would reveal rows

Press Ctrl-C to stop. Data and ledger stay in the data directory.
`, host, port, pgHost, pgPort, adminAddr)
}
