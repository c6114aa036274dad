package proxy

import (
	"context"
	"fmt"
	"sort"

	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
)

// requireAdmin refuses DBA statements to roles without admin: true.
func (s *Session) requireAdmin(what string) error {
	if !s.role.Admin {
		return Errorf(CodePermission, "%s is for admin roles; role %s is not one", what, s.role.Name)
	}
	return nil
}

// setBudget stores a budget set in SQL in the ledger, where it takes
// precedence over the policy file's starting values; the ledger records the
// change (who, when, old, new) in its audit trail.
func (s *Session) setBudget(ctx context.Context, st *parser.SetPrivacyBudget) (*Result, error) {
	if err := s.requireAdmin("SET PRIVACY BUDGET"); err != nil {
		return nil, err
	}
	ch := ledger.BudgetChange{
		Epsilon: st.Epsilon, Delta: st.Delta,
		MaxEpsilonPerQuery: st.MaxEpsilonPerQuery, MaxDeltaPerQuery: st.MaxDeltaPerQuery,
		PoolEpsilon: st.PoolEpsilon, PoolDelta: st.PoolDelta,
	}
	if err := ledger.ValidateChange(ch, st.User != ""); err != nil {
		return nil, Errorf(CodeBadValue, "%v", err)
	}
	if st.Role != "" {
		if _, ok := s.engine.policy.Role(st.Role); !ok {
			return nil, Errorf(CodeBadValue, "unknown role '%s'", st.Role)
		}
		if err := s.engine.ledger.SetRoleBudget(ctx, s.user.Name, st.Role, ch); err != nil {
			return nil, err
		}
		return &Result{Info: "SET"}, nil
	}
	if _, ok := s.engine.policy.User(st.User); !ok {
		return nil, Errorf(CodeBadValue, "unknown user '%s'", st.User)
	}
	if err := s.engine.ledger.SetUserBudget(ctx, s.user.Name, st.User, ch); err != nil {
		return nil, err
	}
	return &Result{Info: "SET"}, nil
}

// resetBudget sets a user's spending back to zero; the ledger keeps what was
// spent before in a reset entry.
func (s *Session) resetBudget(ctx context.Context, st *parser.ResetPrivacyBudget) (*Result, error) {
	if err := s.requireAdmin("RESET PRIVACY BUDGET"); err != nil {
		return nil, err
	}
	if _, ok := s.engine.policy.User(st.User); !ok {
		return nil, Errorf(CodeBadValue, "unknown user '%s'", st.User)
	}
	if err := s.engine.ledger.ResetUser(ctx, s.user.Name, st.User); err != nil {
		return nil, err
	}
	return &Result{Info: "RESET"}, nil
}

// budgetColumns are the columns of SHOW PRIVACY BUDGET[S]: the first six
// are the contract; the rest show both accountants (basic composition and
// zCDP, Bun & Steinke 2016) and which one the ledger uses.
var budgetColumns = []Column{
	{Name: "user", Type: TypeString},
	{Name: "role", Type: TypeString},
	{Name: "epsilon_spent", Type: TypeFloat},
	{Name: "epsilon_total", Type: TypeFloat},
	{Name: "delta_spent", Type: TypeFloat},
	{Name: "delta_total", Type: TypeFloat},
	{Name: "epsilon_basic", Type: TypeFloat},
	{Name: "epsilon_zcdp", Type: TypeFloat},
	{Name: "rho", Type: TypeFloat},
	{Name: "accountant", Type: TypeString},
	{Name: "queries", Type: TypeInt},
}

// showBudget answers SHOW PRIVACY BUDGET[S]. Anyone may see their own
// budget; other users' and roles' budgets are for admins. A role's row shows
// its shared pool (user "(pool)") when it has one.
func (s *Session) showBudget(ctx context.Context, st *parser.ShowPrivacyBudget) (*Result, error) {
	var users, roles []string
	switch {
	case st.All:
		if err := s.requireAdmin("SHOW PRIVACY BUDGETS"); err != nil {
			return nil, err
		}
		for name := range s.engine.policy.Users {
			users = append(users, name)
		}
		for name := range s.engine.policy.Roles {
			roles = append(roles, name)
		}
	case st.Role != "":
		if !s.role.Admin && st.Role != s.role.Name {
			return nil, Errorf(CodePermission, "only admin roles may see the budget of role %s", st.Role)
		}
		if _, ok := s.engine.policy.Role(st.Role); !ok {
			return nil, Errorf(CodeBadValue, "unknown role '%s'", st.Role)
		}
		roles = []string{st.Role}
		for name, u := range s.engine.policy.Users {
			if u.Role == st.Role && (s.role.Admin || name == s.user.Name) {
				users = append(users, name)
			}
		}
	case st.User != "" && st.User != s.user.Name:
		if err := s.requireAdmin("SHOW PRIVACY BUDGET FOR USER"); err != nil {
			return nil, err
		}
		if _, ok := s.engine.policy.User(st.User); !ok {
			return nil, Errorf(CodeBadValue, "unknown user '%s'", st.User)
		}
		users = []string{st.User}
	default:
		users = []string{s.user.Name}
	}
	sort.Strings(users)
	sort.Strings(roles)
	res := &Result{Columns: budgetColumns}
	for _, role := range roles {
		r, _ := s.engine.policy.Role(role)
		lim, err := s.engine.ledger.Limits(ctx, role, "", RoleLimits(r))
		if err != nil {
			return nil, err
		}
		if lim.Pool == nil {
			continue
		}
		spent, err := s.engine.ledger.RoleSpent(ctx, role)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, budgetRow("(pool)", role, spent, *lim.Pool))
	}
	for _, name := range users {
		u, _ := s.engine.policy.User(name)
		role, _ := s.engine.policy.Role(u.Role)
		lim, err := s.engine.ledger.Limits(ctx, role.Name, name, RoleLimits(role))
		if err != nil {
			return nil, err
		}
		spent, err := s.engine.ledger.UserSpent(ctx, name)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, budgetRow(name, role.Name, spent, lim.User))
	}
	return res, nil
}

// budgetRow shows a spending against its budget: spent is what the ledger's
// check uses (the tighter accountant), next to both accountants' ε.
func budgetRow(user, role string, spent ledger.Spent, total ledger.Budget) []Value {
	a := spent.Account(total)
	return []Value{user, role, a.Effective.Epsilon, total.Epsilon, a.Effective.Delta, total.Delta,
		a.Basic.Epsilon, a.ZCDP.Epsilon, a.Rho, a.Mode, int64(spent.Charges)}
}

// ledgerColumns are the columns of SHOW PRIVACY LEDGER.
var ledgerColumns = []Column{
	{Name: "time", Type: TypeString},
	{Name: "kind", Type: TypeString},
	{Name: "user", Type: TypeString},
	{Name: "role", Type: TypeString},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "delta", Type: TypeFloat},
	{Name: "rho", Type: TypeFloat},
	{Name: "mechanism", Type: TypeString},
	{Name: "outcome", Type: TypeString},
	{Name: "statement", Type: TypeString},
	{Name: "fingerprint", Type: TypeString},
	{Name: "by", Type: TypeString},
	{Name: "detail", Type: TypeString},
	{Name: "id", Type: TypeString},
}

// showLedger answers SHOW PRIVACY LEDGER: the audit trail, newest first.
// Users see their own entries; admins anyone's.
func (s *Session) showLedger(ctx context.Context, st *parser.ShowPrivacyLedger) (*Result, error) {
	user := st.User
	if !s.role.Admin {
		if user != "" && user != s.user.Name {
			return nil, Errorf(CodePermission, "only admin roles may see the ledger of user %s", user)
		}
		user = s.user.Name
	}
	limit := st.Limit
	if limit == 0 {
		limit = 100
	}
	entries, err := s.engine.ledger.Entries(ctx, user, limit)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: ledgerColumns}
	for _, e := range entries {
		detail := ""
		switch {
		case e.New != nil:
			detail = "new: " + e.New.String()
			if e.Old != nil {
				detail = "old: " + e.Old.String() + "; " + detail
			}
		case e.Reset != nil:
			detail = fmt.Sprintf("spent before reset: ε=%g δ=%g", e.Reset.Epsilon, e.Reset.Delta)
		}
		res.Rows = append(res.Rows, []Value{
			e.Time.UTC().Format("2006-01-02 15:04:05.000000"), e.Kind, e.User, e.Role,
			e.Epsilon, e.Delta, e.Rho, e.Mechanism, e.Outcome, e.Statement, e.Fingerprint, e.By, detail, e.ID,
		})
	}
	return res, nil
}
