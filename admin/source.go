package admin

import (
	"context"
	"time"
)

// BudgetRow is one role's or one user's privacy budget as the ledger sees it.
type BudgetRow struct {
	Kind         string // KindRole or KindUser
	Name         string // the role's or the user's name
	Role         string // for a user, their role; for a role, empty or its own name
	EpsilonSpent float64
	EpsilonTotal float64 // +Inf for no limit
	DeltaSpent   float64
	DeltaTotal   float64 // +Inf for no limit
}

// Kinds of BudgetRow.
const (
	KindRole = "role"
	KindUser = "user"
)

// SpendPoint is one charge (or, with a negative Epsilon, one refund) of a
// user in Role at Time. The page sums them into cumulative ε per role.
type SpendPoint struct {
	Time    time.Time
	Role    string
	Epsilon float64
}

// Source is where the admin pages read budgets and charges from: the
// ledger, wired by the caller. Both methods are read-only.
type Source interface {
	// Budgets returns every role and every user with a budget.
	Budgets(ctx context.Context) ([]BudgetRow, error)
	// Spending returns the charges made at or after since, in any order.
	Spending(ctx context.Context, since time.Time) ([]SpendPoint, error)
}
