package proxy

import (
	"strings"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
)

// probe answers a metadata probe over private tables (SELECT * FROM t
// LIMIT 0, ... WHERE 1=0: how Tableau and pyodbc learn a result's columns)
// with its columns and no rows, free and without a backend round trip. It is
// decided from the statement, the client's parameters and the schema alone
// (rewrite.ProvablyEmpty), so the answer is the same for every database.
// ok is false when sel is not such a probe, or when it names something this
// cannot resolve: it then takes the usual path.
func (s *Session) probe(sel *parser.Select, args []Value) (*Result, bool) {
	if !rewrite.ProvablyEmpty(sel, args) {
		return nil, false
	}
	refs, ok := rewrite.ColumnRefs(sel)
	if !ok {
		return nil, false
	}
	sc := &probeScope{}
	for _, tn := range baseTables(sel.From) {
		t, _ := s.engine.policy.Table(tn.Name)
		cols, ok := s.engine.columnInfo(tn.Name)
		if t == nil || !ok {
			return nil, false
		}
		sc.tables = append(sc.tables, probeTable{name: tn.Name, alias: tn.Alias, policy: t, cols: cols})
	}
	aliases := map[string]bool{}
	for _, it := range sel.Items {
		if it.Alias != "" {
			aliases[strings.ToLower(it.Alias)] = true
		}
	}
	for _, ref := range refs {
		if _, _, ok := sc.resolve(ref); !ok && (ref.Table != "" || !aliases[strings.ToLower(ref.Name)]) {
			return nil, false
		}
	}
	res := &Result{Columns: []Column{}, Rows: [][]Value{}}
	for _, it := range sel.Items {
		if it.Star {
			found := false
			for _, t := range sc.tables {
				if it.StarTable != "" && !t.named(it.StarTable) {
					continue
				}
				found = true
				for _, c := range t.cols {
					res.Columns = append(res.Columns, Column{Name: c.Name, Type: probeColumnType(t.policy, c), Table: t.name, Schema: s.engine.database})
				}
			}
			if !found {
				return nil, false
			}
			continue
		}
		col := Column{Name: it.ColumnName(), Type: sc.exprType(it.Expr)}
		if ref, ok := it.Expr.(*parser.ColumnRef); ok && it.Alias == "" {
			if t, _, ok := sc.resolve(ref); ok {
				col.Table, col.Schema = t.name, s.engine.database
			}
		}
		res.Columns = append(res.Columns, col)
	}
	return res, true
}

type probeTable struct {
	name, alias string
	policy      *policy.Table
	cols        []backend.ColumnInfo
}

func (t probeTable) named(n string) bool {
	if t.alias != "" {
		return strings.EqualFold(t.alias, n)
	}
	return strings.EqualFold(t.name, n)
}

type probeScope struct{ tables []probeTable }

// resolve finds the column a reference names: in the table it names, or in
// the one table of the FROM clause that has it.
func (sc *probeScope) resolve(ref *parser.ColumnRef) (probeTable, backend.ColumnInfo, bool) {
	var (
		hit   probeTable
		col   backend.ColumnInfo
		found int
	)
	for _, t := range sc.tables {
		if ref.Table != "" && !t.named(ref.Table) {
			continue
		}
		for _, c := range t.cols {
			if strings.EqualFold(c.Name, ref.Name) {
				hit, col = t, c
				found++
			}
		}
	}
	return hit, col, found == 1
}

// exprType types a select item from the schema: a column by its policy (else
// backend) type, COUNT as an integer, other aggregates as floats (MIN and
// MAX keep their argument's type), a literal by its value, the rest as text.
func (sc *probeScope) exprType(e parser.Expr) ColumnType {
	switch x := e.(type) {
	case *parser.ColumnRef:
		if t, c, ok := sc.resolve(x); ok {
			return probeColumnType(t.policy, c)
		}
	case *parser.Literal:
		switch x.Value.(type) {
		case int64, int, uint64, bool:
			return TypeInt
		case float64:
			return TypeFloat
		case nil:
			return TypeNull
		}
	case *parser.Func:
		switch x.Name {
		case "count":
			return TypeInt
		case "min", "max":
			if len(x.Args) == 1 {
				return sc.exprType(x.Args[0])
			}
		case "sum", "avg", "stddev", "stddev_pop", "stddev_samp", "std", "variance", "var_pop", "var_samp",
			"percentile_cont", "percentile_disc", "median":
			return TypeFloat
		}
	case *parser.Binary:
		switch x.Op {
		case parser.OpAdd, parser.OpSub, parser.OpMul, parser.OpDiv:
			l, r := sc.exprType(x.L), sc.exprType(x.R)
			if l == TypeInt && r == TypeInt && x.Op != parser.OpDiv {
				return TypeInt
			}
			if (l == TypeInt || l == TypeFloat) && (r == TypeInt || r == TypeFloat) {
				return TypeFloat
			}
		case parser.OpEQ, parser.OpNE, parser.OpLT, parser.OpLE, parser.OpGT, parser.OpGE, parser.OpNullEQ,
			parser.OpAnd, parser.OpOr, parser.OpXor:
			return TypeInt
		}
	}
	return TypeString
}

// probeColumnType is a column's wire type: from its policy type when the
// policy declares one, else from the backend's declared type.
func probeColumnType(t *policy.Table, c backend.ColumnInfo) ColumnType {
	if pc, ok := t.Column(c.Name); ok {
		switch pc.Type {
		case policy.TypeInt, policy.TypeBool:
			return TypeInt
		case policy.TypeFloat:
			return TypeFloat
		case policy.TypeString:
			return TypeString
		case policy.TypeDate:
			return TypeDate
		}
	}
	typ := strings.ToLower(c.Type)
	switch {
	case strings.Contains(typ, "int"), strings.HasPrefix(typ, "bool"), strings.HasPrefix(typ, "bit"):
		return TypeInt
	case strings.Contains(typ, "float"), strings.Contains(typ, "double"), strings.Contains(typ, "real"),
		strings.Contains(typ, "dec"), strings.Contains(typ, "numeric"):
		return TypeFloat
	case strings.HasPrefix(typ, "datetime"), strings.HasPrefix(typ, "timestamp"):
		return TypeDateTime
	case strings.HasPrefix(typ, "date"):
		return TypeDate
	}
	return TypeString
}
