package ledger

import "context"

// Store is the privacy-budget ledger as the engine uses it. Two
// implementations exist: *Ledger (Badger, embedded, the default) and
// etcdledger.Ledger (etcd, shared by a fleet of proxies). Both check and
// write a charge in one transaction, with the budgets set in SQL read in
// that same transaction, and account with Decide.
type Store interface {
	Reader

	// Charge records c against its user's allowance and, if the resolved
	// limits have one, its role's pool; base are the policy file's values,
	// over which the budgets set in SQL are merged (ResolveLimits) inside
	// the transaction. It returns a *BudgetError, and records nothing, if c
	// does not fit. When Charge returns without error the charge is durable.
	Charge(ctx context.Context, c Charge, base Limits) (Receipt, error)
	// Refund credits back a charge whose answer was never released.
	Refund(ctx context.Context, id string) error

	UserSpent(ctx context.Context, user string) (Spent, error)
	RoleSpent(ctx context.Context, role string) (Spent, error)
	// Limits are the limits Charge would check for user of role: base with
	// the budgets set in SQL merged over it.
	Limits(ctx context.Context, role, user string, base Limits) (Limits, error)

	// SetRoleBudget and SetUserBudget store a budget set in SQL by the
	// admin who; ResetUser sets a user's spending back to zero. Each is an
	// audit entry (KindBudget, KindReset).
	SetRoleBudget(ctx context.Context, who, role string, change BudgetChange) error
	SetUserBudget(ctx context.Context, who, user string, change BudgetChange) error
	ResetUser(ctx context.Context, who, user string) error

	// Put, Get, List and Delete keep small values beside the ledger.
	Put(ctx context.Context, namespace, key string, value []byte) error
	// Create is Put only if the key is absent, atomically (across a fleet
	// on etcd too): it returns false, and writes nothing, if it exists.
	Create(ctx context.Context, namespace, key string, value []byte) (bool, error)
	Get(ctx context.Context, namespace, key string) ([]byte, bool, error)
	List(ctx context.Context, namespace string) (map[string][]byte, error)
	Delete(ctx context.Context, namespace, key string) error

	Close() error
}

// Reader is what the offline tools (Export, Show) read.
type Reader interface {
	// Entries returns the audit trail newest first: of one user, or of
	// everyone when user is "". limit ≤ 0 means no limit.
	Entries(ctx context.Context, user string, limit int) ([]Entry, error)
	// Walk calls fn for every entry, oldest first, until fn returns an error.
	Walk(ctx context.Context, fn func(Entry) error) error
	// Totals returns every user's and every role pool's spending.
	Totals(ctx context.Context) (users, roles map[string]Spent, err error)
	// Overrides returns the budgets set in SQL.
	Overrides(ctx context.Context) (roles map[string]RoleBudget, users map[string]UserBudget, err error)
}

var _ Store = (*Ledger)(nil)
