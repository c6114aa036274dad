package etcdledger

import (
	"context"
	"fmt"
	"time"

	"github.com/dpproxy/dpproxy/ledger"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// SetRoleBudget stores a role's budget set in SQL, as ledger.Store says.
func (l *Ledger) SetRoleBudget(ctx context.Context, who, role string, change ledger.BudgetChange) error {
	if role == "" {
		return fmt.Errorf("etcdledger: set a role's budget: no role named")
	}
	if err := ledger.ValidateChange(change, false); err != nil {
		return fmt.Errorf("etcdledger: set the budget of role %s: %w", role, err)
	}
	key := l.keyRoleBudget(role)
	err := l.update(ctx, key, func(r reads, id string, at time.Time) ([]clientv3.Op, error) {
		var old ledger.RoleBudget
		if err := r.decode(key, &old); err != nil {
			return nil, err
		}
		next := ledger.ApplyRole(old, change, who, at)
		ops, err := l.entryOps(id, ledger.Record{Kind: ledger.KindBudget, Charge: ledger.Charge{Role: role}, By: who,
			Old: &old.BudgetChange, New: &next.BudgetChange})
		if err != nil {
			return nil, err
		}
		put, err := putJSON(key, next)
		return append(ops, put), err
	})
	if err != nil {
		return fmt.Errorf("etcdledger: set the budget of role %s: %w", role, err)
	}
	return nil
}

// SetUserBudget stores a user's allowance set in SQL, as ledger.Store says.
func (l *Ledger) SetUserBudget(ctx context.Context, who, user string, change ledger.BudgetChange) error {
	if user == "" {
		return fmt.Errorf("etcdledger: set a user's budget: no user named")
	}
	if err := ledger.ValidateChange(change, true); err != nil {
		return fmt.Errorf("etcdledger: set the budget of user %s: %w", user, err)
	}
	key := l.keyUserBudget(user)
	err := l.update(ctx, key, func(r reads, id string, at time.Time) ([]clientv3.Op, error) {
		var old ledger.UserBudget
		if err := r.decode(key, &old); err != nil {
			return nil, err
		}
		next := ledger.ApplyUser(old, change, who, at)
		o, n := old.AuditChange(), next.AuditChange()
		ops, err := l.entryOps(id, ledger.Record{Kind: ledger.KindBudget, Charge: ledger.Charge{User: user}, By: who, Old: &o, New: &n})
		if err != nil {
			return nil, err
		}
		put, err := putJSON(key, next)
		return append(ops, put), err
	})
	if err != nil {
		return fmt.Errorf("etcdledger: set the budget of user %s: %w", user, err)
	}
	return nil
}

// ResetUser sets a user's spending back to zero, as ledger.Store says.
func (l *Ledger) ResetUser(ctx context.Context, who, user string) error {
	if user == "" {
		return fmt.Errorf("etcdledger: reset: no user named")
	}
	key := l.keyUser(user)
	err := l.update(ctx, key, func(r reads, id string, _ time.Time) ([]clientv3.Op, error) {
		var old ledger.Spent
		if err := r.decode(key, &old); err != nil {
			return nil, err
		}
		ops, err := l.entryOps(id, ledger.Record{Kind: ledger.KindReset, Charge: ledger.Charge{User: user}, By: who, Reset: &old})
		if err != nil {
			return nil, err
		}
		put, err := putJSON(key, ledger.Spent{Epoch: id})
		return append(ops, put), err
	})
	if err != nil {
		return fmt.Errorf("etcdledger: reset the budget of user %s: %w", user, err)
	}
	return nil
}

// update reads key, builds the writes with fn (given a fresh entry ID and its
// time) and commits them if key did not change meanwhile, retrying if it did.
func (l *Ledger) update(ctx context.Context, key string, fn func(r reads, id string, at time.Time) ([]clientv3.Op, error)) error {
	return l.retry(ctx, func() (bool, error) {
		r, err := l.read(ctx, key)
		if err != nil {
			return false, err
		}
		id, at, err := newID()
		if err != nil {
			return false, err
		}
		ops, err := fn(r, id, at)
		if err != nil {
			return false, err
		}
		return l.commit(ctx, r, ops)
	})
}

// Limits resolves base with the budgets set in SQL, as ledger.Store says.
func (l *Ledger) Limits(ctx context.Context, role, user string, base ledger.Limits) (ledger.Limits, error) {
	roleKey, ubKey := l.keyRoleBudget(role), l.keyUserBudget(user)
	r, err := l.read(ctx, roleKey, ubKey)
	if err != nil {
		return ledger.Limits{}, fmt.Errorf("etcdledger: read the budgets of user %s: %w", user, err)
	}
	var rb *ledger.RoleBudget
	if role != "" {
		if rb, err = decodeOpt[ledger.RoleBudget](r, roleKey); err != nil {
			return ledger.Limits{}, fmt.Errorf("etcdledger: read the budget of role %s: %w", role, err)
		}
	}
	ub, err := decodeOpt[ledger.UserBudget](r, ubKey)
	if err != nil {
		return ledger.Limits{}, fmt.Errorf("etcdledger: read the budget of user %s: %w", user, err)
	}
	return ledger.ResolveLimits(base, rb, ub), nil
}

// Overrides returns every budget set in SQL.
func (l *Ledger) Overrides(ctx context.Context) (map[string]ledger.RoleBudget, map[string]ledger.UserBudget, error) {
	roles, err := scanJSON[ledger.RoleBudget](ctx, l, l.prefix+"b/r/")
	if err != nil {
		return nil, nil, fmt.Errorf("etcdledger: read the budgets set in SQL: %w", err)
	}
	users, err := scanJSON[ledger.UserBudget](ctx, l, l.prefix+"b/u/")
	if err != nil {
		return nil, nil, fmt.Errorf("etcdledger: read the budgets set in SQL: %w", err)
	}
	return roles, users, nil
}
