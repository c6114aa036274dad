package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/rewrite"
)

// explainColumns are the columns of EXPLAIN PRIVACY.
var explainColumns = []Column{
	{Name: "aggregate", Type: TypeString},
	{Name: "quantity", Type: TypeString},
	{Name: "mechanism", Type: TypeString},
	{Name: "sensitivity", Type: TypeFloat},
	{Name: "noise_scale", Type: TypeFloat},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "delta", Type: TypeFloat},
	{Name: "ci95_half_width", Type: TypeFloat},
}

// explainPrivacy plans a query exactly as answering it would — same
// analysis, same budget split, same mechanisms — and reports, per noisy
// quantity, its mechanism, sensitivity, noise scale, share of ε and δ and
// the half-width of its 95% noise interval, then the total charge. Nothing
// is run in the backend and nothing is charged.
func (s *Session) explainPrivacy(ctx context.Context, st *parser.ExplainPrivacy, args []Value) (*Result, error) {
	if st.Params > len(args) {
		return nil, Errorf(CodeBadValue, "the query has %d parameters; prepare EXPLAIN PRIVACY to give them", st.Params)
	}
	sel := st.Select.(*parser.Select)
	private := false
	for _, tn := range baseTables(sel.From) {
		t, ok := s.engine.policy.Table(tn.Name)
		if !ok {
			return nil, Errorf(CodeUnknownTable, "Table '%s.%s' doesn't exist", s.engine.database, tn.Name)
		}
		private = private || !t.Public
	}
	if !private {
		return nil, Errorf(CodeUnsupported, "EXPLAIN PRIVACY explains queries over private tables; this one reads none")
	}
	plan, rel, err := s.prepareRelease(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: explainColumns}
	for i, a := range plan.Aggs {
		for j, q := range a.Quantities {
			m := rel.mechs[i][j]
			sens := q.Sensitivity.L1
			if m.Name() == "gaussian" {
				sens = q.Sensitivity.L2
			}
			half := m.ConfidenceHalfWidth(0.95)
			if releasedAsInteger(a, q.Kind) {
				half = intHalfWidth(plan, m, 0.95)
			}
			res.Rows = append(res.Rows, []Value{aggregateText(a), quantityName(q.Kind), m.Name(),
				sens, m.Scale(), m.Epsilon(), m.Delta(), half})
		}
	}
	for i, q := range rel.quantiles {
		a := plan.Aggs[i]
		res.Rows = append(res.Rows, []Value{aggregateText(a),
			fmt.Sprintf("rank error at 95%%: ±%.3g rows", q.RankError(a.P, 0.95)), "exponential (quantile)",
			float64(plan.Contribution.MaxRows), a.BinWidth, q.Epsilon() * float64(max(plan.Contribution.MaxGroups, 1)), 0.0, nil})
	}
	if sel := rel.selector; sel != nil {
		res.Rows = append(res.Rows, []Value{"(partition selection)",
			fmt.Sprintf("distinct persons per group ≥ %.4g", sel.Threshold()), "laplace threshold",
			float64(plan.Contribution.MaxGroups), sel.Scale(), sel.Epsilon(), sel.Delta(), nil})
	}
	res.Rows = append(res.Rows, []Value{"(total charge)", "", s.mechanismName(), nil, nil, rel.epsilon, rel.delta, nil})
	return res, nil
}

// prepareRelease is the planning half of a DP answer: analyse the query,
// check the per-query limits, split the budget into mechanisms.
func (s *Session) prepareRelease(ctx context.Context, sel *parser.Select, args []Value) (*rewrite.Plan, *release, error) {
	sel, err := s.inlinePublicJoin(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	plan, err := rewrite.Analyze(rewrite.Input{
		Select:   sel,
		Policy:   s.engine.policy,
		Schema:   s.engine,
		Database: s.engine.database,
		Dialect:  s.engine.backendDialect(),
		Params:   args,
	})
	if err != nil {
		return nil, nil, err
	}
	eps, delta, mech := s.budget()
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return nil, nil, err
	}
	if max := lim.MaxPerQuery.Epsilon; max > 0 && eps > max {
		return nil, nil, Errorf(CodeBadValue, "a query may spend at most ε=%g for role %s; SET dp_epsilon to a smaller value", max, s.role.Name)
	}
	if err := s.checkEpsilonFloor(eps); err != nil {
		return nil, nil, err
	}
	if max := lim.MaxPerQuery.Delta; max > 0 && delta > max {
		return nil, nil, Errorf(CodeBadValue, "a query may spend at most δ=%g for role %s; SET dp_delta to a smaller value", max, s.role.Name)
	}
	rel, err := newRelease(plan, eps, delta, mech)
	if err != nil {
		return nil, nil, err
	}
	if n := rel.publicGroups(); n > s.engine.maxGroups() {
		return nil, nil, Errorf(CodeRefused, "dpproxy refused the query: its public group keys make %d groups, more than the limit of %d", n, s.engine.maxGroups())
	}
	rel.args = args
	if err := checkPostProcessing(plan); err != nil {
		return nil, nil, err
	}
	return plan, rel, nil
}

func (s *Session) mechanismName() string {
	_, _, mech := s.budget()
	return mech
}

// aggregateText names an aggregate as the analyst wrote it.
func aggregateText(a *rewrite.Aggregate) string {
	name := map[rewrite.AggKind]string{
		rewrite.AggCount: "COUNT", rewrite.AggSum: "SUM", rewrite.AggAvg: "AVG",
		rewrite.AggVar: "VAR_POP", rewrite.AggStddev: "STDDEV_POP", rewrite.AggCountDistinct: "COUNT",
	}[a.Kind]
	if a.Kind == rewrite.AggQuantile {
		switch a.P {
		case 0:
			return "MIN(" + a.Key + ")"
		case 1:
			return "MAX(" + a.Key + ")"
		case 0.5:
			return "MEDIAN(" + a.Key + ")"
		}
		return fmt.Sprintf("PERCENTILE_CONT(%g) WITHIN GROUP (ORDER BY %s)", a.P, a.Key)
	}
	if a.Sample {
		name = strings.Replace(name, "_POP", "_SAMP", 1)
	}
	switch {
	case a.Arg == nil:
		return name + "(*)"
	case a.Kind == rewrite.AggCountDistinct:
		return name + "(DISTINCT " + a.Key + ")"
	}
	return name + "(" + a.Key + ")"
}

func quantityName(k rewrite.QuantityKind) string {
	switch k {
	case rewrite.QSum:
		return "sum"
	case rewrite.QCenteredSum:
		return "sum of (x - midpoint)"
	case rewrite.QCenteredSquares:
		return "sum of (x - midpoint)^2"
	case rewrite.QDistinct:
		return "distinct values"
	case rewrite.QUnits:
		return "distinct persons"
	}
	return "count"
}

// releasedAsInteger reports whether a quantity is released with AddNoiseInt
// (counts, sums of integers), whose noise interval differs from the
// continuous one.
func releasedAsInteger(a *rewrite.Aggregate, k rewrite.QuantityKind) bool {
	switch k {
	case rewrite.QCount, rewrite.QDistinct, rewrite.QUnits:
		return true
	case rewrite.QSum:
		return a.IntValued
	}
	return false
}
