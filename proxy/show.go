package proxy

import (
	"context"

	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
)

// show answers SHOW and DESCRIBE from the catalog, which never holds row
// data or statistics.
func (s *Session) show(st *parser.Show) (*Result, error) {
	cols, rows, err := s.engine.cat().Show(st, s.sessionInfo())
	if err != nil {
		return nil, err
	}
	return tableResult(cols, rows), nil
}

// budgetColumns are the columns of SHOW PRIVACY BUDGET.
var budgetColumns = []Column{
	{Name: "user", Type: TypeString},
	{Name: "role", Type: TypeString},
	{Name: "epsilon_spent", Type: TypeFloat},
	{Name: "epsilon_total", Type: TypeFloat},
	{Name: "delta_spent", Type: TypeFloat},
	{Name: "delta_total", Type: TypeFloat},
}

// showBudget answers SHOW PRIVACY BUDGET[S]. Anyone may see their own
// budget; other users' and roles' budgets are for admins.
func (s *Session) showBudget(ctx context.Context, st *parser.ShowPrivacyBudget) (*Result, error) {
	var users []string
	switch {
	case st.All:
		if !s.role.Admin {
			return nil, Errorf(CodePermission, "SHOW PRIVACY BUDGETS is for admin roles; role %s is not one", s.role.Name)
		}
		for name := range s.engine.policy.Users {
			users = append(users, name)
		}
	case st.Role != "":
		if !s.role.Admin && st.Role != s.role.Name {
			return nil, Errorf(CodePermission, "only admin roles may see the budget of role %s", st.Role)
		}
		if _, ok := s.engine.policy.Role(st.Role); !ok {
			return nil, Errorf(CodeBadValue, "unknown role '%s'", st.Role)
		}
		for name, u := range s.engine.policy.Users {
			if u.Role == st.Role {
				users = append(users, name)
			}
		}
	case st.User != "" && st.User != s.user.Name:
		if !s.role.Admin {
			return nil, Errorf(CodePermission, "only admin roles may see the budget of user %s", st.User)
		}
		if _, ok := s.engine.policy.User(st.User); !ok {
			return nil, Errorf(CodeBadValue, "unknown user '%s'", st.User)
		}
		users = []string{st.User}
	default:
		users = []string{s.user.Name}
	}
	sortStrings(users)
	res := &Result{Columns: budgetColumns}
	for _, name := range users {
		u, _ := s.engine.policy.User(name)
		role, _ := s.engine.policy.Role(u.Role)
		spent, err := s.engine.ledger.UserSpent(ctx, name)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, budgetRow(name, role.Name, spent, role.Budget.Epsilon, role.Budget.Delta))
	}
	return res, nil
}

func budgetRow(user, role string, spent ledger.Spent, epsTotal, deltaTotal float64) []Value {
	return []Value{user, role, spent.Epsilon, epsTotal, spent.Delta, deltaTotal}
}
