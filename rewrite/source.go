package rewrite

import (
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// A DP query reads one source, seen by the rest of the analysis as one
// private table with a privacy unit, contribution bounds and column bounds:
//
//   - a private table of the policy;
//   - a join of two private tables on their privacy unit columns (join.go):
//     every join row belongs to one person, so the join is a table of that
//     person's rows;
//   - a derived table that groups one private table by its privacy unit
//     (perunit.go): one row per person, a table whose unit is the row.
//
// Derived tables that only filter and project are inlined before
// (flattenDerived).

// newAnalysis starts the analysis of in.Select over the source in its FROM.
func newAnalysis(in Input) (*analysis, error) {
	switch from := in.Select.From.(type) {
	case *parser.TableName:
		return tableAnalysis(in, from)
	case *parser.Join:
		return joinAnalysis(in, from)
	case *parser.DerivedTable:
		return perUnitAnalysis(in, from)
	}
	return nil, unsupported("this FROM clause")
}

// tableAnalysis is the analysis of a query over one private table.
func tableAnalysis(in Input, tn *parser.TableName) (*analysis, error) {
	table, ok := in.Policy.Table(tn.Name)
	if !ok || table.Public {
		return nil, refuse("table %s is not a private table of the policy", tn.Name)
	}
	cols, ok := in.Schema.Columns(table.Name)
	if !ok {
		return nil, &UnknownTableError{Table: tn.Name}
	}
	a := blankAnalysis(in, table)
	a.alias = strings.ToLower(tn.Alias)
	for _, c := range cols {
		a.columns[strings.ToLower(c)] = true
	}
	return a, nil
}

func blankAnalysis(in Input, table *policy.Table) *analysis {
	return &analysis{
		in:      in,
		table:   table,
		columns: map[string]bool{},
		plan:    &Plan{Table: table, Limit: -1, aggOf: map[*parser.Func]int{}},
		aggKey:  map[string]int{},
		aliases: map[string]parser.Expr{},
	}
}

// fromSQL renders the source's relation for the backend's FROM clause.
func (a *analysis) fromSQL(r *renderer) (string, error) {
	if a.from != nil {
		return a.from(r)
	}
	return r.ident(a.table.Name), nil
}

// nameSQL renders a resolved column name (a.column's result).
func (a *analysis) nameSQL(r *renderer, name string) string {
	if a.sides != nil {
		table, col, _ := strings.Cut(name, ".")
		return r.ident(table) + "." + r.ident(col)
	}
	return r.ident(name)
}

// unitSQL renders the privacy unit column of a unit-column source.
func (a *analysis) unitSQL(r *renderer) string {
	return a.nameSQL(r, strings.ToLower(a.table.PrivacyUnit))
}

// isUnitName reports whether a resolved column name is the privacy unit (in
// a join, either table's unit column).
func (a *analysis) isUnitName(name string) bool {
	if a.table.UnitIsRow() {
		return false
	}
	if a.sides != nil {
		for _, s := range a.sides {
			if name == s.unitName() {
				return true
			}
		}
		return false
	}
	return name == strings.ToLower(a.table.PrivacyUnit)
}
