package ledger

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// SetRoleBudget stores a change to role's budget made in SQL by the admin
// who, and records it in the audit trail with the budget before and after.
// Budgets set in SQL take precedence over the policy file's.
func (l *Ledger) SetRoleBudget(ctx context.Context, who, role string, change BudgetChange) error {
	if err := checkChange(role, change, false); err != nil {
		return fmt.Errorf("ledger: set the budget of role %s: %w", role, err)
	}
	id, err := l.newID()
	if err == nil {
		err = l.submit(ctx, func(txn *badger.Txn) (error, error) {
			var old RoleBudget
			if _, err := getJSON(txn, keyRoleBudget(role), &old); err != nil {
				return nil, err
			}
			next := ApplyRole(old, change, who, id.time())
			if err := putJSON(txn, keyRoleBudget(role), next); err != nil {
				return nil, err
			}
			return nil, writeEntry(txn, id, Record{Kind: KindBudget, Charge: Charge{Role: role}, By: who,
				Old: &old.BudgetChange, New: &next.BudgetChange})
		})
	}
	if err != nil {
		return fmt.Errorf("ledger: set the budget of role %s: %w", role, err)
	}
	return nil
}

// SetUserBudget stores a user's own allowance set in SQL by the admin who;
// it overrides the allowance of the user's role. Only Epsilon and Delta of
// change may be set.
func (l *Ledger) SetUserBudget(ctx context.Context, who, user string, change BudgetChange) error {
	if err := checkChange(user, change, true); err != nil {
		return fmt.Errorf("ledger: set the budget of user %s: %w", user, err)
	}
	id, err := l.newID()
	if err == nil {
		err = l.submit(ctx, func(txn *badger.Txn) (error, error) {
			var old UserBudget
			if _, err := getJSON(txn, keyUserBudget(user), &old); err != nil {
				return nil, err
			}
			next := ApplyUser(old, change, who, id.time())
			if err := putJSON(txn, keyUserBudget(user), next); err != nil {
				return nil, err
			}
			o, n := old.AuditChange(), next.AuditChange()
			return nil, writeEntry(txn, id, Record{Kind: KindBudget, Charge: Charge{User: user}, By: who, Old: &o, New: &n})
		})
	}
	if err != nil {
		return fmt.Errorf("ledger: set the budget of user %s: %w", user, err)
	}
	return nil
}

// ResetUser sets what user has spent back to zero, by the admin who, and
// records the reset with what was spent before it. Only the user's own
// allowance is reset: what the user drew from the role's pool stays drawn.
// A charge made before the reset and refunded after it no longer changes
// the user's totals.
func (l *Ledger) ResetUser(ctx context.Context, who, user string) error {
	if user == "" {
		return fmt.Errorf("ledger: reset: no user named")
	}
	id, err := l.newID()
	if err == nil {
		err = l.submit(ctx, func(txn *badger.Txn) (error, error) {
			var old Spent
			if _, err := getJSON(txn, keyUserTotals(user), &old); err != nil {
				return nil, err
			}
			if err := putJSON(txn, keyUserTotals(user), Spent{Epoch: id.String()}); err != nil {
				return nil, err
			}
			return nil, writeEntry(txn, id, Record{Kind: KindReset, Charge: Charge{User: user}, By: who, Reset: &old})
		})
	}
	if err != nil {
		return fmt.Errorf("ledger: reset the budget of user %s: %w", user, err)
	}
	return nil
}

// Overrides returns every budget set in SQL.
func (l *Ledger) Overrides(ctx context.Context) (map[string]RoleBudget, map[string]UserBudget, error) {
	roles := map[string]RoleBudget{}
	users := map[string]UserBudget{}
	err := l.db.View(func(txn *badger.Txn) error {
		if err := scanJSON(ctx, txn, []byte(tagRoleBudget), func(name string, v *RoleBudget) { roles[name] = *v }); err != nil {
			return err
		}
		return scanJSON(ctx, txn, []byte(tagUserBudget), func(name string, v *UserBudget) { users[name] = *v })
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: read the budgets set in SQL: %w", err)
	}
	return roles, users, nil
}

// Limits returns base with the budgets set in SQL for role and user merged
// over it: what Charge checks.
func (l *Ledger) Limits(ctx context.Context, role, user string, base Limits) (Limits, error) {
	if err := ctx.Err(); err != nil {
		return Limits{}, err
	}
	var lim Limits
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		lim, err = limitsTxn(txn, role, user, base)
		return err
	})
	if err != nil {
		return Limits{}, fmt.Errorf("ledger: read the budgets of user %s: %w", user, err)
	}
	return lim, nil
}

func checkChange(name string, change BudgetChange, forUser bool) error {
	if name == "" {
		return fmt.Errorf("no name given")
	}
	return ValidateChange(change, forUser)
}

// scanJSON decodes every value under prefix, passing the key without the
// prefix.
func scanJSON[T any](ctx context.Context, txn *badger.Txn, prefix []byte, fn func(string, *T)) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var v T
		key := it.Item().KeyCopy(nil)
		if err := it.Item().Value(func(raw []byte) error { return json.Unmarshal(raw, &v) }); err != nil {
			return fmt.Errorf("decode %q: %w", key, err)
		}
		fn(string(key[len(prefix):]), &v)
	}
	return nil
}
