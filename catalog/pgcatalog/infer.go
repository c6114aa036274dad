package pgcatalog

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/rewrite"
)

var unknownType = pgType{}

// typeOf is the PostgreSQL type of an expression of a catalog query, as far
// as the emulation can tell without resolving scopes: a column by its name
// (catalog column names are unique enough, see columnTypes), a function by
// its declared result, a cast by its target. The zero pgType means unknown;
// the answer's values decide then.
func typeOf(e parser.Expr) pgType {
	switch e := e.(type) {
	case *parser.ColumnRef:
		return columnTypes[e.Name]
	case *parser.Literal:
		switch v := e.Value.(type) {
		case int64:
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return typesByOID[OIDInt4]
			}
			return typesByOID[OIDInt8]
		case float64:
			return typesByOID[OIDNumeric]
		case bool:
			return typesByOID[OIDBool]
		case string, nil:
			return typesByOID[OIDText]
		}
	case *parser.Cast:
		switch e.Type {
		case "int":
			return typesByOID[OIDInt8]
		case "float":
			return typesByOID[OIDFloat8]
		case "decimal":
			return typesByOID[OIDNumeric]
		case "string":
			return typesByOID[OIDText]
		}
		if t, ok := lookupType(e.Type); ok {
			return t
		}
	case *parser.Func:
		spec, ok := functions[e.Name]
		if !ok {
			return unknownType
		}
		if spec.ret != 0 {
			return typesByOID[spec.ret]
		}
		if len(e.Args) > 0 {
			return typeOf(e.Args[0])
		}
	case *parser.Case:
		for _, w := range e.Whens {
			if t := typeOf(w.Result); t.OID != 0 {
				return t
			}
		}
		if e.Else != nil {
			return typeOf(e.Else)
		}
	case *parser.Binary:
		switch e.Op {
		case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv, parser.OpMod:
			return typeOf(e.L)
		case parser.OpConcat:
			return typesByOID[OIDText]
		}
		return typesByOID[OIDBool]
	case *parser.Unary:
		if e.Op == parser.OpNeg {
			return typeOf(e.X)
		}
		return typesByOID[OIDBool]
	case *parser.In, *parser.Like, *parser.IsNull, *parser.IsBool, *parser.Between, *parser.AnyOp:
		return typesByOID[OIDBool]
	case *parser.Subquery:
		if e.Exists {
			return typesByOID[OIDBool]
		}
		if sel, ok := e.Select.(*parser.Select); ok && len(sel.Items) == 1 && !sel.Items[0].Star {
			return typeOf(sel.Items[0].Expr)
		}
	case *parser.Array:
		if len(e.Items) > 0 {
			if t := typeOf(e.Items[0]); t.Array != 0 {
				return typesByOID[t.Array]
			}
		}
		return typesByOID[OIDTextArray]
	case *parser.ArraySubquery:
		if sel, ok := e.Select.(*parser.Select); ok && len(sel.Items) == 1 && !sel.Items[0].Star {
			if t := typeOf(sel.Items[0].Expr); t.Array != 0 {
				return typesByOID[t.Array]
			}
		}
		return typesByOID[OIDTextArray]
	case *parser.Subscript:
		if t := typeOf(e.X); t.Elem != 0 {
			return typesByOID[t.Elem]
		}
	}
	return unknownType
}

// firstSelect is the SELECT that names a statement's columns (the left
// arm of a set operation).
func firstSelect(s parser.Statement) *parser.Select {
	for {
		switch x := s.(type) {
		case *parser.Select:
			return x
		case *parser.SetOp:
			s = x.Left
		default:
			return nil
		}
	}
}

// resultColumns types the answer's columns: from the select list where it
// has no star, else by column name; what stays unknown is typed from the
// first non-NULL value.
func resultColumns(stmt parser.Statement, names []string, rows [][]any) []Column {
	cols := make([]Column, len(names))
	sel := firstSelect(stmt)
	byItem := sel != nil && len(sel.Items) == len(names)
	for _, it := range sel.Items {
		byItem = byItem && !it.Star
	}
	for i, n := range names {
		var t pgType
		if byItem {
			cols[i].Name = rewrite.CatalogColumnName(sel.Items[i])
			t = typeOf(sel.Items[i].Expr)
		} else {
			cols[i].Name = n
			t = columnTypes[n]
		}
		// Array element types and the internal storage types go out as
		// what clients can read.
		switch t.OID {
		case OIDInt2Vector:
			t = typesByOID[OIDInt2Array]
		case OIDOidVector:
			t = typesByOID[OIDOidArray]
		case OIDNodeTree:
			t = typesByOID[OIDText]
		}
		cols[i].OID = t.OID
		if t.OID == 0 {
			cols[i].OID = OIDText
			for _, r := range rows {
				if r[i] == nil {
					continue
				}
				switch r[i].(type) {
				case int64:
					cols[i].OID = OIDInt8
				case float64:
					cols[i].OID = OIDFloat8
				case []byte:
					cols[i].OID = OIDBytea
				}
				break
			}
		}
	}
	return cols
}

// outputValue converts a stored value to its PostgreSQL type: 0/1 to
// booleans, OIDs of regclass and regtype to names, JSON arrays to
// PostgreSQL's array text.
func (c *Catalog) outputValue(oid uint32, v any) any {
	if v == nil {
		return nil
	}
	t := typesByOID[oid]
	switch {
	case oid == OIDBool:
		return truthy(v)
	case oid == OIDRegclass:
		return c.regclassOut(uint32(integer(v)))
	case oid == OIDRegtype:
		return formatType(uint32(integer(v)), -1)
	case oid == OIDRegnsp:
		for name, o := range c.namespaces() {
			if int64(o) == integer(v) {
				return quoteIdentIfNeeded(name)
			}
		}
		return strconv.FormatInt(integer(v), 10)
	case t.Category == 'A':
		if s, ok := v.(string); ok {
			var elems []any
			if json.Unmarshal([]byte(s), &elems) == nil {
				return arrayLiteral(elems)
			}
		}
		return v
	case oid == OIDFloat4 || oid == OIDFloat8 || oid == OIDNumeric:
		switch x := v.(type) {
		case int64:
			return float64(x)
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f
			}
		}
		return v
	case t.Category == 'N': // integers, OIDs, reg*
		switch x := v.(type) {
		case float64:
			return int64(x)
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n
			}
		}
		return v
	case oid == OIDBytea:
		return v
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return string(x)
	}
	return v
}
