package parser

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// pgUnnamedColumn is the name PostgreSQL gives a column it cannot name.
const pgUnnamedColumn = "?column?"

// pgSQLValueFunctionNames are the column names of the SQL value functions,
// which are their SQL spelling (USER stays "user"), unlike their model Func
// names.
var pgSQLValueFunctionNames = map[pg.SQLValueFunctionOp]string{
	pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        "current_date",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      "current_time",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME:           "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         "localtime",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    "localtimestamp",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:        "current_role",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:        "current_user",
	pg.SQLValueFunctionOp_SVFOP_USER:                "user",
	pg.SQLValueFunctionOp_SVFOP_SESSION_USER:        "session_user",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:     "current_catalog",
	pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:      "current_schema",
}

// pgColumnName is the name PostgreSQL gives an unaliased select item:
// FigureColname of src/backend/parser/parse_target.c (PostgreSQL 17),
// followed rule by rule.
func pgColumnName(n *pg.Node) string {
	name, _ := pgFigureColname(n)
	if name == "" {
		return pgUnnamedColumn
	}
	return name
}

// pgFigureColname returns a name and its strength: 2 for a name taken from
// the expression (a column, a function), 1 for a fallback (a type name,
// "case"), 0 for none. A cast keeps its argument's name unless that is only
// a fallback.
func pgFigureColname(n *pg.Node) (string, int) {
	switch x := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		fields := x.ColumnRef.Fields
		for i := len(fields) - 1; i >= 0; i-- {
			if s := fields[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
	case *pg.Node_AIndirection:
		// The last field name, ignoring subscripts; else the argument's.
		ind := x.AIndirection
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return pgFigureColname(ind.Arg)
	case *pg.Node_FuncCall:
		return pgFuncName(x.FuncCall.Funcname), 2
	case *pg.Node_AExpr:
		if x.AExpr.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case *pg.Node_TypeCast:
		name, strength := pgFigureColname(x.TypeCast.Arg)
		if strength <= 1 && x.TypeCast.TypeName != nil && len(x.TypeCast.TypeName.Names) > 0 {
			return pgFuncName(x.TypeCast.TypeName.Names), 1
		}
		return name, strength
	case *pg.Node_CollateClause:
		return pgFigureColname(x.CollateClause.Arg)
	case *pg.Node_GroupingFunc:
		return "grouping", 2
	case *pg.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg.SubLinkType_EXPR_SUBLINK:
			// The subquery's single column's name.
			if sel := x.SubLink.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) > 0 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name, 2
					}
					return pgColumnName(rt.Val), 2
				}
			}
		}
	case *pg.Node_CaseExpr:
		name, strength := pgFigureColname(x.CaseExpr.Defresult)
		if strength <= 1 {
			return "case", 1
		}
		return name, strength
	case *pg.Node_AArrayExpr:
		return "array", 2
	case *pg.Node_RowExpr:
		return "row", 2
	case *pg.Node_CoalesceExpr:
		return "coalesce", 2
	case *pg.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			return "least", 2
		}
		return "greatest", 2
	case *pg.Node_SqlvalueFunction:
		return pgSQLValueFunctionNames[x.SqlvalueFunction.Op], 2
	}
	return "", 0
}
