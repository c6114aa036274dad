package pgcatalog

import (
	"github.com/dpproxy/dpproxy/parser"
)

// IsCatalogQuery reports whether a statement is for the catalog to answer:
// it names a pg_catalog or information_schema relation, or calls a
// catalog function (version(), current_setting(), pg_get_expr(), a
// refused one such as query_to_xml). A query that also reads a private
// table is still the catalog's, which refuses it: catalog and private rows
// never meet in one answer.
func (c *Catalog) IsCatalogQuery(stmt parser.Statement) bool {
	found := false
	walkStatement(stmt, func(t *parser.TableName) {
		if isCatalogRelation(t) {
			found = true
		}
	}, func(f *parser.Func) {
		if spec, ok := functions[f.Name]; ok && spec.catalog {
			found = true
		}
		if _, err := function(f); err != nil {
			if _, ok := err.(*RefusedError); ok && isRefusedByName(f.Name) {
				found = true
			}
		}
	})
	return found
}

func isCatalogRelation(t *parser.TableName) bool {
	switch t.Schema {
	case PGCatalog, InformationSchema:
		return true
	case "":
		if _, ok := refusedRelation(t.Name); ok {
			return true
		}
		_, ok := relationsBy[PGCatalog+"."+t.Name]
		return ok
	}
	return false
}

// isRefusedByName reports the functions refused for what they do (as
// opposed to those merely not on the allow-list).
func isRefusedByName(name string) bool {
	if _, ok := refusedFunctions[name]; ok {
		return true
	}
	for _, p := range refusedPrefixes {
		if len(name) >= len(p.prefix) && name[:len(p.prefix)] == p.prefix {
			return true
		}
	}
	return false
}

// walkStatement calls rel for every relation and fn for every function
// call of a statement, its subqueries and derived tables included.
//
// Casts to the catalog's object types ('adult'::regclass) are reported as
// calls of their input functions (regclassin, ...), which are catalog
// functions.
func walkStatement(s parser.Statement, rel func(*parser.TableName), fn func(*parser.Func)) {
	w := walker{rel: rel, fn: fn}
	w.stmt(s)
}

type walker struct {
	rel func(*parser.TableName)
	fn  func(*parser.Func)
}

func (w walker) stmt(s parser.Statement) {
	switch s := s.(type) {
	case *parser.Select:
		for _, it := range s.Items {
			w.expr(it.Expr)
		}
		w.from(s.From)
		w.expr(s.Where)
		for _, g := range s.GroupBy {
			w.expr(g)
		}
		w.expr(s.Having)
		w.order(s.OrderBy)
		w.limit(s.Limit)
	case *parser.SetOp:
		w.stmt(s.Left)
		w.stmt(s.Right)
		w.order(s.OrderBy)
		w.limit(s.Limit)
	}
}

func (w walker) order(items []parser.OrderItem) {
	for _, o := range items {
		w.expr(o.Expr)
	}
}

func (w walker) limit(l *parser.Limit) {
	if l != nil {
		w.expr(l.Count)
		w.expr(l.Offset)
	}
}

func (w walker) from(t parser.TableExpr) {
	switch t := t.(type) {
	case *parser.TableName:
		w.rel(t)
	case *parser.Join:
		w.from(t.Left)
		w.from(t.Right)
		w.expr(t.On)
	case *parser.DerivedTable:
		w.stmt(t.Select)
	case *parser.FuncTable:
		w.expr(t.Func)
	}
}

func (w walker) exprs(list []parser.Expr) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w walker) expr(e parser.Expr) {
	switch e := e.(type) {
	case nil:
	case *parser.Func:
		w.fn(e)
		w.exprs(e.Args)
		w.order(e.WithinGroup)
		if e.Window != nil {
			w.exprs(e.Window.PartitionBy)
			w.order(e.Window.OrderBy)
		}
	case *parser.Unary:
		w.expr(e.X)
	case *parser.Binary:
		w.expr(e.L)
		w.expr(e.R)
	case *parser.Case:
		w.expr(e.Operand)
		for _, c := range e.Whens {
			w.expr(c.Cond)
			w.expr(c.Result)
		}
		w.expr(e.Else)
	case *parser.Between:
		w.exprs([]parser.Expr{e.X, e.Lo, e.Hi})
	case *parser.In:
		w.expr(e.X)
		w.exprs(e.List)
		if e.Sub != nil {
			w.stmt(e.Sub)
		}
	case *parser.IsNull:
		w.expr(e.X)
	case *parser.IsBool:
		w.expr(e.X)
	case *parser.Like:
		w.exprs([]parser.Expr{e.X, e.Pattern, e.Escape})
	case *parser.Cast:
		switch e.Type {
		case "regclass", "regtype", "regnamespace", "regproc", "regrole":
			w.fn(&parser.Func{Schema: PGCatalog, Name: e.Type + "in"})
		}
		w.expr(e.X)
	case *parser.Subquery:
		w.stmt(e.Select)
	case *parser.Row:
		w.exprs(e.Items)
	case *parser.Interval:
		w.expr(e.Value)
	case *parser.Array:
		w.exprs(e.Items)
	case *parser.ArraySubquery:
		w.stmt(e.Select)
	case *parser.AnyOp:
		w.expr(e.X)
		w.expr(e.Array)
	case *parser.Subscript:
		w.expr(e.X)
		w.expr(e.Index)
	case *parser.FieldSelect:
		w.expr(e.X)
	}
}
