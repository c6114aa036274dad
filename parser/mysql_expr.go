package parser

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

var mysqlBinaryOps = map[opcode.Op]Op{
	opcode.Plus:     OpAdd,
	opcode.Minus:    OpSub,
	opcode.Mul:      OpMul,
	opcode.Div:      OpDiv,
	opcode.IntDiv:   OpIntDiv,
	opcode.Mod:      OpMod,
	opcode.EQ:       OpEQ,
	opcode.NE:       OpNE,
	opcode.LT:       OpLT,
	opcode.LE:       OpLE,
	opcode.GT:       OpGT,
	opcode.GE:       OpGE,
	opcode.NullEQ:   OpNullEQ,
	opcode.LogicAnd: OpAnd, // AND, &&
	opcode.LogicOr:  OpOr,  // OR, || (PIPES_AS_CONCAT is off)
	opcode.LogicXor: OpXor,
	opcode.And:      OpBitAnd,
	opcode.Or:       OpBitOr,
}

var mysqlUnsupportedOps = map[opcode.Op]string{
	opcode.Xor:        "^ (bitwise xor)",
	opcode.LeftShift:  "<< (shift)",
	opcode.RightShift: ">> (shift)",
	opcode.BitNeg:     "~ (bitwise negation)",
}

// convertExpr converts a TiDB expression. Node kinds the model cannot hold
// are *UnsupportedError naming the construct.
func convertExpr(n ast.ExprNode) (Expr, error) {
	switch x := n.(type) {
	case *driver.ParamMarkerExpr:
		return &Param{Index: x.Order}, nil
	case *driver.ValueExpr:
		return convertValue(x)
	case *ast.ColumnNameExpr:
		return &ColumnRef{Schema: x.Name.Schema.O, Table: x.Name.Table.O, Name: x.Name.Name.O}, nil
	case *ast.ParenthesesExpr:
		return convertExpr(x.Expr)
	case *ast.BinaryOperationExpr:
		return convertBinary(x)
	case *ast.UnaryOperationExpr:
		return convertUnary(x)
	case *ast.VariableExpr:
		return convertVariable(x)
	case *ast.FuncCallExpr:
		return convertFuncCall(x)
	case *ast.AggregateFuncExpr:
		return convertAggregate(x)
	case *ast.WindowFuncExpr:
		return convertWindowFunc(x)
	case *ast.FuncCastExpr:
		return convertCast(x)
	case *ast.BetweenExpr:
		return convertBetween(x)
	case *ast.PatternInExpr:
		return convertIn(x)
	case *ast.IsNullExpr:
		e, err := convertExpr(x.Expr)
		if err != nil {
			return nil, err
		}
		return &IsNull{X: e, Not: x.Not}, nil
	case *ast.IsTruthExpr:
		e, err := convertExpr(x.Expr)
		if err != nil {
			return nil, err
		}
		return &IsBool{X: e, Value: x.True != 0, Not: x.Not}, nil
	case *ast.PatternLikeOrIlikeExpr:
		return convertLike(x)
	case *ast.PatternRegexpExpr:
		return convertRegexp(x)
	case *ast.CaseExpr:
		return convertCase(x)
	case *ast.SubqueryExpr:
		q, err := convertResultSet(x.Query)
		if err != nil {
			return nil, err
		}
		return &Subquery{Select: q, Exists: x.Exists}, nil
	case *ast.ExistsSubqueryExpr:
		return convertExists(x)
	case *ast.RowExpr:
		items, err := convertExprs(x.Values)
		if err != nil {
			return nil, err
		}
		return &Row{Items: items}, nil
	case *ast.PositionExpr:
		// ORDER BY 2 / GROUP BY 2: TiDB turns the integer into a position.
		if x.P != nil {
			return convertExpr(x.P)
		}
		return &Literal{Value: int64(x.N)}, nil
	case *ast.TimeUnitExpr:
		// A unit that is an argument by itself (EXTRACT(YEAR FROM d),
		// TIMESTAMPDIFF(DAY, a, b)) is a string constant, as PostgreSQL's
		// parser represents it too (extract('year', d)).
		return &Literal{Value: strings.ToLower(x.Unit.String())}, nil
	case *ast.TrimDirectionExpr:
		return &Literal{Value: strings.ToLower(x.Direction.String())}, nil
	case *ast.GetFormatSelectorExpr:
		return &Literal{Value: strings.ToLower(x.Selector.String())}, nil
	case *ast.CompareSubqueryExpr:
		return nil, &UnsupportedError{What: "comparison with ANY/SOME/ALL (subquery)"}
	case *ast.DefaultExpr:
		return nil, &UnsupportedError{What: "DEFAULT in an expression"}
	case *ast.ValuesExpr:
		return nil, &UnsupportedError{What: "VALUES() function"}
	case *ast.MatchAgainst:
		return nil, &UnsupportedError{What: "MATCH ... AGAINST"}
	case *ast.SetCollationExpr:
		return nil, &UnsupportedError{What: "COLLATE"}
	case nil:
		return nil, &UnsupportedError{What: "missing expression"}
	}
	return nil, &UnsupportedError{What: "expression of kind " + stmtName(n)}
}

func convertExprs(list []ast.ExprNode) ([]Expr, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]Expr, 0, len(list))
	for _, n := range list {
		e, err := convertExpr(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// convertValue converts a literal. Integers that do not fit int64 and
// decimal literals keep their exact text (Literal.Text) beside a float64.
func convertValue(v *driver.ValueExpr) (Expr, error) {
	switch v.Kind() {
	case driver.KindNull:
		return &Literal{}, nil
	case driver.KindInt64:
		if v.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			return &Literal{Value: v.GetInt64() != 0}, nil // TRUE / FALSE
		}
		return &Literal{Value: v.GetInt64()}, nil
	case driver.KindUint64:
		u := v.GetUint64()
		if u <= math.MaxInt64 {
			return &Literal{Value: int64(u)}, nil
		}
		return &Literal{Value: float64(u), IsDecimal: true, Text: strconv.FormatUint(u, 10)}, nil
	case driver.KindFloat32, driver.KindFloat64:
		return &Literal{Value: v.GetFloat64()}, nil
	case driver.KindString, driver.KindBytes:
		return &Literal{Value: v.GetString()}, nil
	case driver.KindBinaryLiteral:
		// x'41', 0x41, b'1': MySQL treats them as binary strings.
		return &Literal{Value: string(v.GetBytes())}, nil
	case driver.KindMysqlDecimal:
		text := v.GetMysqlDecimal().String()
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, &UnsupportedError{What: "decimal literal " + text + " (out of float64 range)"}
		}
		return &Literal{Value: f, IsDecimal: true, Text: text}, nil
	}
	return nil, &UnsupportedError{What: "literal of this kind"}
}

func convertBinary(x *ast.BinaryOperationExpr) (Expr, error) {
	op, ok := mysqlBinaryOps[x.Op]
	if !ok {
		if name, ok := mysqlUnsupportedOps[x.Op]; ok {
			return nil, &UnsupportedError{What: "operator " + name}
		}
		return nil, &UnsupportedError{What: "operator " + x.Op.String()}
	}
	l, err := convertExpr(x.L)
	if err != nil {
		return nil, err
	}
	r, err := convertExpr(x.R)
	if err != nil {
		return nil, err
	}
	return &Binary{Op: op, L: l, R: r}, nil
}

func convertUnary(x *ast.UnaryOperationExpr) (Expr, error) {
	switch x.Op {
	case opcode.Plus:
		return convertExpr(x.V)
	case opcode.Minus:
		e, err := convertExpr(x.V)
		if err != nil {
			return nil, err
		}
		if lit, ok := e.(*Literal); ok && negateLiteral(lit) {
			return lit, nil
		}
		return &Unary{Op: OpNeg, X: e}, nil
	case opcode.Not, opcode.Not2:
		e, err := convertExpr(x.V)
		if err != nil {
			return nil, err
		}
		return &Unary{Op: OpNot, X: e}, nil
	}
	if name, ok := mysqlUnsupportedOps[x.Op]; ok {
		return nil, &UnsupportedError{What: "operator " + name}
	}
	return nil, &UnsupportedError{What: "operator " + x.Op.String()}
}

// negateLiteral folds the sign into a numeric literal (-5 is Literal -5, not
// a negation of 5) and reports whether it could.
func negateLiteral(l *Literal) bool {
	switch v := l.Value.(type) {
	case int64:
		if v == math.MinInt64 {
			return false
		}
		l.Value = -v
	case float64:
		if l.IsDecimal {
			if l.Text == "9223372036854775808" {
				// The one unsigned literal whose negation fits int64.
				l.Value, l.IsDecimal, l.Text = int64(math.MinInt64), false, ""
				return true
			}
			if rest, ok := strings.CutPrefix(l.Text, "-"); ok {
				l.Text = rest
			} else {
				l.Text = "-" + l.Text
			}
		}
		l.Value = -v
	default:
		return false
	}
	return true
}

func convertVariable(x *ast.VariableExpr) (Expr, error) {
	if x.Value != nil {
		return nil, &UnsupportedError{What: "assignment to a user variable inside an expression (@v := ...)"}
	}
	if x.IsInstance {
		return nil, &UnsupportedError{What: "@@instance variables"}
	}
	v := &Variable{Name: strings.ToLower(x.Name), System: x.IsSystem}
	if x.IsSystem && x.ExplicitScope {
		v.Scope = ScopeSession
		if x.IsGlobal {
			v.Scope = ScopeGlobal
		}
	}
	return v, nil
}

func convertBetween(x *ast.BetweenExpr) (Expr, error) {
	e, err := convertExpr(x.Expr)
	if err != nil {
		return nil, err
	}
	lo, err := convertExpr(x.Left)
	if err != nil {
		return nil, err
	}
	hi, err := convertExpr(x.Right)
	if err != nil {
		return nil, err
	}
	return &Between{X: e, Lo: lo, Hi: hi, Not: x.Not}, nil
}

func convertIn(x *ast.PatternInExpr) (Expr, error) {
	e, err := convertExpr(x.Expr)
	if err != nil {
		return nil, err
	}
	out := &In{X: e, Not: x.Not}
	if x.Sel != nil {
		sub, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, &UnsupportedError{What: "IN with a right side of kind " + stmtName(x.Sel)}
		}
		if out.Sub, err = convertResultSet(sub.Query); err != nil {
			return nil, err
		}
		return out, nil
	}
	if out.List, err = convertExprs(x.List); err != nil {
		return nil, err
	}
	return out, nil
}

func convertLike(x *ast.PatternLikeOrIlikeExpr) (Expr, error) {
	e, err := convertExpr(x.Expr)
	if err != nil {
		return nil, err
	}
	pattern, err := convertExpr(x.Pattern)
	if err != nil {
		return nil, err
	}
	out := &Like{X: e, Pattern: pattern, Not: x.Not, CaseInsensitive: !x.IsLike}
	if x.EscapeExplicit {
		// TiDB keeps the escape character as a byte; 0 is ESCAPE ''.
		esc := ""
		if x.Escape != 0 {
			esc = string([]byte{x.Escape})
		}
		out.Escape = &Literal{Value: esc}
	}
	return out, nil
}

func convertRegexp(x *ast.PatternRegexpExpr) (Expr, error) {
	e, err := convertExpr(x.Expr)
	if err != nil {
		return nil, err
	}
	pattern, err := convertExpr(x.Pattern)
	if err != nil {
		return nil, err
	}
	var out Expr = &Binary{Op: OpRegex, L: e, R: pattern}
	if x.Not {
		out = &Unary{Op: OpNot, X: out}
	}
	return out, nil
}

func convertCase(x *ast.CaseExpr) (Expr, error) {
	out := &Case{Whens: make([]When, 0, len(x.WhenClauses))}
	var err error
	if x.Value != nil {
		if out.Operand, err = convertExpr(x.Value); err != nil {
			return nil, err
		}
	}
	for _, w := range x.WhenClauses {
		cond, err := convertExpr(w.Expr)
		if err != nil {
			return nil, err
		}
		result, err := convertExpr(w.Result)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond, Result: result})
	}
	if x.ElseClause != nil {
		if out.Else, err = convertExpr(x.ElseClause); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func convertExists(x *ast.ExistsSubqueryExpr) (Expr, error) {
	sub, ok := x.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil, &UnsupportedError{What: "EXISTS of kind " + stmtName(x.Sel)}
	}
	q, err := convertResultSet(sub.Query)
	if err != nil {
		return nil, err
	}
	var out Expr = &Subquery{Select: q, Exists: true}
	if x.Not {
		out = &Unary{Op: OpNot, X: out}
	}
	return out, nil
}
