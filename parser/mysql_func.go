package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// TiDB parses typed literals (DATE '2024-01-01', {d '...'}) as calls of
// internal functions; they are casts of a string.
var mysqlTypedLiterals = map[string]string{
	ast.DateLiteral:      "date",
	ast.TimeLiteral:      "time",
	ast.TimestampLiteral: "datetime",
}

// Date arithmetic that TiDB parses as name(date, n, unit); "d + INTERVAL n
// unit" becomes DATE_ADD too. The model keeps the interval as one argument.
var mysqlDateArith = map[string]bool{
	"date_add": true, "date_sub": true, "adddate": true, "subdate": true,
}

func convertFuncCall(x *ast.FuncCallExpr) (Expr, error) {
	name := x.FnName.L
	if typ, ok := mysqlTypedLiterals[name]; ok && len(x.Args) == 1 {
		e, err := convertExpr(x.Args[0])
		if err != nil {
			return nil, err
		}
		return &Cast{X: e, Type: typ}, nil
	}
	switch name {
	case ast.NextVal, ast.LastVal, ast.SetVal:
		return nil, &UnsupportedError{What: "sequence function " + name}
	}
	if unit, ok := dateArithUnit(name, x.Args); ok {
		date, err := convertExpr(x.Args[0])
		if err != nil {
			return nil, err
		}
		n, err := convertExpr(x.Args[1])
		if err != nil {
			return nil, err
		}
		return &Func{Schema: x.Schema.L, Name: name, Args: []Expr{date, &Interval{Value: n, Unit: unit}}}, nil
	}
	args, err := convertExprs(x.Args)
	if err != nil {
		return nil, err
	}
	return &Func{Schema: x.Schema.L, Name: name, Args: args}, nil
}

func dateArithUnit(name string, args []ast.ExprNode) (string, bool) {
	if !mysqlDateArith[name] || len(args) != 3 {
		return "", false
	}
	u, ok := args[2].(*ast.TimeUnitExpr)
	if !ok {
		return "", false
	}
	return strings.ToLower(u.Unit.String()), true
}

// convertAggregate converts COUNT, SUM, AVG, MIN, MAX, STDDEV, ... TiDB
// names STD/STDDEV/STDDEV_POP "stddev_pop" and VARIANCE/VAR_POP "var_pop":
// MySQL defines them as the population statistics, and the explicit name
// keeps them apart from PostgreSQL's stddev/variance, which are the sample
// ones.
func convertAggregate(x *ast.AggregateFuncExpr) (Expr, error) {
	f := &Func{Name: strings.ToLower(x.F), Distinct: x.Distinct}
	if err := aggregateArgs(f, x.Args); err != nil {
		return nil, err
	}
	if x.Order != nil {
		// GROUP_CONCAT(... ORDER BY ...); its last argument is the separator.
		order, err := convertOrderBy(x.Order)
		if err != nil {
			return nil, err
		}
		f.WithinGroup = order
	}
	return f, nil
}

func convertWindowFunc(x *ast.WindowFuncExpr) (Expr, error) {
	f := &Func{Name: strings.ToLower(x.Name), Distinct: x.Distinct, Over: true}
	if err := aggregateArgs(f, x.Args); err != nil {
		return nil, err
	}
	return f, nil
}

// aggregateArgs fills f's arguments. TiDB parses COUNT(*) as COUNT(1) with a
// literal it creates itself; that literal never had a position in the text
// (offset 0, which no argument typed inside "COUNT(" can have), and it is
// how COUNT(*) is told from COUNT(1).
func aggregateArgs(f *Func, args []ast.ExprNode) error {
	if f.Name == ast.AggFuncCount && !f.Distinct && len(args) == 1 {
		if v, ok := args[0].(*driver.ValueExpr); ok && v.OriginTextPosition() == 0 {
			f.Star = true
			return nil
		}
	}
	var err error
	f.Args, err = convertExprs(args)
	return err
}

// convertCast normalises the target type to the model's names.
func convertCast(x *ast.FuncCastExpr) (Expr, error) {
	e, err := convertExpr(x.Expr)
	if err != nil {
		return nil, err
	}
	if x.FunctionType == ast.CastBinaryOperator {
		return &Cast{X: e, Type: "binary"}, nil // BINARY x
	}
	return &Cast{X: e, Type: castTypeName(x.Tp)}, nil
}

func castTypeName(tp *types.FieldType) string {
	switch t := tp.GetType(); t {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		return "int" // SIGNED, UNSIGNED
	case mysql.TypeNewDecimal:
		return "decimal"
	case mysql.TypeFloat, mysql.TypeDouble:
		return "float"
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar,
		mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if tp.GetCharset() == charset.CharsetBin {
			return "binary" // CAST(x AS BINARY)
		}
		return "string" // CHAR(n), NCHAR: the length is not kept
	case mysql.TypeDate:
		return "date"
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		return "datetime"
	case mysql.TypeDuration:
		return "time"
	default:
		if name := types.TypeStr(t); name != "" {
			return strings.ToLower(name)
		}
		return "unknown"
	}
}
