package ledger

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrBudgetExceeded matches every *BudgetError with errors.Is.
	ErrBudgetExceeded = errors.New("privacy budget exceeded")
	// ErrNoSuchEntry is returned by Refund for an ID the ledger never issued.
	ErrNoSuchEntry = errors.New("no such ledger entry")
	// ErrAlreadyRefunded is returned by Refund for a charge refunded before:
	// a charge is credited back at most once.
	ErrAlreadyRefunded = errors.New("charge already refunded")
	// ErrClosed is returned by calls on a closed ledger.
	ErrClosed = errors.New("ledger: the ledger is closed")
)

// BudgetError is returned by Charge when the charge would overspend a user's
// allowance or a role's shared pool, or exceeds the role's cap per query.
// Nothing is written when it is returned.
type BudgetError struct {
	Who   string // the user, or the role when Pool or PerQuery is true
	Asked Budget // what the refused query needed
	// Spent is the allowance or pool as it was before the query (zero for
	// PerQuery); Spent.Total is the allowance.
	Spent Accounting
	// Total is the cap when PerQuery is true.
	Total    Budget
	Pool     bool // the role's shared pool, not the user's own allowance, ran out
	PerQuery bool // the query alone asks more than the role's cap per query
	// Floor is set when the query asks less ε than the role's floor per
	// query (Total.Epsilon holds the floor).
	Floor bool
}

// Error says what was asked, what is spent and what is left, e.g.
// "privacy budget exceeded for user alice: query needs ε=1 δ=1e-06, spent ε=9.5 of 10 (0.5 left; basic), δ=0 of 1e-05 (9e-06 left, 1e-06 reserved)".
func (e *BudgetError) Error() string {
	var b strings.Builder
	if e.Floor {
		return fmt.Sprintf("a query of role %s must spend at least ε=%g (min_epsilon_per_query), this one asks ε=%g", e.Who, e.Total.Epsilon, e.Asked.Epsilon)
	}
	b.WriteString(ErrBudgetExceeded.Error())
	if e.PerQuery {
		fmt.Fprintf(&b, ": a query of role %s may spend at most", e.Who)
		if e.Total.Epsilon > 0 {
			fmt.Fprintf(&b, " ε=%g", e.Total.Epsilon)
		}
		if e.Total.Delta > 0 {
			fmt.Fprintf(&b, " δ=%g", e.Total.Delta)
		}
		fmt.Fprintf(&b, ", this one needs ε=%g δ=%g", e.Asked.Epsilon, e.Asked.Delta)
		return b.String()
	}
	if e.Pool {
		fmt.Fprintf(&b, " for the shared pool of role %s", e.Who)
	} else {
		fmt.Fprintf(&b, " for user %s", e.Who)
	}
	a, left := e.Spent, e.Spent.Left()
	fmt.Fprintf(&b, ": query needs ε=%g δ=%g, spent ε=%.6g of %g (%.6g left; %s), δ=%.6g of %g (%.6g left, %.6g reserved)",
		e.Asked.Epsilon, e.Asked.Delta,
		a.Effective.Epsilon, a.Total.Epsilon, left.Epsilon, a.Mode,
		a.Effective.Delta, a.Total.Delta, left.Delta, a.Reserved)
	return b.String()
}

// Is makes errors.Is(err, ErrBudgetExceeded) true for every *BudgetError.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }
