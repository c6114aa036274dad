package parser

// MapExpr rebuilds e bottom-up: f may replace a node (done=true) or leave it
// to be rebuilt from its mapped children. Unchanged subtrees are shared.
func MapExpr(e Expr, f func(Expr) (Expr, bool)) Expr {
	if e == nil {
		return nil
	}
	if r, done := f(e); done {
		return r
	}
	m := func(x Expr) Expr { return MapExpr(x, f) }
	switch n := e.(type) {
	case *Unary:
		c := *n
		c.X = m(n.X)
		return &c
	case *Binary:
		c := *n
		c.L, c.R = m(n.L), m(n.R)
		return &c
	case *Func:
		c := *n
		c.Args = make([]Expr, len(n.Args))
		for i, x := range n.Args {
			c.Args[i] = m(x)
		}
		return &c
	case *Case:
		c := *n
		c.Operand, c.Else = m(n.Operand), m(n.Else)
		c.Whens = make([]When, len(n.Whens))
		for i, w := range n.Whens {
			c.Whens[i] = When{Cond: m(w.Cond), Result: m(w.Result)}
		}
		return &c
	case *Between:
		c := *n
		c.X, c.Lo, c.Hi = m(n.X), m(n.Lo), m(n.Hi)
		return &c
	case *In:
		c := *n
		c.X = m(n.X)
		c.List = make([]Expr, len(n.List))
		for i, x := range n.List {
			c.List[i] = m(x)
		}
		return &c
	case *IsNull:
		c := *n
		c.X = m(n.X)
		return &c
	case *IsBool:
		c := *n
		c.X = m(n.X)
		return &c
	case *Like:
		c := *n
		c.X, c.Pattern, c.Escape = m(n.X), m(n.Pattern), m(n.Escape)
		return &c
	case *Cast:
		c := *n
		c.X = m(n.X)
		return &c
	}
	return e
}
