package parser

import "strings"

// inlineCTEs replaces, in FROM clauses of q, every unqualified table named
// like a common table expression of a WITH clause by that query as a derived
// table. A CTE is a named subquery; with it inlined, everything downstream
// sees derived tables only (and judges them as such). Later CTEs may use
// earlier ones: the caller inlines the earlier ones into each in turn.
func inlineCTEs(q Statement, ctes map[string]Statement) {
	if len(ctes) == 0 {
		return
	}
	switch s := q.(type) {
	case *Select:
		s.From = inlineFrom(s.From, ctes)
	case *SetOp:
		inlineCTEs(s.Left, ctes)
		inlineCTEs(s.Right, ctes)
	}
}

func inlineFrom(te TableExpr, ctes map[string]Statement) TableExpr {
	switch t := te.(type) {
	case *TableName:
		if t.Schema != "" {
			return t
		}
		if q, ok := ctes[strings.ToLower(t.Name)]; ok {
			alias := t.Alias
			if alias == "" {
				alias = t.Name
			}
			return &DerivedTable{Select: q, Alias: alias}
		}
	case *Join:
		t.Left = inlineFrom(t.Left, ctes)
		t.Right = inlineFrom(t.Right, ctes)
	case *DerivedTable:
		inlineCTEs(t.Select, ctes)
	}
	return te
}
