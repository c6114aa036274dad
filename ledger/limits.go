package ledger

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Budget is an (ε, δ) allowance or amount.
type Budget struct{ Epsilon, Delta float64 }

// Limits are what one charge is checked against.
type Limits struct {
	User Budget  // the user's own total allowance
	Pool *Budget // optional: the role's pool shared by all its users
	// MaxPerQuery caps one charge's ε and δ; a zero field is no cap.
	MaxPerQuery Budget
	// MinEpsilonPerQuery is the least ε one charge may ask (0: no floor).
	// Without it a probe at ε = 5e-324 would be all but free.
	MinEpsilonPerQuery float64
}

// BudgetChange is a change DBAs make in SQL (SET PRIVACY BUDGET ...). A nil
// field is left as it was. For a user only Epsilon and Delta apply.
type BudgetChange struct {
	Epsilon            *float64 `json:"epsilon,omitempty"` // each user's allowance
	Delta              *float64 `json:"delta,omitempty"`
	MaxEpsilonPerQuery *float64 `json:"max_epsilon_per_query,omitempty"`
	MaxDeltaPerQuery   *float64 `json:"max_delta_per_query,omitempty"`
	PoolEpsilon        *float64 `json:"pool_epsilon,omitempty"` // the role's shared pool
	PoolDelta          *float64 `json:"pool_delta,omitempty"`
}

// RoleBudget is the budget of a role as set in SQL: the fields set override
// the policy file's; By and At say who set it last, and when.
type RoleBudget struct {
	BudgetChange
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// UserBudget is a user's own allowance as set in SQL; it overrides the
// allowance of the user's role.
type UserBudget struct {
	Epsilon *float64  `json:"epsilon,omitempty"`
	Delta   *float64  `json:"delta,omitempty"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// ResolveLimits merges the budgets set in SQL over the policy file's starting
// values base: the role's setting over base, the user's over the role's
// per-user allowance. A pool set in SQL for a role without one in the policy
// takes the role's per-user δ unless its δ is set too. Charge resolves the
// limits itself, in the transaction that checks them; the engine calls
// ResolveLimits (or Ledger.Limits) only to show them.
func ResolveLimits(base Limits, role *RoleBudget, user *UserBudget) Limits {
	lim := base
	if base.Pool != nil {
		p := *base.Pool
		lim.Pool = &p
	}
	if role != nil {
		set(&lim.User.Epsilon, role.Epsilon)
		set(&lim.User.Delta, role.Delta)
		set(&lim.MaxPerQuery.Epsilon, role.MaxEpsilonPerQuery)
		set(&lim.MaxPerQuery.Delta, role.MaxDeltaPerQuery)
		if role.PoolEpsilon != nil || role.PoolDelta != nil {
			if lim.Pool == nil {
				lim.Pool = &Budget{Delta: lim.User.Delta}
			}
			set(&lim.Pool.Epsilon, role.PoolEpsilon)
			set(&lim.Pool.Delta, role.PoolDelta)
		}
	}
	if user != nil {
		set(&lim.User.Epsilon, user.Epsilon)
		set(&lim.User.Delta, user.Delta)
	}
	return lim
}

func set(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

// apply returns r with ch applied.
func (r RoleBudget) apply(ch BudgetChange, by string, at time.Time) RoleBudget {
	for _, f := range []struct{ dst, src **float64 }{
		{&r.Epsilon, &ch.Epsilon}, {&r.Delta, &ch.Delta},
		{&r.MaxEpsilonPerQuery, &ch.MaxEpsilonPerQuery}, {&r.MaxDeltaPerQuery, &ch.MaxDeltaPerQuery},
		{&r.PoolEpsilon, &ch.PoolEpsilon}, {&r.PoolDelta, &ch.PoolDelta},
	} {
		if *f.src != nil {
			v := **f.src
			*f.dst = &v
		}
	}
	r.By, r.At = by, at
	return r
}

func (u UserBudget) apply(ch BudgetChange, by string, at time.Time) UserBudget {
	if ch.Epsilon != nil {
		v := *ch.Epsilon
		u.Epsilon = &v
	}
	if ch.Delta != nil {
		v := *ch.Delta
		u.Delta = &v
	}
	u.By, u.At = by, at
	return u
}

// ApplyRole and ApplyUser are the stored budgets after a change; both ledger
// implementations use them.
func ApplyRole(old RoleBudget, ch BudgetChange, by string, at time.Time) RoleBudget {
	return old.apply(ch, by, at)
}

func ApplyUser(old UserBudget, ch BudgetChange, by string, at time.Time) UserBudget {
	return old.apply(ch, by, at)
}

// AuditChange is the user budget as a BudgetChange, for the audit trail.
func (u UserBudget) AuditChange() BudgetChange {
	return BudgetChange{Epsilon: u.Epsilon, Delta: u.Delta}
}

// ValidateChange checks a change before it is stored: every value finite,
// ε ≥ 0, 0 ≤ δ < 1; forUser allows only the allowance.
func ValidateChange(ch BudgetChange, forUser bool) error {
	if forUser && (ch.MaxEpsilonPerQuery != nil || ch.MaxDeltaPerQuery != nil || ch.PoolEpsilon != nil || ch.PoolDelta != nil) {
		return errors.New("a user's budget has only EPSILON and DELTA; per-query caps and pools belong to roles")
	}
	empty := true
	for _, f := range ch.fields() {
		if f.v == nil {
			continue
		}
		empty = false
		x := *f.v
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("%s %g is not a finite number, 0 or above", f.name, x)
		}
		if strings.Contains(f.name, "DELTA") && x >= 1 {
			return fmt.Errorf("%s %g must be below 1", f.name, x)
		}
	}
	if empty {
		return errors.New("the change sets nothing")
	}
	return nil
}

type field struct {
	name string
	v    *float64
}

func (ch BudgetChange) fields() []field {
	return []field{{"EPSILON", ch.Epsilon}, {"DELTA", ch.Delta},
		{"MAX EPSILON PER QUERY", ch.MaxEpsilonPerQuery}, {"MAX DELTA PER QUERY", ch.MaxDeltaPerQuery},
		{"POOL EPSILON", ch.PoolEpsilon}, {"POOL DELTA", ch.PoolDelta}}
}

// String lists the fields set, in the grammar's words, e.g.
// "EPSILON 10 DELTA 1e-05 POOL EPSILON 30"; "(policy file)" if none is set.
func (ch BudgetChange) String() string {
	var parts []string
	for _, f := range ch.fields() {
		if f.v != nil {
			parts = append(parts, f.name+" "+strconv.FormatFloat(*f.v, 'g', -1, 64))
		}
	}
	if len(parts) == 0 {
		return "(policy file)"
	}
	return strings.Join(parts, " ")
}
