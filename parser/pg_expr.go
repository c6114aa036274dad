package parser

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// pgBinaryOps maps PostgreSQL's operator names to the model's. "!=" never
// appears: the grammar rewrites it to "<>".
var pgBinaryOps = map[string]Op{
	"+": OpAdd, "-": OpSub, "*": OpMul, "/": OpDiv, "%": OpMod,
	"=": OpEQ, "<>": OpNE, "<": OpLT, "<=": OpLE, ">": OpGT, ">=": OpGE,
	"&": OpBitAnd, "|": OpBitOr, "||": OpConcat,
	"~": OpRegex, "~*": OpIRegex,
}

// pgNegatedOps are operators that are the negation of a model operator.
var pgNegatedOps = map[string]Op{"!~": OpRegex, "!~*": OpIRegex}

// pgLikeOps are LIKE / ILIKE written as operators (the grammar turns
// LIKE into ~~ as well).
var pgLikeOps = map[string]struct{ not, ci bool }{
	"~~": {}, "!~~": {not: true}, "~~*": {ci: true}, "!~~*": {not: true, ci: true},
}

var pgUnsupportedOps = map[string]string{
	"#":  "# (bitwise xor)",
	"<<": "<< (shift)",
	">>": ">> (shift)",
	"~":  "~ (bitwise negation)", // prefix only; infix ~ is a regex match
}

// expr converts an expression node. Kinds the model cannot hold are
// *UnsupportedError naming the construct.
func (c *pgConverter) expr(n *pg.Node) (Expr, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		return pgColumnRef(x.ColumnRef)
	case *pg.Node_AConst:
		return pgConst(x.AConst)
	case *pg.Node_ParamRef:
		if x.ParamRef.Number < 1 {
			return nil, &SyntaxError{Msg: "there is no parameter $" + strconv.Itoa(int(x.ParamRef.Number)), Position: pgPosition(c.sql, x.ParamRef.Location)}
		}
		return &Param{Index: int(x.ParamRef.Number) - 1}, nil
	case *pg.Node_AExpr:
		return c.aExpr(x.AExpr)
	case *pg.Node_BoolExpr:
		return c.boolExpr(x.BoolExpr)
	case *pg.Node_FuncCall:
		return c.funcCall(x.FuncCall)
	case *pg.Node_TypeCast:
		return c.typeCast(x.TypeCast)
	case *pg.Node_SqlvalueFunction:
		return pgSQLValueFunction(x.SqlvalueFunction)
	case *pg.Node_CoalesceExpr:
		return c.namedCall("coalesce", x.CoalesceExpr.Args)
	case *pg.Node_MinMaxExpr:
		name := "greatest"
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			name = "least"
		}
		return c.namedCall(name, x.MinMaxExpr.Args)
	case *pg.Node_NullTest:
		e, err := c.expr(x.NullTest.Arg)
		if err != nil {
			return nil, err
		}
		return &IsNull{X: e, Not: x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case *pg.Node_BooleanTest:
		return c.booleanTest(x.BooleanTest)
	case *pg.Node_CaseExpr:
		return c.caseExpr(x.CaseExpr)
	case *pg.Node_SubLink:
		return c.subLink(x.SubLink)
	case *pg.Node_RowExpr:
		items, err := c.exprs(x.RowExpr.Args)
		if err != nil {
			return nil, err
		}
		return &Row{Items: items}, nil
	case *pg.Node_AArrayExpr:
		items, err := c.exprs(x.AArrayExpr.Elements)
		if err != nil {
			return nil, err
		}
		return &Array{Items: items}, nil
	case *pg.Node_AIndirection:
		return c.indirection(x.AIndirection)
	case *pg.Node_CollateClause:
		return c.collate(x.CollateClause)
	case *pg.Node_GroupingFunc:
		return nil, &UnsupportedError{What: "GROUPING()"}
	case *pg.Node_SetToDefault:
		return nil, &UnsupportedError{What: "DEFAULT in an expression"}
	case nil:
		return nil, &UnsupportedError{What: "missing expression"}
	}
	return nil, &UnsupportedError{What: "expression of kind " + pgNodeName(n)}
}

func (c *pgConverter) exprs(list []*pg.Node) ([]Expr, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]Expr, 0, len(list))
	for _, n := range list {
		e, err := c.expr(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// pgPosition turns a byte offset of the tree into PostgreSQL's 1-based
// character position.
func pgPosition(sql string, loc int32) int {
	if loc < 0 || int(loc) > len(sql) {
		return 0
	}
	return len([]rune(sql[:loc])) + 1
}

func pgColumnRef(r *pg.ColumnRef) (Expr, error) {
	names := make([]string, 0, len(r.Fields))
	for _, f := range r.Fields {
		s := f.GetString_()
		if s == nil {
			return nil, &UnsupportedError{What: "* in an expression"}
		}
		names = append(names, s.Sval)
	}
	switch len(names) {
	case 1:
		return &ColumnRef{Name: names[0]}, nil
	case 2:
		return &ColumnRef{Table: names[0], Name: names[1]}, nil
	case 3:
		return &ColumnRef{Schema: names[0], Table: names[1], Name: names[2]}, nil
	}
	return nil, &UnsupportedError{What: "database-qualified column reference"}
}

// pgConst converts a constant. PostgreSQL's grammar gives integers that fit
// 32 bits as Integer and every other number as Float text; the model wants
// int64 for integers (as MySQL's side gives them), float64 for literals with
// an exponent, and decimal literals (IsDecimal) with their exact text for
// the rest, including integers beyond int64.
func pgConst(k *pg.A_Const) (Expr, error) {
	if k.Isnull {
		return &Literal{}, nil
	}
	switch v := k.Val.(type) {
	case *pg.A_Const_Ival:
		return &Literal{Value: int64(v.Ival.Ival)}, nil
	case *pg.A_Const_Fval:
		return pgNumber(v.Fval.Fval)
	case *pg.A_Const_Sval:
		return &Literal{Value: v.Sval.Sval}, nil
	case *pg.A_Const_Boolval:
		return &Literal{Value: v.Boolval.Boolval}, nil
	case *pg.A_Const_Bsval:
		return nil, &UnsupportedError{What: "bit string literal"}
	}
	return nil, &UnsupportedError{What: "constant of this kind"}
}

func pgNumber(text string) (Expr, error) {
	// 1_000_000 and 0x1F are PostgreSQL 16 syntax; Go's base-0 parsing
	// reads both.
	if i, err := strconv.ParseInt(text, 0, 64); err == nil {
		return &Literal{Value: i}, nil
	}
	clean := strings.ReplaceAll(text, "_", "")
	if strings.ContainsAny(clean, "eE") && !strings.HasPrefix(clean, "0x") && !strings.HasPrefix(clean, "-0x") {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			return nil, &UnsupportedError{What: "numeric literal " + text + " (out of float64 range)"}
		}
		return &Literal{Value: f}, nil
	}
	if strings.ContainsAny(clean, "xXoObB") {
		// A non-decimal integer beyond int64.
		return nil, &UnsupportedError{What: "numeric literal " + text + " (out of int64 range)"}
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		return nil, &UnsupportedError{What: "numeric literal " + text + " (out of float64 range)"}
	}
	return &Literal{Value: f, IsDecimal: true, Text: clean}, nil
}

// pgOperator returns the operator's name from its possibly qualified name
// list: OPERATOR(pg_catalog.~) is the built-in ~.
func pgOperator(names []*pg.Node) (string, error) {
	switch len(names) {
	case 1:
		return names[0].GetString_().GetSval(), nil
	case 2:
		if names[0].GetString_().GetSval() == "pg_catalog" {
			return names[1].GetString_().GetSval(), nil
		}
	}
	return "", &UnsupportedError{What: "operator of a schema other than pg_catalog"}
}

func (c *pgConverter) aExpr(a *pg.A_Expr) (Expr, error) {
	op, err := pgOperator(a.Name)
	if err != nil {
		return nil, err
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			return c.prefixOp(op, a.Rexpr)
		}
		return c.binaryOp(op, a.Lexpr, a.Rexpr)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return c.anyAll(op, a.Lexpr, a.Rexpr, a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r, err := c.pair(a.Lexpr, a.Rexpr)
		if err != nil {
			return nil, err
		}
		var out Expr = &Binary{Op: OpNullEQ, L: l, R: r}
		if a.Kind == pg.A_Expr_Kind_AEXPR_DISTINCT {
			out = &Unary{Op: OpNot, X: out}
		}
		return out, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, r, err := c.pair(a.Lexpr, a.Rexpr)
		if err != nil {
			return nil, err
		}
		return &Func{Name: "nullif", Args: []Expr{l, r}}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		x, err := c.expr(a.Lexpr)
		if err != nil {
			return nil, err
		}
		list, err := c.exprs(a.Rexpr.GetList().GetItems())
		if err != nil {
			return nil, err
		}
		return &In{X: x, List: list, Not: op == "<>"}, nil
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		return c.like(op, a.Lexpr, a.Rexpr)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, &UnsupportedError{What: "SIMILAR TO"}
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		x, err := c.expr(a.Lexpr)
		if err != nil {
			return nil, err
		}
		bounds := a.Rexpr.GetList().GetItems()
		if len(bounds) != 2 {
			return nil, &UnsupportedError{What: "BETWEEN without two bounds"}
		}
		lo, hi, err := c.pair(bounds[0], bounds[1])
		if err != nil {
			return nil, err
		}
		return &Between{X: x, Lo: lo, Hi: hi, Not: a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return nil, &UnsupportedError{What: "BETWEEN SYMMETRIC"}
	}
	return nil, &UnsupportedError{What: "operator expression of kind " + a.Kind.String()}
}

func (c *pgConverter) pair(a, b *pg.Node) (Expr, Expr, error) {
	l, err := c.expr(a)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.expr(b)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// prefixOp converts -x, +x and the prefix operators the model lacks. The
// grammar already folds the sign into numeric constants (-5 is a constant).
func (c *pgConverter) prefixOp(op string, arg *pg.Node) (Expr, error) {
	switch op {
	case "+", "-":
		e, err := c.expr(arg)
		if err != nil {
			return nil, err
		}
		if op == "+" {
			return e, nil
		}
		if lit, ok := e.(*Literal); ok && negateLiteral(lit) {
			return lit, nil
		}
		return &Unary{Op: OpNeg, X: e}, nil
	}
	if name, ok := pgUnsupportedOps[op]; ok {
		return nil, &UnsupportedError{What: "operator " + name}
	}
	return nil, &UnsupportedError{What: "prefix operator " + op}
}

func (c *pgConverter) binaryOp(op string, ln, rn *pg.Node) (Expr, error) {
	if _, ok := pgLikeOps[op]; ok {
		return c.like(op, ln, rn)
	}
	model, ok := pgBinaryOps[op]
	negated := false
	if !ok && op != "^" {
		if model, negated = pgNegatedOps[op]; !negated {
			if name, ok := pgUnsupportedOps[op]; ok {
				return nil, &UnsupportedError{What: "operator " + name}
			}
			return nil, &UnsupportedError{What: "operator " + op}
		}
	}
	l, r, err := c.pair(ln, rn)
	if err != nil {
		return nil, err
	}
	if op == "^" {
		// PostgreSQL's ^ is exponentiation, the operator form of power().
		return &Func{Name: "power", Args: []Expr{l, r}}, nil
	}
	var out Expr = &Binary{Op: model, L: l, R: r}
	if negated {
		out = &Unary{Op: OpNot, X: out}
	}
	return out, nil
}

// like converts [NOT] LIKE / ILIKE. The grammar writes "x LIKE p ESCAPE e"
// as x ~~ like_escape(p, e).
func (c *pgConverter) like(op string, ln, rn *pg.Node) (Expr, error) {
	kind, ok := pgLikeOps[op]
	if !ok {
		return nil, &UnsupportedError{What: "LIKE with operator " + op}
	}
	x, err := c.expr(ln)
	if err != nil {
		return nil, err
	}
	out := &Like{X: x, Not: kind.not, CaseInsensitive: kind.ci}
	if f := rn.GetFuncCall(); f != nil && len(f.Funcname) == 2 && len(f.Args) == 2 &&
		f.Funcname[0].GetString_().GetSval() == "pg_catalog" && pgFuncName(f.Funcname) == "like_escape" {
		if out.Pattern, out.Escape, err = c.pair(f.Args[0], f.Args[1]); err != nil {
			return nil, err
		}
		return out, nil
	}
	if out.Pattern, err = c.expr(rn); err != nil {
		return nil, err
	}
	return out, nil
}

// anyAll converts x op ANY (array) and x op ALL (array). With a literal
// array, = ANY is IN and <> ALL is NOT IN (SQL defines IN that way), which
// is what the rest of dpproxy already understands.
func (c *pgConverter) anyAll(op string, ln, rn *pg.Node, all bool) (Expr, error) {
	model, ok := pgBinaryOps[op]
	if !ok {
		return nil, &UnsupportedError{What: "operator " + op + " with ANY/ALL"}
	}
	x, err := c.expr(ln)
	if err != nil {
		return nil, err
	}
	arr, err := c.expr(rn)
	if err != nil {
		return nil, err
	}
	if a, ok := arr.(*Array); ok && len(a.Items) > 0 {
		if model == OpEQ && !all {
			return &In{X: x, List: a.Items}, nil
		}
		if model == OpNE && all {
			return &In{X: x, List: a.Items, Not: true}, nil
		}
	}
	return &AnyOp{Op: model, X: x, Array: arr, All: all}, nil
}

// boolExpr converts AND / OR (the grammar flattens chains; they fold back to
// the left, as the MySQL side builds them) and NOT.
func (c *pgConverter) boolExpr(b *pg.BoolExpr) (Expr, error) {
	if b.Boolop == pg.BoolExprType_NOT_EXPR {
		if len(b.Args) != 1 {
			return nil, &UnsupportedError{What: "NOT with several arguments"}
		}
		e, err := c.expr(b.Args[0])
		if err != nil {
			return nil, err
		}
		// NOT (x IN (subquery)) is how the grammar writes NOT IN.
		if in, ok := e.(*In); ok && in.Sub != nil && !in.Not {
			if s := b.Args[0].GetSubLink(); s != nil {
				in.Not = true
				return in, nil
			}
		}
		return &Unary{Op: OpNot, X: e}, nil
	}
	op := OpAnd
	if b.Boolop == pg.BoolExprType_OR_EXPR {
		op = OpOr
	}
	args, err := c.exprs(b.Args)
	if err != nil {
		return nil, err
	}
	if len(args) < 2 {
		return nil, &UnsupportedError{What: "AND/OR with fewer than two arguments"}
	}
	out := args[0]
	for _, a := range args[1:] {
		out = &Binary{Op: op, L: out, R: a}
	}
	return out, nil
}

func (c *pgConverter) booleanTest(t *pg.BooleanTest) (Expr, error) {
	x, err := c.expr(t.Arg)
	if err != nil {
		return nil, err
	}
	switch t.Booltesttype {
	case pg.BoolTestType_IS_TRUE:
		return &IsBool{X: x, Value: true}, nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return &IsBool{X: x, Value: true, Not: true}, nil
	case pg.BoolTestType_IS_FALSE:
		return &IsBool{X: x}, nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return &IsBool{X: x, Not: true}, nil
	case pg.BoolTestType_IS_UNKNOWN:
		// For a boolean, unknown is NULL.
		return &IsNull{X: x}, nil
	case pg.BoolTestType_IS_NOT_UNKNOWN:
		return &IsNull{X: x, Not: true}, nil
	}
	return nil, &UnsupportedError{What: "boolean test of kind " + t.Booltesttype.String()}
}

func (c *pgConverter) caseExpr(k *pg.CaseExpr) (Expr, error) {
	out := &Case{Whens: make([]When, 0, len(k.Args))}
	var err error
	if k.Arg != nil {
		if out.Operand, err = c.expr(k.Arg); err != nil {
			return nil, err
		}
	}
	for _, n := range k.Args {
		w := n.GetCaseWhen()
		if w == nil {
			return nil, &UnsupportedError{What: "CASE arm of kind " + pgNodeName(n)}
		}
		cond, result, err := c.pair(w.Expr, w.Result)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond, Result: result})
	}
	if k.Defresult != nil {
		if out.Else, err = c.expr(k.Defresult); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// subLink converts subqueries in expressions. x IN (subquery) is an ANY
// sublink without an operator name; x op ANY/ALL (subquery) is refused as on
// the MySQL side.
func (c *pgConverter) subLink(s *pg.SubLink) (Expr, error) {
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, &UnsupportedError{What: "subquery of kind " + pgNodeName(s.Subselect)}
	}
	switch s.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_EXPR_SUBLINK, pg.SubLinkType_ARRAY_SUBLINK:
		q, err := c.selectStmt(sel)
		if err != nil {
			return nil, err
		}
		if s.SubLinkType == pg.SubLinkType_ARRAY_SUBLINK {
			return &ArraySubquery{Select: q}, nil
		}
		return &Subquery{Select: q, Exists: s.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK}, nil
	case pg.SubLinkType_ANY_SUBLINK:
		if len(s.OperName) == 0 {
			x, err := c.expr(s.Testexpr)
			if err != nil {
				return nil, err
			}
			q, err := c.selectStmt(sel)
			if err != nil {
				return nil, err
			}
			return &In{X: x, Sub: q}, nil
		}
		return nil, &UnsupportedError{What: "comparison with ANY/SOME/ALL (subquery)"}
	case pg.SubLinkType_ALL_SUBLINK:
		return nil, &UnsupportedError{What: "comparison with ANY/SOME/ALL (subquery)"}
	}
	return nil, &UnsupportedError{What: "subquery of kind " + s.SubLinkType.String()}
}

// indirection converts subscripts and field selections: arr[1],
// (current_schemas(false))[s.r], (i.keys).x.
func (c *pgConverter) indirection(ind *pg.A_Indirection) (Expr, error) {
	out, err := c.expr(ind.Arg)
	if err != nil {
		return nil, err
	}
	for _, n := range ind.Indirection {
		switch x := n.GetNode().(type) {
		case *pg.Node_AIndices:
			if x.AIndices.IsSlice {
				return nil, &UnsupportedError{What: "array slice"}
			}
			i, err := c.expr(x.AIndices.Uidx)
			if err != nil {
				return nil, err
			}
			out = &Subscript{X: out, Index: i}
		case *pg.Node_String_:
			out = &FieldSelect{X: out, Field: x.String_.Sval}
		default:
			return nil, &UnsupportedError{What: "(x).*"}
		}
	}
	return out, nil
}

// collate drops COLLATE "default", which psql appends to its name patterns
// and which asks for what an expression has anyway; any other collation is
// refused, as on the MySQL side.
func (c *pgConverter) collate(k *pg.CollateClause) (Expr, error) {
	names := k.Collname
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 || names[0].GetString_().GetSval() != "default" {
		return nil, &UnsupportedError{What: "COLLATE"}
	}
	return c.expr(k.Arg)
}
