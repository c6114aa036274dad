// Package rewrite turns an analyst's SELECT over a private table into a plan:
// the group keys, the aggregates and the noisy quantities each needs, and the
// backend SQL that computes those quantities with values clamped to the
// policy's bounds and each privacy unit's contribution bounded. It adds no
// noise: the engine does, from the plan's sensitivities.
package rewrite

import (
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/sensitivity"
)

// Schema is what the backend has: the columns of each table.
type Schema interface {
	// Columns returns the table's column names in lower case, and false if
	// the backend has no such table.
	Columns(table string) ([]string, bool)
}

// Input is one SELECT to plan.
type Input struct {
	Select   *parser.Select
	Policy   *policy.Policy
	Schema   Schema
	Database string         // the session's current database
	Dialect  parser.Dialect // the backend's dialect
	Params   []any          // values of the statement's placeholders
}

// AggKind is an aggregate dpproxy can release.
type AggKind int

const (
	AggCount AggKind = iota // COUNT(*) or COUNT(col)
	AggSum
	AggAvg
)

// QuantityKind is one noisy number the backend computes per group.
type QuantityKind int

const (
	QCount       QuantityKind = iota // rows (or non-NULL values of a column)
	QSum                             // Σ clamp(x)
	QCenteredSum                     // Σ (clamp(x) − mid)
)

// Quantity is one noisy number of an aggregate, with its sensitivity.
type Quantity struct {
	Kind        QuantityKind
	Sensitivity sensitivity.Sensitivity
	// Column is its position in the backend result row.
	Column int
}

// Aggregate is one distinct aggregate of the query.
type Aggregate struct {
	Kind   AggKind
	Column string // argument column (lower case); "" for COUNT(*)
	// Lower and Upper are the argument's public bounds (SUM, AVG).
	Lower, Upper float64
	// IntValued aggregates are released as integers (counts, sums of ints).
	IntValued  bool
	Quantities []Quantity
}

// Key is one GROUP BY column.
type Key struct {
	Name   string         // column name, lower case
	Column *policy.Column // nil when the policy does not list it
	// Public is the column's public domain; nil when its values are not
	// public and the key needs partition selection.
	Public []any
}

// Item is one output column of the answer.
type Item struct {
	Name string
	Expr parser.Expr
}

// Plan is an analysed DP query.
type Plan struct {
	Table *policy.Table
	Keys  []Key
	Aggs  []*Aggregate
	Items []Item
	// Having, OrderBy, Limit and Offset run in the proxy on noisy values.
	Having  parser.Expr
	OrderBy []parser.OrderItem
	Limit   int64 // -1: none
	Offset  int64
	// Contribution is the per-unit bound the SQL enforces.
	Contribution sensitivity.Contribution
	// PartitionSelection is set when some key is not public.
	PartitionSelection bool
	// UnitsColumn is the backend result position of the distinct-unit
	// count per group (for partition selection).
	UnitsColumn int
	// SQL and Args are the backend statement: one row per group with the
	// keys first, then every quantity, then the unit count.
	SQL  string
	Args []any

	aggOf map[*parser.Func]int
}

// AggregateOf returns the index in Aggs of an aggregate call in Items,
// Having or OrderBy.
func (p *Plan) AggregateOf(f *parser.Func) (int, bool) {
	i, ok := p.aggOf[f]
	return i, ok
}

// IsAggregate reports whether a function name is an aggregate in either
// dialect, so that the analysis never sends one to the backend by mistake.
func IsAggregate(name string) bool {
	switch name {
	case "count", "sum", "avg", "min", "max", "stddev", "stddev_pop", "stddev_samp", "std",
		"variance", "var_pop", "var_samp", "median", "percentile_cont", "percentile_disc",
		"group_concat", "string_agg", "array_agg", "bit_and", "bit_or", "bit_xor", "json_arrayagg",
		"json_objectagg", "bool_and", "bool_or", "every", "mode", "approx_count_distinct":
		return true
	}
	return false
}

// analysis is the state of one Analyze call.
type analysis struct {
	in      Input
	table   *policy.Table
	alias   string
	columns map[string]bool // the backend's columns of the table
	plan    *Plan
	aggKey  map[string]int // canonical aggregate → index, to compute each once
	aliases map[string]parser.Expr
}

// Analyze checks a SELECT over one private table against the policy and
// plans its backend SQL. Refusals are *RefusedError; they cost nothing.
func Analyze(in Input) (*Plan, error) {
	sel := in.Select
	tn, ok := sel.From.(*parser.TableName)
	if !ok {
		switch sel.From.(type) {
		case *parser.Join:
			return nil, unsupported("joins (a later version of dpproxy answers joins with public tables)")
		case *parser.DerivedTable:
			return nil, unsupported("derived tables (FROM (SELECT ...))")
		}
		return nil, unsupported("this FROM clause")
	}
	table, ok := in.Policy.Table(tn.Name)
	if !ok || table.Public {
		return nil, refuse("table %s is not a private table of the policy", tn.Name)
	}
	cols, ok := in.Schema.Columns(table.Name)
	if !ok {
		return nil, &UnknownTableError{Table: tn.Name}
	}
	a := &analysis{
		in:      in,
		table:   table,
		alias:   strings.ToLower(tn.Alias),
		columns: make(map[string]bool, len(cols)),
		plan:    &Plan{Table: table, Limit: -1, aggOf: map[*parser.Func]int{}},
		aggKey:  map[string]int{},
		aliases: map[string]parser.Expr{},
	}
	for _, c := range cols {
		a.columns[strings.ToLower(c)] = true
	}
	if err := a.checkShape(); err != nil {
		return nil, err
	}
	for _, it := range sel.Items {
		if it.Alias != "" {
			a.aliases[strings.ToLower(it.Alias)] = it.Expr
		}
	}
	if err := a.keys(); err != nil {
		return nil, err
	}
	if err := a.items(); err != nil {
		return nil, err
	}
	if sel.Where != nil {
		if err := a.rowLevel(sel.Where, "WHERE"); err != nil {
			return nil, err
		}
	}
	if sel.Having != nil {
		if err := a.aggregated(sel.Having, "HAVING", true); err != nil {
			return nil, err
		}
		a.plan.Having = sel.Having
	}
	for _, o := range sel.OrderBy {
		if lit, ok := o.Expr.(*parser.Literal); ok {
			if _, isInt := lit.Value.(int64); isInt {
				a.plan.OrderBy = append(a.plan.OrderBy, o)
				continue
			}
		}
		if err := a.aggregated(o.Expr, "ORDER BY", true); err != nil {
			return nil, err
		}
		a.plan.OrderBy = append(a.plan.OrderBy, o)
	}
	if err := a.limit(); err != nil {
		return nil, err
	}
	a.contribution()
	if err := a.buildSQL(); err != nil {
		return nil, err
	}
	return a.plan, nil
}

// checkShape refuses query shapes that release rows whatever the columns.
func (a *analysis) checkShape() error {
	sel := a.in.Select
	if sel.ForUpdate {
		return unsupported("SELECT ... FOR UPDATE / LOCK IN SHARE MODE")
	}
	if sel.Distinct {
		return refuse("SELECT DISTINCT over private table %s would list row-level values; use GROUP BY with an aggregate", a.table.Name)
	}
	for _, it := range sel.Items {
		if it.Star {
			return refuse("SELECT * would reveal the rows of private table %s; ask for aggregates such as COUNT(*), SUM(col) or AVG(col)", a.table.Name)
		}
	}
	return nil
}

// column resolves a column reference against the one table of the query.
func (a *analysis) column(ref *parser.ColumnRef) (string, error) {
	if ref.Table != "" {
		q := strings.ToLower(ref.Table)
		if q != a.alias && (a.alias != "" || q != a.table.Name) {
			return "", &UnknownColumnError{Column: ref.Table + "." + ref.Name, Table: a.table.Name}
		}
	}
	if ref.Schema != "" && !strings.EqualFold(ref.Schema, a.in.Database) {
		return "", &UnknownColumnError{Column: ref.Schema + "." + ref.Table + "." + ref.Name, Table: a.table.Name}
	}
	name := strings.ToLower(ref.Name)
	if !a.columns[name] {
		return "", &UnknownColumnError{Column: ref.Name, Table: a.table.Name}
	}
	return name, nil
}

// keys resolves GROUP BY: each key must be a plain column that is neither
// the privacy unit nor declared unique (grouping by either would make one
// group per person).
func (a *analysis) keys() error {
	for _, g := range a.in.Select.GroupBy {
		e := g
		if lit, ok := g.(*parser.Literal); ok {
			pos, isInt := lit.Value.(int64)
			if !isInt || pos < 1 || int(pos) > len(a.in.Select.Items) {
				return unsupported("GROUP BY %v: only columns and select-list positions can be grouped by", lit.Value)
			}
			e = a.in.Select.Items[pos-1].Expr
		}
		ref, ok := e.(*parser.ColumnRef)
		if !ok {
			return unsupported("GROUP BY on an expression (group by a column)")
		}
		if ref.Table == "" && !a.columns[strings.ToLower(ref.Name)] {
			if aliased, ok := a.aliases[strings.ToLower(ref.Name)]; ok {
				if r, ok := aliased.(*parser.ColumnRef); ok {
					ref = r
				}
			}
		}
		name, err := a.column(ref)
		if err != nil {
			return err
		}
		if name == strings.ToLower(a.table.PrivacyUnit) {
			return refuse("grouping by %s, the privacy unit of %s, would release one group per person", name, a.table.Name)
		}
		col, _ := a.table.Column(name)
		if col != nil && col.Unique {
			return refuse("grouping by %s, a unique column of %s, would release one group per row", name, a.table.Name)
		}
		for _, k := range a.plan.Keys {
			if k.Name == name {
				return unsupported("GROUP BY %s twice", name)
			}
		}
		key := Key{Name: name, Column: col}
		if col != nil && len(col.PublicValues) > 0 {
			key.Public = col.PublicValues
		} else {
			a.plan.PartitionSelection = true
		}
		a.plan.Keys = append(a.plan.Keys, key)
	}
	return nil
}

func (a *analysis) keyIndex(name string) int {
	for i, k := range a.plan.Keys {
		if k.Name == name {
			return i
		}
	}
	return -1
}

// items checks the select list: every column outside an aggregate must be a
// group key, since anything else is a row-level value.
func (a *analysis) items() error {
	for _, it := range a.in.Select.Items {
		if err := a.aggregated(it.Expr, "the select list", false); err != nil {
			return err
		}
		name := it.Alias
		if name == "" {
			name = it.Text
		}
		a.plan.Items = append(a.plan.Items, Item{Name: name, Expr: it.Expr})
	}
	if len(a.plan.Aggs) == 0 {
		return refuse("a query over private table %s must aggregate (COUNT, SUM, AVG); listing group keys alone is not supported", a.table.Name)
	}
	return nil
}

// aggregated checks an expression evaluated per group in the proxy (select
// list, HAVING, ORDER BY) and registers its aggregates. allowAlias lets a
// bare name refer to a select-list alias.
func (a *analysis) aggregated(e parser.Expr, where string, allowAlias bool) error {
	var err error
	walk(e, func(n parser.Expr) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *parser.Func:
			if n.Over {
				err = unsupported("window functions")
				return false
			}
			if IsAggregate(n.Name) {
				err = a.aggregate(n)
				return false
			}
		case *parser.ColumnRef:
			if n.Table == "" && allowAlias {
				if _, ok := a.aliases[strings.ToLower(n.Name)]; ok {
					return false
				}
			}
			name, cerr := a.column(n)
			if cerr != nil {
				err = cerr
				return false
			}
			if a.keyIndex(name) < 0 {
				err = refuse("column %s in %s is neither aggregated nor a GROUP BY key: it would reveal row-level values of %s", name, where, a.table.Name)
			}
			return false
		case *parser.Subquery, *parser.In:
			if in, ok := n.(*parser.In); ok && in.Sub == nil {
				return true
			}
			err = refuse("subqueries are not allowed in a differentially private query")
			return false
		case *parser.Variable:
			err = refuse("variables are not allowed in a differentially private query")
			return false
		}
		return true
	})
	return err
}

// aggregate registers one aggregate call.
func (a *analysis) aggregate(f *parser.Func) error {
	upper := strings.ToUpper(f.Name)
	var kind AggKind
	switch f.Name {
	case "count":
		kind = AggCount
	case "sum":
		kind = AggSum
	case "avg":
		kind = AggAvg
	case "min", "max", "median", "percentile_cont", "percentile_disc":
		return refuse("%s over raw values is not differentially private; dpproxy answers COUNT, SUM and AVG", upper)
	default:
		return unsupported("aggregate %s (dpproxy answers COUNT, SUM and AVG)", upper)
	}
	if f.Distinct {
		return unsupported("%s(DISTINCT ...)", upper)
	}
	agg := &Aggregate{Kind: kind}
	if f.Star {
		if kind != AggCount {
			return unsupported("%s(*)", upper)
		}
		agg.IntValued = true
	} else {
		if len(f.Args) != 1 {
			return unsupported("%s with %d arguments", upper, len(f.Args))
		}
		ref, ok := f.Args[0].(*parser.ColumnRef)
		if !ok {
			if lit, isLit := f.Args[0].(*parser.Literal); isLit && kind == AggCount && lit.Value != nil {
				agg.IntValued = true // COUNT(1) is COUNT(*)
				return a.register(f, agg, "count(*)")
			}
			return unsupported("expressions inside %s (aggregate a column)", upper)
		}
		name, err := a.column(ref)
		if err != nil {
			return err
		}
		agg.Column = name
		if kind == AggCount {
			agg.IntValued = true
		} else {
			col, _ := a.table.Column(name)
			if !col.Bounded() {
				return refuse("%s(%s) needs public bounds for %s.%s: add lower and upper to the policy", upper, name, a.table.Name, name)
			}
			agg.Lower, agg.Upper = *col.Lower, *col.Upper
			if col.Type == policy.TypeInt {
				// Integer columns hold integers: clamp to the integers inside the bounds.
				agg.Lower, agg.Upper = math.Ceil(agg.Lower), math.Floor(agg.Upper)
				agg.IntValued = kind == AggSum
			}
		}
	}
	return a.register(f, agg, f.Name+"("+agg.Column+")")
}

// register records an aggregate once per canonical form, so SUM(x)/COUNT(*)
// next to COUNT(*) spends budget on one count only.
func (a *analysis) register(f *parser.Func, agg *Aggregate, canonical string) error {
	if i, ok := a.aggKey[canonical]; ok {
		a.plan.aggOf[f] = i
		return nil
	}
	a.aggKey[canonical] = len(a.plan.Aggs)
	a.plan.aggOf[f] = len(a.plan.Aggs)
	a.plan.Aggs = append(a.plan.Aggs, agg)
	return nil
}

// rowLevel checks a WHERE clause: any column of the table may filter rows
// (the answer is still aggregated and noisy), but no aggregate, subquery or
// variable may appear.
func (a *analysis) rowLevel(e parser.Expr, where string) error {
	var err error
	walk(e, func(n parser.Expr) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *parser.Func:
			if IsAggregate(n.Name) {
				err = unsupported("aggregate %s in %s", strings.ToUpper(n.Name), where)
				return false
			}
		case *parser.ColumnRef:
			_, err = a.column(n)
			return false
		}
		return true
	})
	return err
}

func (a *analysis) limit() error {
	l := a.in.Select.Limit
	if l == nil {
		return nil
	}
	value := func(e parser.Expr) (int64, error) {
		switch v := e.(type) {
		case *parser.Literal:
			if n, ok := v.Value.(int64); ok && n >= 0 {
				return n, nil
			}
		case *parser.Param:
			if v.Index < len(a.in.Params) {
				switch n := a.in.Params[v.Index].(type) {
				case int64:
					if n >= 0 {
						return n, nil
					}
				}
			}
		}
		return 0, unsupported("LIMIT must be a non-negative integer")
	}
	var err error
	if l.Count != nil {
		if a.plan.Limit, err = value(l.Count); err != nil {
			return err
		}
	}
	if l.Offset != nil {
		if a.plan.Offset, err = value(l.Offset); err != nil {
			return err
		}
	}
	return nil
}

// contribution sets the per-unit bound. A row-unit table has one row per
// unit, hence one group; a query without GROUP BY has one group.
func (a *analysis) contribution() {
	c := sensitivity.Contribution{MaxRows: a.table.MaxRowsPerUnit, MaxGroups: a.table.MaxGroupsPerUnit}
	if a.table.UnitIsRow() {
		c = sensitivity.Contribution{MaxRows: 1, MaxGroups: 1}
	}
	if c.MaxRows < 1 {
		c.MaxRows = 1
	}
	if c.MaxGroups < 1 || len(a.plan.Keys) == 0 {
		c.MaxGroups = 1
	}
	a.plan.Contribution = c
	for _, agg := range a.plan.Aggs {
		switch agg.Kind {
		case AggCount:
			agg.Quantities = []Quantity{{Kind: QCount, Sensitivity: sensitivity.Count(c)}}
		case AggSum:
			agg.Quantities = []Quantity{{Kind: QSum, Sensitivity: sensitivity.Sum(agg.Lower, agg.Upper, c)}}
		case AggAvg:
			agg.Quantities = []Quantity{
				{Kind: QCenteredSum, Sensitivity: sensitivity.CenteredSum(agg.Lower, agg.Upper, c)},
				{Kind: QCount, Sensitivity: sensitivity.Count(c)},
			}
		}
	}
}

// walk visits e depth-first; visit returns false to skip a node's children.
func walk(e parser.Expr, visit func(parser.Expr) bool) {
	if e == nil || !visit(e) {
		return
	}
	switch n := e.(type) {
	case *parser.Unary:
		walk(n.X, visit)
	case *parser.Binary:
		walk(n.L, visit)
		walk(n.R, visit)
	case *parser.Func:
		for _, x := range n.Args {
			walk(x, visit)
		}
		for _, o := range n.WithinGroup {
			walk(o.Expr, visit)
		}
	case *parser.Case:
		walk(n.Operand, visit)
		for _, w := range n.Whens {
			walk(w.Cond, visit)
			walk(w.Result, visit)
		}
		walk(n.Else, visit)
	case *parser.Between:
		walk(n.X, visit)
		walk(n.Lo, visit)
		walk(n.Hi, visit)
	case *parser.In:
		walk(n.X, visit)
		for _, x := range n.List {
			walk(x, visit)
		}
	case *parser.IsNull:
		walk(n.X, visit)
	case *parser.IsBool:
		walk(n.X, visit)
	case *parser.Like:
		walk(n.X, visit)
		walk(n.Pattern, visit)
		walk(n.Escape, visit)
	case *parser.Cast:
		walk(n.X, visit)
	case *parser.Row:
		for _, x := range n.Items {
			walk(x, visit)
		}
	case *parser.Interval:
		walk(n.Value, visit)
	}
}
