// Package rewrite turns an analyst's SELECT over a private table into a plan:
// the group keys, the aggregates and the noisy quantities each needs, and the
// backend SQL that computes those quantities with values clamped to the
// policy's bounds and each privacy unit's contribution bounded. It adds no
// noise: the engine does, from the plan's sensitivities.
package rewrite

import (
	"errors"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
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
	AggCount AggKind = iota // COUNT(*) or COUNT(expr)
	AggSum
	AggAvg
	AggVar           // VAR_POP / VARIANCE (VAR_SAMP with Sample)
	AggStddev        // STDDEV_POP / STDDEV / STD (STDDEV_SAMP with Sample)
	AggCountDistinct // COUNT(DISTINCT expr); of the privacy unit: distinct persons
	AggQuantile      // MIN, MAX, MEDIAN, PERCENTILE_CONT: a DP quantile (P)
)

// QuantityKind is one noisy number the backend computes per group.
type QuantityKind int

const (
	QCount           QuantityKind = iota // rows (or non-NULL values of the argument)
	QSum                                 // Σ clamp(x)
	QCenteredSum                         // Σ (clamp(x) − mid)
	QCenteredSquares                     // Σ (clamp(x) − mid)²
	QDistinct                            // distinct values of the argument
	QUnits                               // distinct privacy units
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
	Kind AggKind
	// Arg is the argument, a row-level expression; nil for COUNT(*).
	Arg parser.Expr
	// Key is the argument's canonical SQL text: aggregates and quantities
	// over the same argument share its backend column.
	Key string
	// Sample selects VAR_SAMP / STDDEV_SAMP over the population forms.
	Sample bool
	// Lower and Upper are the argument's public bounds (SUM, AVG, VAR),
	// from the policy by interval arithmetic.
	Lower, Upper float64
	// IntValued aggregates are released as integers (counts, sums of ints).
	IntValued  bool
	Quantities []Quantity
	// P is the quantile of an AggQuantile (0 MIN, 1 MAX, 0.5 MEDIAN) and
	// Bins the number of equal-width bins of its histogram over [Lower, Upper].
	P        float64
	Bins     int
	BinWidth float64
	// Histogram is the backend statement of an AggQuantile: one row per
	// (group keys..., bin, count) over the bounded rows.
	Histogram string
	// MaxDistinct, when > 0, is the size of the public domain of a
	// COUNT(DISTINCT x) argument: no group can have more distinct values,
	// so the noisy count is clamped to it (post-processing).
	MaxDistinct int64
}

// Key is one GROUP BY key: a column or an expression.
type Key struct {
	// Name is the column's name (lower case), or dp_key_<i> for an
	// expression; Items, Having and OrderBy refer to expression keys by it.
	Name   string
	Expr   parser.Expr
	Text   string         // canonical SQL text of Expr
	Column *policy.Column // the policy's column for a column key, else nil
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
	// Fractional is set when the backend's quantities may be fractional
	// even for counts (a unit's partials scaled by min(1, m/c)): they are
	// then noised as real numbers and rounded afterwards, never rounded
	// first (rounding before the noise would add up to 1 to the sensitivity).
	Fractional bool
	// PartitionSelection is set when some key is not public.
	PartitionSelection bool
	// UnitsColumn is the backend result position of the distinct-unit
	// count per group (for partition selection).
	UnitsColumn int
	// SQL is the backend statement (values written inline): one row per
	// group with the keys first, then every quantity, then the unit count.
	SQL string

	aggOf map[*parser.Func]int
}

// AggregateOf returns the index in Aggs of an aggregate call in Items,
// Having or OrderBy.
func (p *Plan) AggregateOf(f *parser.Func) (int, bool) {
	i, ok := p.aggOf[f]
	return i, ok
}

// analysis is the state of one Analyze call.
type analysis struct {
	in      Input
	table   *policy.Table
	alias   string
	columns map[string]bool // the backend's columns of the table
	// sides are the tables of a join on the privacy unit (join.go); column
	// names are then "alias.column". nil for any other source.
	sides []side
	// innerJoin is set for an inner join: both unit columns are then the
	// person's id in every row.
	innerJoin bool
	// from renders the source's relation when it is not the table itself.
	from   func(r *renderer) (string, error)
	plan   *Plan
	aggKey map[string]int // canonical aggregate → index, to compute each once
	// bounds and growths remember bound and growth per node (bounds.go,
	// total.go).
	bounds  map[parser.Expr]boundMemo
	growths map[parser.Expr]float64
	aliases map[string]parser.Expr
}

// Analyze checks a SELECT over one private table against the policy and
// plans its backend SQL. Refusals are *RefusedError; they cost nothing.
func Analyze(in Input) (*Plan, error) {
	sel, err := flattenDerived(in.Select)
	if err != nil {
		return nil, err
	}
	if err := checkExpandedSize(sel); err != nil {
		return nil, err
	}
	in.Select = sel
	a, err := newAnalysis(in)
	if err != nil {
		return nil, err
	}
	sel = a.in.Select // a derived table's HAVING may have become a WHERE
	if err := checkExpandedSize(sel); err != nil {
		return nil, err
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
		a.plan.Having = a.substituteKeys(sel.Having)
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
		a.plan.OrderBy = append(a.plan.OrderBy, parser.OrderItem{Expr: a.substituteKeys(o.Expr), Desc: o.Desc})
	}
	if len(a.plan.Aggs) == 0 {
		return nil, refuse("a query over private table %s must aggregate (COUNT, SUM, AVG, ...); listing group keys alone is not supported", a.table.Name)
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

// column resolves a column reference against the query's source and
// returns its name: the column's name in lower case, or "alias.column" in a
// join.
func (a *analysis) column(ref *parser.ColumnRef) (string, error) {
	if ref.Schema != "" && !strings.EqualFold(ref.Schema, a.in.Database) {
		return "", &UnknownColumnError{Column: ref.Schema + "." + ref.Table + "." + ref.Name, Table: a.table.Name}
	}
	if a.sides != nil {
		return a.joinColumn(ref)
	}
	if ref.Table != "" {
		q := strings.ToLower(ref.Table)
		if q != a.alias && (a.alias != "" || q != a.table.Name) {
			return "", &UnknownColumnError{Column: ref.Table + "." + ref.Name, Table: a.table.Name}
		}
	}
	name := strings.ToLower(ref.Name)
	if !a.columns[name] {
		return "", &UnknownColumnError{Column: ref.Name, Table: a.table.Name}
	}
	return name, nil
}

// keys resolves GROUP BY. A key is a column or a row-level expression
// (CASE, FLOOR(age/10)*10, ...); it may not be or use the privacy unit or a
// unique column (that would make one group per person). A key's values are
// public when the policy lists them or when they can be derived from a
// public domain (keydomain.go); otherwise the key needs partition selection.
func (a *analysis) keys() error {
	for _, g := range a.in.Select.GroupBy {
		e := g
		if lit, ok := g.(*parser.Literal); ok {
			pos, isInt := lit.Value.(int64)
			if !isInt || pos < 1 || int(pos) > len(a.in.Select.Items) {
				return unsupported("GROUP BY %v: group by columns, expressions or select-list positions", lit.Value)
			}
			e = a.in.Select.Items[pos-1].Expr
		}
		if ref, ok := e.(*parser.ColumnRef); ok && ref.Table == "" && !a.hasColumn(ref.Name) {
			if aliased, ok := a.aliases[strings.ToLower(ref.Name)]; ok {
				e = aliased
			}
		}
		if err := a.rowLevel(e, "GROUP BY"); err != nil {
			return err
		}
		var refuseErr error
		walk(e, func(n parser.Expr) bool {
			ref, ok := n.(*parser.ColumnRef)
			if !ok || refuseErr != nil {
				return refuseErr == nil
			}
			name, _ := a.column(ref)
			if a.isUnitName(name) {
				refuseErr = refuse("grouping by %s, the privacy unit of %s, would release one group per person", name, a.table.Name)
			} else if col, _ := a.table.Column(name); col != nil && col.Unique {
				refuseErr = refuse("grouping by %s, a unique column of %s, would release one group per row", name, a.table.Name)
			}
			return false
		})
		if refuseErr != nil {
			return refuseErr
		}
		key := Key{Expr: e, Text: a.text(e)}
		for _, k := range a.plan.Keys {
			if k.Text == key.Text {
				return unsupported("GROUP BY %s twice", key.Text)
			}
		}
		if ref, ok := e.(*parser.ColumnRef); ok {
			key.Name, _ = a.column(ref)
			key.Column, _ = a.table.Column(key.Name)
			if key.Column != nil && len(key.Column.PublicValues) > 0 {
				key.Public = key.Column.PublicValues
			}
		} else {
			key.Name = "dp_key_" + strconv.Itoa(len(a.plan.Keys))
			key.Public = a.keyDomain(e)
		}
		if key.Public == nil {
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
		// The alias, else the name the client's own server would give
		// (PostgreSQL: "count", "avg"; MariaDB: "sex" for `adult`.`sex`,
		// the item's text for an expression).
		a.plan.Items = append(a.plan.Items, Item{Name: it.ColumnName(), Expr: a.substituteKeys(it.Expr)})
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
		if a.exprKey(n) >= 0 {
			return false // a GROUP BY expression: its released value is used
		}
		switch n := n.(type) {
		case *parser.Func:
			if n.Over {
				err = unsupported("window functions")
				return false
			}
			if eval.IsAggregate(n.Name) {
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

// aggregate registers one aggregate call. Its argument may be any row-level
// expression; SUM, AVG, VAR and STDDEV need a public bound for it, derived
// from the policy by interval arithmetic (bounds.go).
func (a *analysis) aggregate(f *parser.Func) error {
	upper := strings.ToUpper(f.Name)
	agg := &Aggregate{}
	switch f.Name {
	case "count":
		agg.Kind = AggCount
	case "sum":
		agg.Kind = AggSum
	case "avg":
		agg.Kind = AggAvg
	case "var_pop", "variance":
		agg.Kind = AggVar
	case "var_samp":
		agg.Kind, agg.Sample = AggVar, true
	case "stddev_pop", "stddev", "std":
		agg.Kind = AggStddev
	case "stddev_samp":
		agg.Kind, agg.Sample = AggStddev, true
	case "min", "max", "median", "percentile_cont":
		return a.quantile(f, upper)
	case "percentile_disc":
		return unsupported("PERCENTILE_DISC (use PERCENTILE_CONT)")
	default:
		return unsupported("aggregate %s (dpproxy answers COUNT, SUM, AVG, VAR, STDDEV, MIN, MAX, MEDIAN and PERCENTILE_CONT)", upper)
	}
	if f.Star {
		if agg.Kind != AggCount || f.Distinct {
			return unsupported("%s(*)", upper)
		}
		agg.IntValued = true
		return a.register(f, agg, "count(*)")
	}
	if len(f.Args) != 1 {
		return unsupported("%s with %d arguments", upper, len(f.Args))
	}
	arg := f.Args[0]
	if err := a.rowLevel(arg, "the argument of "+upper); err != nil {
		return err
	}
	if lit, ok := arg.(*parser.Literal); ok && agg.Kind == AggCount && !f.Distinct && lit.Value != nil {
		agg.IntValued = true // COUNT(1) is COUNT(*)
		return a.register(f, agg, "count(*)")
	}
	// Refusals of the renderer (variables, functions not allowed) come
	// first: they say more than "no bound".
	if _, err := (&renderer{dialect: a.in.Dialect, params: a.in.Params}).expr(arg); err != nil {
		return err
	}
	agg.Arg = arg
	agg.Key = a.text(arg)
	if f.Distinct {
		if agg.Kind != AggCount {
			return unsupported("%s(DISTINCT ...)", upper)
		}
		agg.Kind, agg.IntValued = AggCountDistinct, true
		agg.MaxDistinct = a.domainSize(arg)
		return a.register(f, agg, "count(distinct "+agg.Key+")")
	}
	if agg.Kind == AggCount {
		agg.IntValued = true
		return a.register(f, agg, "count("+agg.Key+")")
	}
	b, err := a.bound(arg)
	if err != nil {
		var nb *noBoundError
		if errors.As(err, &nb) {
			return refuse("%s(%s) needs a public bound for %s: add lower and upper for its columns to the policy of %s", upper, agg.Key, nb.expr, a.table.Name)
		}
		return err
	}
	agg.Lower, agg.Upper = b.lo, b.hi
	agg.IntValued = agg.Kind == AggSum && b.isInt
	return a.register(f, agg, f.Name+"("+agg.Key+")")
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
			if eval.IsAggregate(n.Name) {
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
		case AggCountDistinct:
			if a.isUnit(agg.Arg) {
				agg.Quantities = []Quantity{{Kind: QUnits, Sensitivity: sensitivity.DistinctUnits(c)}}
			} else {
				// A unit brings at most MaxRows rows to a group, each at most
				// one new distinct value.
				agg.Quantities = []Quantity{{Kind: QDistinct, Sensitivity: sensitivity.Count(c)}}
			}
		case AggSum:
			agg.Quantities = []Quantity{{Kind: QSum, Sensitivity: sensitivity.Sum(agg.Lower, agg.Upper, c)}}
		case AggAvg:
			agg.Quantities = []Quantity{
				{Kind: QCenteredSum, Sensitivity: sensitivity.CenteredSum(agg.Lower, agg.Upper, c)},
				{Kind: QCount, Sensitivity: sensitivity.Count(c)},
			}
		case AggVar, AggStddev:
			agg.Quantities = []Quantity{
				{Kind: QCenteredSquares, Sensitivity: sensitivity.CenteredSquares(agg.Lower, agg.Upper, c)},
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
	for _, c := range children(e) {
		walk(c, visit)
	}
}

// children are an expression's direct sub-expressions (some may be nil).
func children(e parser.Expr) []parser.Expr {
	switch n := e.(type) {
	case *parser.Unary:
		return []parser.Expr{n.X}
	case *parser.Binary:
		return []parser.Expr{n.L, n.R}
	case *parser.Func:
		out := append([]parser.Expr(nil), n.Args...)
		for _, o := range n.WithinGroup {
			out = append(out, o.Expr)
		}
		return out
	case *parser.Case:
		out := []parser.Expr{n.Operand, n.Else}
		for _, w := range n.Whens {
			out = append(out, w.Cond, w.Result)
		}
		return out
	case *parser.Between:
		return []parser.Expr{n.X, n.Lo, n.Hi}
	case *parser.In:
		return append([]parser.Expr{n.X}, n.List...)
	case *parser.IsNull:
		return []parser.Expr{n.X}
	case *parser.IsBool:
		return []parser.Expr{n.X}
	case *parser.Like:
		return []parser.Expr{n.X, n.Pattern, n.Escape}
	case *parser.Cast:
		return []parser.Expr{n.X}
	case *parser.Row:
		return n.Items
	case *parser.Interval:
		return []parser.Expr{n.Value}
	}
	return nil
}

// maxExpandedNodes bounds the expression nodes of a query once its derived
// tables are inlined. Inlining shares sub-trees instead of copying them, so a
// short statement whose derived tables each use a column twice (x + x over
// x + x over …) becomes a tree of 2^k nodes: walking or rendering it would
// take time and memory exponential in the statement's length.
const maxExpandedNodes = 100_000

// checkExpandedSize refuses a query whose expressions, counted as trees,
// have more than maxExpandedNodes nodes. The count is memoised by node, so
// it costs time linear in the shared graph, not in the tree.
func checkExpandedSize(sel *parser.Select) error {
	memo := map[parser.Expr]int{}
	var size func(e parser.Expr) int
	size = func(e parser.Expr) int {
		if e == nil {
			return 0
		}
		if n, ok := memo[e]; ok {
			return n
		}
		n := 1
		for _, c := range children(e) {
			n = min(n+size(c), maxExpandedNodes+1)
		}
		memo[e] = n
		return n
	}
	total := 0
	add := func(e parser.Expr) { total = min(total+size(e), maxExpandedNodes+1) }
	for _, it := range sel.Items {
		add(it.Expr)
	}
	add(sel.Where)
	for _, g := range sel.GroupBy {
		add(g)
	}
	add(sel.Having)
	for _, o := range sel.OrderBy {
		add(o.Expr)
	}
	if total > maxExpandedNodes {
		return unsupported("a query whose expressions, once its derived tables are inlined, have more than %d parts", maxExpandedNodes)
	}
	return nil
}

// isUnit reports whether e is the source's privacy unit column, equal to
// the person's id in every row (so COUNT(DISTINCT e) counts persons). In an
// outer join the other table's unit column may be NULL: it is not.
func (a *analysis) isUnit(e parser.Expr) bool {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return false
	}
	name, err := a.column(ref)
	if err != nil || !a.isUnitName(name) {
		return false
	}
	return a.sides == nil || a.innerJoin || name == strings.ToLower(a.table.PrivacyUnit)
}

// domainSize is the number of values the policy says e can take: the
// public values of a column, or the integers within an integer bound (a
// bounded int column, a date part); 0 when unknown or large.
func (a *analysis) domainSize(e parser.Expr) int64 {
	if ref, ok := e.(*parser.ColumnRef); ok {
		if name, err := a.column(ref); err == nil {
			if col, _ := a.table.Column(name); col != nil && len(col.PublicValues) > 0 {
				return int64(len(col.PublicValues))
			}
		}
	}
	if b, err := a.bound(e); err == nil && b.isInt && b.hi-b.lo < maxDerivedDomain {
		return int64(b.hi-b.lo) + 1
	}
	return 0
}

// hasColumn reports whether an unqualified name is a column of the source
// (else it may be a select-list alias).
func (a *analysis) hasColumn(name string) bool {
	_, err := a.column(&parser.ColumnRef{Name: name})
	return err == nil
}
