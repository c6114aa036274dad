package ledger

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"
)

// Export writes the whole audit trail, oldest first, for auditors: format
// "csv" is one row per entry under a header row (budget changes carry the
// old and new settings in the grammar's words); "json" is one object with
// the totals, the budgets set in SQL and every entry. It reads r while the
// proxy is stopped (dpproxy ledger export), or a live ledger's snapshot.
func Export(ctx context.Context, r Reader, w io.Writer, format string) error {
	switch format {
	case "csv":
		return exportCSV(ctx, r, w)
	case "json":
		return exportJSON(ctx, r, w)
	}
	return fmt.Errorf("ledger: export: unknown format %q (want csv or json)", format)
}

// csvHeader names the columns of a CSV export.
var csvHeader = []string{"id", "time", "kind", "outcome", "user", "role", "statement", "fingerprint",
	"mechanism", "epsilon", "delta", "rho", "delta_in_rho", "pooled", "ref", "booked", "pool_booked",
	"by", "old", "new"}

func exportCSV(ctx context.Context, r Reader, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("ledger: export: %w", err)
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	err := r.Walk(ctx, func(e Entry) error {
		var old, next string
		if e.Old != nil {
			old = e.Old.String()
		}
		if e.New != nil {
			next = e.New.String()
		}
		if e.Reset != nil {
			old = fmt.Sprintf("epsilon=%s delta=%s rho=%s charges=%d", num(e.Reset.Epsilon), num(e.Reset.Delta), num(e.Reset.Rho), e.Reset.Charges)
			next = "epsilon=0 delta=0 rho=0 charges=0"
		}
		return cw.Write([]string{e.ID, e.Time.UTC().Format(time.RFC3339Nano), e.Kind, e.Outcome, e.User, e.Role,
			e.Statement, e.Fingerprint, e.Mechanism, num(e.Epsilon), num(e.Delta), num(e.Rho), num(e.DeltaInRho),
			strconv.FormatBool(e.Pooled), e.Ref, num(e.Booked), num(e.PoolBooked), e.By, old, next})
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	if err != nil {
		return fmt.Errorf("ledger: export as CSV: %w", err)
	}
	return nil
}

// jsonExport is the head of a JSON export; entries are streamed after it.
type jsonExport struct {
	Format      string                `json:"format"`
	Users       map[string]Spent      `json:"users"`
	Pools       map[string]Spent      `json:"pools"`
	RoleBudgets map[string]RoleBudget `json:"role_budgets"`
	UserBudgets map[string]UserBudget `json:"user_budgets"`
}

type jsonEntry struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	Record
}

func exportJSON(ctx context.Context, r Reader, w io.Writer) error {
	users, pools, err := r.Totals(ctx)
	if err != nil {
		return err
	}
	roles, ubs, err := r.Overrides(ctx)
	if err != nil {
		return err
	}
	head, err := json.Marshal(jsonExport{Format: formatName, Users: users, Pools: pools, RoleBudgets: roles, UserBudgets: ubs})
	if err != nil {
		return fmt.Errorf("ledger: export as JSON: %w", err)
	}
	bw := bufio.NewWriter(w)
	// The head without its closing brace, then the entries as a streamed
	// array, so that a large trail is never held in memory.
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"entries":[`)
	first := true
	err = r.Walk(ctx, func(e Entry) error {
		raw, err := json.Marshal(jsonEntry{ID: e.ID, Time: e.Time.UTC(), Record: recordOf(e)})
		if err != nil {
			return err
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.WriteString("\n")
		_, err = bw.Write(raw)
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: export as JSON: %w", err)
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ledger: export as JSON: %w", err)
	}
	return nil
}

func recordOf(e Entry) Record {
	return Record{Kind: e.Kind, Charge: e.Charge, Outcome: e.Outcome, Pooled: e.Pooled, Ref: e.Ref,
		Booked: e.Booked, PoolBooked: e.PoolBooked, By: e.By, Old: e.Old, New: e.New, Reset: e.Reset}
}

// ShowOptions tell Show the budgets, so that it can print both accountants'
// views; without them it prints the raw sums.
type ShowOptions struct {
	// UserLimits returns a user's policy limits (before the budgets set in
	// SQL, which Show merges itself) and role; ok is false for a user the
	// policy does not know.
	UserLimits func(user string) (role string, base Limits, ok bool)
	// PoolLimits returns a role's policy limits.
	PoolLimits func(role string) (base Limits, ok bool)
	// Recent is how many of the newest entries to list (0: 20).
	Recent int
}

// Show writes a readable summary of the ledger for auditors (dpproxy ledger
// show): every user's and pool's spending under both accountants, the
// budgets set in SQL, and the newest entries.
func Show(ctx context.Context, r Reader, w io.Writer, opts ShowOptions) error {
	users, pools, err := r.Totals(ctx)
	if err != nil {
		return err
	}
	roleBudgets, userBudgets, err := r.Overrides(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tCHARGES\tΣε\tΣδ\tρ\tMODE\tEFFECTIVE")
	for _, name := range sortedKeys(users) {
		s := users[name]
		eff := "-"
		if opts.UserLimits != nil {
			if role, base, ok := opts.UserLimits(name); ok {
				lim := ResolveLimits(base, ptr(roleBudgets, role), ptr(userBudgets, name))
				eff = s.Account(lim.User).String()
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.6g\t%.6g\t%.6g\t%s\t%s\n", name, s.Charges, s.Epsilon, s.Delta, s.Rho, mode(s), eff)
	}
	fmt.Fprintln(tw, "\nROLE POOL\tCHARGES\tΣε\tΣδ\tρ\tMODE\tEFFECTIVE")
	for _, name := range sortedKeys(pools) {
		s := pools[name]
		eff := "-"
		if opts.PoolLimits != nil {
			if base, ok := opts.PoolLimits(name); ok {
				if lim := ResolveLimits(base, ptr(roleBudgets, name), nil); lim.Pool != nil {
					eff = s.Account(*lim.Pool).String()
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.6g\t%.6g\t%.6g\t%s\t%s\n", name, s.Charges, s.Epsilon, s.Delta, s.Rho, mode(s), eff)
	}
	fmt.Fprintln(tw, "\nBUDGETS SET IN SQL\tSETTING\tBY\tAT")
	for _, name := range sortedKeys(roleBudgets) {
		b := roleBudgets[name]
		fmt.Fprintf(tw, "role %s\t%s\t%s\t%s\n", name, b.BudgetChange, b.By, b.At.UTC().Format(time.RFC3339))
	}
	for _, name := range sortedKeys(userBudgets) {
		b := userBudgets[name]
		fmt.Fprintf(tw, "user %s\t%s\t%s\t%s\n", name, b.AuditChange(), b.By, b.At.UTC().Format(time.RFC3339))
	}
	n := opts.Recent
	if n <= 0 {
		n = 20
	}
	entries, err := r.Entries(ctx, "", n)
	if err != nil {
		return err
	}
	fmt.Fprintf(tw, "\nNEWEST %d ENTRIES\tKIND\tUSER\tROLE\tε\tδ\tDETAIL\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%g\t%g\t%s\n", e.Time.UTC().Format(time.RFC3339), e.ID, e.Kind, e.User, e.Role,
			e.Epsilon, e.Delta, detail(e))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("ledger: show: %w", err)
	}
	return nil
}

func detail(e Entry) string {
	switch e.Kind {
	case KindBudget:
		return fmt.Sprintf("by %s: %s -> %s", e.By, e.Old, e.New)
	case KindReset:
		if e.Reset == nil {
			return "by " + e.By
		}
		return fmt.Sprintf("by %s, had spent ε=%g over %d charges", e.By, e.Reset.Epsilon, e.Reset.Charges)
	case KindRefund:
		return "refund of " + e.Ref
	}
	s := e.Outcome
	if e.Statement != "" {
		s += ": " + e.Statement
	}
	return s
}

func mode(s Spent) string {
	if s.ZCDP {
		return ModeZCDP
	}
	return ModeBasic
}

func ptr[T any](m map[string]T, k string) *T {
	if v, ok := m[k]; ok {
		return &v
	}
	return nil
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
