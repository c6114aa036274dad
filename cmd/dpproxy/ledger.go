package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/server"
)

// ledgerCommand reads the ledger offline, for auditors: `dpproxy ledger
// show` prints every user's and pool's spending and the newest entries;
// `dpproxy ledger export --format csv|json` writes the whole audit trail.
// The Badger ledger is locked by a running proxy, so stop it first (an etcd
// ledger can be read while proxies run).
func ledgerCommand(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "show" && args[0] != "export") {
		return fmt.Errorf("usage: dpproxy ledger show|export --config dpproxy.yaml [--format csv|json] [--recent N]")
	}
	fs := flag.NewFlagSet("ledger "+args[0], flag.ContinueOnError)
	config := fs.String("config", "dpproxy.yaml", "the policy file (names the ledger and the budgets)")
	format := fs.String("format", "csv", "export format: csv or json")
	recent := fs.Int("recent", 20, "show: how many of the newest entries to list")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	pol, err := policy.Load(*config)
	if err != nil {
		return err
	}
	store, err := server.OpenLedger(ctx, pol, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer store.Close()
	if args[0] == "export" {
		return ledger.Export(ctx, store, out, *format)
	}
	return ledger.Show(ctx, store, out, ledger.ShowOptions{
		Recent: *recent,
		UserLimits: func(user string) (string, ledger.Limits, bool) {
			u, ok := pol.User(user)
			if !ok {
				return "", ledger.Limits{}, false
			}
			role, ok := pol.Role(u.Role)
			if !ok {
				return "", ledger.Limits{}, false
			}
			return role.Name, proxy.RoleLimits(role), true
		},
		PoolLimits: func(name string) (ledger.Limits, bool) {
			role, ok := pol.Role(name)
			if !ok {
				return ledger.Limits{}, false
			}
			return proxy.RoleLimits(role), true
		},
	})
}
