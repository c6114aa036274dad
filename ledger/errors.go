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
)

// BudgetError is returned by Charge when the charge would overspend a user's
// allowance or a role's shared pool. Nothing is written when it is returned.
type BudgetError struct {
	Who   string // the user, or the role when Pool is true
	Asked Budget // what the refused query needed
	Spent Budget // what was spent before it
	Total Budget // the allowance
	Pool  bool   // the role's shared pool, not the user's own allowance, ran out
}

// Error says what was asked, what is spent and what is left, e.g.
// "privacy budget exceeded for user alice: query needs ε=1 δ=1e-06, spent ε=9.5 of 10 (0.5 left), δ=0 of 1e-05 (1e-05 left)".
func (e *BudgetError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBudgetExceeded.Error())
	if e.Pool {
		fmt.Fprintf(&b, " for the shared pool of role %s", e.Who)
	} else {
		fmt.Fprintf(&b, " for user %s", e.Who)
	}
	fmt.Fprintf(&b, ": query needs ε=%g δ=%g, spent ε=%g of %g (%g left), δ=%g of %g (%g left)",
		e.Asked.Epsilon, e.Asked.Delta,
		e.Spent.Epsilon, e.Total.Epsilon, left(e.Spent.Epsilon, e.Total.Epsilon),
		e.Spent.Delta, e.Total.Delta, left(e.Spent.Delta, e.Total.Delta))
	return b.String()
}

// Is makes errors.Is(err, ErrBudgetExceeded) true for every *BudgetError.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

func left(spent, total float64) float64 { return max(0, total-spent) }
