package server

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/dpproxy/dpproxy/admin"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
)

// budgetSource feeds the admin budget page from the policy and the ledger.
type budgetSource struct {
	pol    *policy.Policy
	ledger ledger.Store
}

// Budgets lists every role (its pool, or the sum of its users when it has
// none) followed by its users, each with spent and total ε and δ as the
// ledger's check sees them.
func (b *budgetSource) Budgets(ctx context.Context) ([]admin.BudgetRow, error) {
	var roles []string
	for name := range b.pol.Roles {
		roles = append(roles, name)
	}
	sort.Strings(roles)
	var rows []admin.BudgetRow
	for _, name := range roles {
		role := b.pol.Roles[name]
		base := proxy.RoleLimits(role)
		var users []admin.BudgetRow
		var sumSpent ledger.Budget
		for uname, u := range b.pol.Users {
			if u.Role != name {
				continue
			}
			lim, err := b.ledger.Limits(ctx, name, uname, base)
			if err != nil {
				return nil, err
			}
			spent, err := b.ledger.UserSpent(ctx, uname)
			if err != nil {
				return nil, err
			}
			a := spent.Account(lim.User)
			sumSpent.Epsilon += a.Effective.Epsilon
			sumSpent.Delta += a.Effective.Delta
			users = append(users, admin.BudgetRow{Kind: admin.KindUser, Name: uname, Role: name,
				EpsilonSpent: a.Effective.Epsilon, EpsilonTotal: lim.User.Epsilon,
				DeltaSpent: a.Effective.Delta, DeltaTotal: lim.User.Delta})
		}
		sort.Slice(users, func(i, j int) bool { return users[i].Name < users[j].Name })
		row := admin.BudgetRow{Kind: admin.KindRole, Name: name, Role: name,
			EpsilonSpent: sumSpent.Epsilon, DeltaSpent: sumSpent.Delta,
			EpsilonTotal: inf(), DeltaTotal: inf()}
		lim, err := b.ledger.Limits(ctx, name, "", base)
		if err != nil {
			return nil, err
		}
		if lim.Pool != nil {
			spent, err := b.ledger.RoleSpent(ctx, name)
			if err != nil {
				return nil, err
			}
			a := spent.Account(*lim.Pool)
			row.EpsilonSpent, row.DeltaSpent = a.Effective.Epsilon, a.Effective.Delta
			row.EpsilonTotal, row.DeltaTotal = lim.Pool.Epsilon, lim.Pool.Delta
		}
		rows = append(rows, row)
		rows = append(rows, users...)
	}
	return rows, nil
}

// Spending lists charges since a time (refunds as negative ε), oldest first.
func (b *budgetSource) Spending(ctx context.Context, since time.Time) ([]admin.SpendPoint, error) {
	var out []admin.SpendPoint
	err := b.ledger.Walk(ctx, func(e ledger.Entry) error {
		if e.Time.Before(since) {
			return nil
		}
		switch e.Kind {
		case ledger.KindCharge:
			out = append(out, admin.SpendPoint{Time: e.Time, Role: e.Role, Epsilon: e.Epsilon})
		case ledger.KindRefund:
			out = append(out, admin.SpendPoint{Time: e.Time, Role: e.Role, Epsilon: -e.Epsilon})
		}
		return nil
	})
	return out, err
}

func inf() float64 { return math.Inf(1) }
