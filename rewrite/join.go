package rewrite

import (
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
)

// side is one table of a join of private tables on their privacy unit.
type side struct {
	alias   string // the table's alias, else its name, in lower case
	table   *policy.Table
	columns map[string]bool // the backend's columns of the table
}

// joinAnalysis is the analysis of a query over a join of two private tables
// on their privacy unit columns: FROM persons p JOIN visits v ON p.pid =
// v.pid. The policy must say that both units identify the same people (the
// same table, or the same unit_name). Then every row of the join is made of
// rows of one person, and removing a person removes exactly that person's
// join rows and changes no one else's: the join is a table whose privacy
// unit is the person, and the usual contribution bounding applies to its
// rows. A person with at most m₁ rows in one table and m₂ in the other has
// at most m₁·m₂ join rows, so the join's row bound is m₁·m₂ (the backend SQL
// enforces it whatever the data hold); its group bound is the larger of the
// two. Other conditions in ON (AND-ed with the unit equality) only filter a
// person's join rows.
func joinAnalysis(in Input, j *parser.Join) (*analysis, error) {
	var sides []side
	for _, te := range []parser.TableExpr{j.Left, j.Right} {
		tn, ok := te.(*parser.TableName)
		if !ok {
			return nil, unsupported("joins of more than two tables, or of derived tables (join two private tables on their privacy unit)")
		}
		table, ok := in.Policy.Table(tn.Name)
		if !ok {
			return nil, &UnknownTableError{Table: tn.Name}
		}
		if table.Public {
			return nil, unsupported("this join with public table %s (a private table joins a public one on the public table's unique key, two tables at a time)", table.Name)
		}
		cols, ok := in.Schema.Columns(table.Name)
		if !ok {
			return nil, &UnknownTableError{Table: tn.Name}
		}
		s := side{alias: strings.ToLower(tn.Alias), table: table, columns: map[string]bool{}}
		if s.alias == "" {
			s.alias = strings.ToLower(table.Name)
		}
		for _, c := range cols {
			s.columns[strings.ToLower(c)] = true
		}
		sides = append(sides, s)
	}
	l, r := sides[0], sides[1]
	if l.alias == r.alias {
		return nil, unsupported("a join of %s with itself needs a different alias for each side", l.table.Name)
	}
	for _, s := range sides {
		if s.table.UnitIsRow() {
			return nil, refuse("%s has one person per row and no column that identifies them, so it cannot be joined with another private table: two private tables join only on privacy unit columns that identify the same people", s.table.Name)
		}
	}
	if !l.table.SameUnit(r.table) {
		return nil, refuse("the privacy units %s.%s and %s.%s are not declared to identify the same people: give both tables the same unit_name in the policy to join them on their privacy units",
			l.table.Name, l.table.PrivacyUnit, r.table.Name, r.table.PrivacyUnit)
	}
	var keyword string
	preserved := l
	switch j.Kind {
	case "inner":
		keyword = "JOIN"
	case "left":
		keyword = "LEFT JOIN"
	case "right":
		keyword, preserved = "RIGHT JOIN", r
	default:
		return nil, unsupported("%s JOIN of private tables (use JOIN, LEFT JOIN or RIGHT JOIN on the privacy unit)", strings.ToUpper(j.Kind))
	}
	t := &policy.Table{
		Name:             l.table.Name + " JOIN " + r.table.Name,
		PrivacyUnit:      preserved.alias + "." + strings.ToLower(preserved.table.PrivacyUnit),
		MaxRowsPerUnit:   l.table.MaxRowsPerUnit * r.table.MaxRowsPerUnit,
		MaxGroupsPerUnit: max(l.table.MaxGroupsPerUnit, r.table.MaxGroupsPerUnit),
		UnitName:         l.table.UnitName,
		Columns:          map[string]*policy.Column{},
	}
	for _, s := range sides {
		for name, c := range s.table.Columns {
			t.Columns[s.alias+"."+name] = c
		}
	}
	a := blankAnalysis(in, t)
	a.sides = sides
	a.innerJoin = j.Kind == "inner"
	if err := a.checkJoinCondition(j); err != nil {
		return nil, err
	}
	a.from = func(rd *renderer) (string, error) {
		from := rd.ident(l.table.Name) + " AS " + rd.ident(l.alias) + " " + keyword + " " + rd.ident(r.table.Name) + " AS " + rd.ident(r.alias)
		if len(j.Using) > 0 {
			cols := make([]string, len(j.Using))
			for i, c := range j.Using {
				cols[i] = rd.ident(strings.ToLower(c))
			}
			return from + " USING (" + strings.Join(cols, ", ") + ")", nil
		}
		on, err := rd.expr(j.On)
		if err != nil {
			return "", err
		}
		return from + " ON " + on, nil
	}
	return a, nil
}

// checkJoinCondition requires the unit equality: ON l.unit = r.unit (alone
// or AND-ed with row-level conditions), or USING with the unit column when
// both tables name it alike.
func (a *analysis) checkJoinCondition(j *parser.Join) error {
	l, r := a.sides[0], a.sides[1]
	lu, ru := strings.ToLower(l.table.PrivacyUnit), strings.ToLower(r.table.PrivacyUnit)
	want := "two private tables join only on their privacy units: ON " + l.alias + "." + lu + " = " + r.alias + "." + ru
	if len(j.Using) > 0 {
		if lu != ru {
			return refuse("%s", want)
		}
		for _, c := range j.Using {
			name := strings.ToLower(c)
			if !l.columns[name] || !r.columns[name] {
				return &UnknownColumnError{Column: c, Table: a.table.Name}
			}
			if name == lu {
				return nil
			}
		}
		return refuse("%s", want)
	}
	if j.On == nil {
		return refuse("%s", want)
	}
	if err := a.rowLevel(j.On, "ON"); err != nil {
		return err
	}
	for _, c := range conjuncts(j.On) {
		eq, ok := c.(*parser.Binary)
		if !ok || eq.Op != parser.OpEQ {
			continue
		}
		x, xok := eq.L.(*parser.ColumnRef)
		y, yok := eq.R.(*parser.ColumnRef)
		if !xok || !yok {
			continue
		}
		xn, _ := a.column(x)
		yn, _ := a.column(y)
		lName, rName := l.alias+"."+lu, r.alias+"."+ru
		if (xn == lName && yn == rName) || (xn == rName && yn == lName) {
			return nil
		}
	}
	return refuse("%s", want)
}

// conjuncts splits e at its top-level ANDs.
func conjuncts(e parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.Binary); ok && b.Op == parser.OpAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []parser.Expr{e}
}

// joinColumn resolves a column of a join: qualified by a table's alias, or
// unqualified when one table has it. The privacy unit column, equal on both
// sides of every join row, resolves to the side the join keeps.
func (a *analysis) joinColumn(ref *parser.ColumnRef) (string, error) {
	name := strings.ToLower(ref.Name)
	if ref.Table != "" {
		q := strings.ToLower(ref.Table)
		for _, s := range a.sides {
			if s.alias != q {
				continue
			}
			if !s.columns[name] {
				return "", &UnknownColumnError{Column: ref.Table + "." + ref.Name, Table: s.table.Name}
			}
			return q + "." + name, nil
		}
		return "", &UnknownColumnError{Column: ref.Table + "." + ref.Name, Table: a.table.Name}
	}
	var found []string
	for _, s := range a.sides {
		if s.columns[name] {
			found = append(found, s.alias+"."+name)
		}
	}
	switch {
	case len(found) == 0:
		return "", &UnknownColumnError{Column: ref.Name, Table: a.table.Name}
	case len(found) == 1:
		return found[0], nil
	case a.isUnitName(found[0]) && a.isUnitName(found[1]):
		return strings.ToLower(a.table.PrivacyUnit), nil
	}
	return "", unsupported("column %s is in both tables of the join: qualify it (%s or %s)", ref.Name, found[0], found[1])
}
