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
	// How the table joins the ones before it (empty for the first).
	kind    string // the parser's join kind: inner, left, right, ...
	keyword string // its SQL: JOIN, LEFT JOIN or RIGHT JOIN
	on      parser.Expr
	using   []string
}

// unitName is the resolved name of the side's privacy unit column.
func (s side) unitName() string { return s.alias + "." + strings.ToLower(s.table.PrivacyUnit) }

// joinAnalysis is the analysis of a query over a join of private tables on
// their privacy unit columns: FROM persons p JOIN visits v ON p.pid = v.pid
// [JOIN ...]. The policy must say that every unit identifies the same
// people (the same table, or the same unit_name), and each table after the
// first must join on its unit equal to the unit of a table before it. Then
// every row of the join is made of rows of one person, and removing a person
// removes exactly that person's join rows and changes no one else's: the
// join is a table whose privacy unit is the person, and the usual
// contribution bounding applies to its rows. A person with at most mᵢ rows
// in table i has at most Π mᵢ join rows, so that is the join's row bound
// (the backend SQL enforces it whatever the data hold); its group bound is
// the largest of the tables'. Other conditions in ON (AND-ed with the unit
// equality) only filter a person's join rows.
func joinAnalysis(in Input, j *parser.Join) (*analysis, error) {
	sides, err := joinSides(in, j)
	if err != nil {
		return nil, err
	}
	first := sides[0]
	seen := map[string]bool{}
	for _, s := range sides {
		if seen[s.alias] {
			return nil, unsupported("a join that reads %s twice needs a different alias for each", s.table.Name)
		}
		seen[s.alias] = true
		if s.table.UnitIsRow() {
			return nil, refuse("%s has one person per row and no column that identifies them, so it cannot be joined with another private table: two private tables join only on privacy unit columns that identify the same people", s.table.Name)
		}
		if !first.table.SameUnit(s.table) {
			return nil, refuse("the privacy units %s.%s and %s.%s are not declared to identify the same people: give both tables the same unit_name in the policy to join them on their privacy units",
				first.table.Name, first.table.PrivacyUnit, s.table.Name, s.table.PrivacyUnit)
		}
	}
	// The person's id is the unit of the table the join keeps whole: the
	// first, or the second of a RIGHT JOIN.
	preserved, inner := first, true
	for i := range sides[1:] {
		s := &sides[i+1]
		switch s.kind {
		case "inner":
			s.keyword = "JOIN"
		case "left":
			s.keyword = "LEFT JOIN"
		case "right":
			s.keyword = "RIGHT JOIN"
		default:
			return nil, unsupported("%s JOIN of private tables (use JOIN, LEFT JOIN or RIGHT JOIN on the privacy unit)", strings.ToUpper(s.kind))
		}
		switch s.keyword {
		case "RIGHT JOIN":
			if len(sides) > 2 {
				return nil, unsupported("RIGHT JOIN in a join of more than two private tables (write it as a LEFT JOIN)")
			}
			preserved = *s
			inner = false
		case "LEFT JOIN":
			inner = false
		}
	}
	t := &policy.Table{
		Name:             joinName(sides),
		PrivacyUnit:      preserved.unitName(),
		MaxRowsPerUnit:   1,
		MaxGroupsPerUnit: 1,
		UnitName:         first.table.UnitName,
		Columns:          map[string]*policy.Column{},
	}
	for _, s := range sides {
		t.MaxRowsPerUnit *= s.table.MaxRowsPerUnit
		t.MaxGroupsPerUnit = max(t.MaxGroupsPerUnit, s.table.MaxGroupsPerUnit)
		for name, c := range s.table.Columns {
			t.Columns[s.alias+"."+name] = c
		}
	}
	a := blankAnalysis(in, t)
	a.sides = sides
	a.innerJoin = inner
	for i := 1; i < len(sides); i++ {
		if err := a.checkJoinCondition(i); err != nil {
			return nil, err
		}
	}
	a.from = func(rd *renderer) (string, error) {
		from := rd.ident(first.table.Name) + " AS " + rd.ident(first.alias)
		for _, s := range sides[1:] {
			from += " " + s.keyword + " " + rd.ident(s.table.Name) + " AS " + rd.ident(s.alias)
			if len(s.using) > 0 {
				cols := make([]string, len(s.using))
				for i, c := range s.using {
					cols[i] = rd.ident(strings.ToLower(c))
				}
				from += " USING (" + strings.Join(cols, ", ") + ")"
				continue
			}
			on, err := rd.expr(s.on)
			if err != nil {
				return "", err
			}
			from += " ON " + on
		}
		return from, nil
	}
	return a, nil
}

// joinSides flattens a left-deep join (((a JOIN b) JOIN c) ...) into its
// tables, each with how it joins those before it.
func joinSides(in Input, te parser.TableExpr) ([]side, error) {
	var sides []side
	var next parser.TableExpr = te
	var tail []side // collected right to left
	for {
		j, ok := next.(*parser.Join)
		if !ok {
			break
		}
		s, err := joinSide(in, j.Right)
		if err != nil {
			return nil, err
		}
		s.kind, s.on, s.using = j.Kind, j.On, j.Using
		tail = append(tail, s)
		next = j.Left
	}
	s, err := joinSide(in, next)
	if err != nil {
		return nil, err
	}
	sides = append(sides, s)
	for i := len(tail) - 1; i >= 0; i-- {
		sides = append(sides, tail[i])
	}
	return sides, nil
}

// joinSide resolves one table of a join.
func joinSide(in Input, te parser.TableExpr) (side, error) {
	tn, ok := te.(*parser.TableName)
	if !ok {
		return side{}, unsupported("joins of derived tables or nested joins (join private tables on their privacy unit, one after the other)")
	}
	table, ok := in.Policy.Table(tn.Name)
	if !ok {
		return side{}, &UnknownTableError{Table: tn.Name}
	}
	if table.Public {
		return side{}, unsupported("this join with public table %s (a public table joins on its unique key, as the right side of an INNER or LEFT JOIN after a private table)", table.Name)
	}
	cols, ok := in.Schema.Columns(table.Name)
	if !ok {
		return side{}, &UnknownTableError{Table: tn.Name}
	}
	s := side{alias: strings.ToLower(tn.Alias), table: table, columns: map[string]bool{}}
	if s.alias == "" {
		s.alias = strings.ToLower(table.Name)
	}
	for _, c := range cols {
		s.columns[strings.ToLower(c)] = true
	}
	return s, nil
}

func joinName(sides []side) string {
	names := make([]string, len(sides))
	for i, s := range sides {
		names[i] = s.table.Name
	}
	return strings.Join(names, " JOIN ")
}

// checkJoinCondition requires that table i joins on its unit equal to the
// unit of a table before it: ON earlier.unit = this.unit (alone or AND-ed
// with row-level conditions), or USING with the unit column when the tables
// name it alike.
func (a *analysis) checkJoinCondition(i int) error {
	s := a.sides[i]
	want := "private tables join only on their privacy units: ON " + a.sides[0].unitName() + " = " + s.unitName()
	if len(s.using) > 0 {
		unit := strings.ToLower(s.table.PrivacyUnit)
		for _, c := range s.using {
			name := strings.ToLower(c)
			if !s.columns[name] {
				return &UnknownColumnError{Column: c, Table: s.table.Name}
			}
			if name != unit {
				continue
			}
			for _, earlier := range a.sides[:i] {
				if strings.ToLower(earlier.table.PrivacyUnit) == unit {
					return nil
				}
			}
		}
		return refuse("%s", want)
	}
	if s.on == nil {
		return refuse("%s", want)
	}
	if err := a.rowLevel(s.on, "ON"); err != nil {
		return err
	}
	for _, c := range conjuncts(s.on) {
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
		if xn == s.unitName() {
			xn, yn = yn, xn
		}
		if yn != s.unitName() {
			continue
		}
		for _, earlier := range a.sides[:i] {
			if xn == earlier.unitName() {
				return nil
			}
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
// unqualified when one table has it. The privacy unit column, equal on all
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
	allUnits := true
	for _, s := range a.sides {
		if s.columns[name] {
			found = append(found, s.alias+"."+name)
			allUnits = allUnits && a.isUnitName(s.alias+"."+name)
		}
	}
	switch {
	case len(found) == 0:
		return "", &UnknownColumnError{Column: ref.Name, Table: a.table.Name}
	case len(found) == 1:
		return found[0], nil
	case allUnits:
		return strings.ToLower(a.table.PrivacyUnit), nil
	}
	return "", unsupported("column %s is in several tables of the join: qualify it (%s)", ref.Name, strings.Join(found, " or "))
}
