package proxy

import (
	"context"
	"math"

	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/mechanism"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/rewrite"
	"github.com/dpproxy/dpproxy/sensitivity"
	"github.com/dpproxy/dpproxy/train"
)

var evaluateColumns = []Column{
	{Name: "model", Type: TypeString},
	{Name: "accuracy", Type: TypeFloat},
	{Name: "precision", Type: TypeFloat},
	{Name: "recall", Type: TypeFloat},
	{Name: "true_positives", Type: TypeInt},
	{Name: "false_positives", Type: TypeInt},
	{Name: "false_negatives", Type: TypeInt},
	{Name: "true_negatives", Type: TypeInt},
	{Name: "epsilon", Type: TypeFloat},
}

// evaluateModel answers EVALUATE MODEL: the model's confusion matrix on
// private rows, computed in the backend and released as four noisy counts.
// Each row (one per privacy unit, as in training) lies in exactly one cell,
// so the histogram has L1 sensitivity 1 and Laplace noise of scale 1/ε on
// every cell makes it ε-DP (Dwork & Roth 2014, Prop. 3.3 — the cells are
// disjoint). Accuracy, precision and recall are post-processing of the
// noisy counts.
func (s *Session) evaluateModel(ctx context.Context, sqlText string, st *parser.EvaluateModel) (*Result, error) {
	s.kind = metrics.KindTrain
	m, err := s.readableModel(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	if m.Model.RFF != nil {
		return nil, Errorf(CodeUnsupported, "EVALUATE MODEL of a kernel model (its score is not linear in the columns)")
	}
	ts, err := rewrite.Training(rewrite.Input{
		Select: st.Query, Policy: s.engine.policy, Schema: s.engine,
		Database: s.engine.database, Dialect: s.engine.backendDialect(),
	}, st.Label)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, f := range ts.Features {
		have[f] = true
	}
	var nums []rewrite.NumericTerm
	var cats []rewrite.CategoryTerm
	weight := map[string]float64{}
	for i, f := range m.Model.Features {
		weight[f] = m.Model.Weights[i]
	}
	for _, in := range m.Model.Inputs {
		if !have[in.Name] {
			return nil, Errorf(CodeBadValue, "the query must select the model's feature %s", in.Name)
		}
		if in.Numeric {
			nums = append(nums, rewrite.NumericTerm{Column: in.Name, Weight: weight[in.Name], Lower: in.Lower, Upper: in.Upper})
			continue
		}
		for _, c := range in.Categories {
			cats = append(cats, rewrite.CategoryTerm{Column: in.Name, Value: c, Weight: weight[in.Name+"="+c]})
		}
	}
	// Every option is checked before the charge: ε finite, within the
	// role's floor and cap; nothing else is accepted.
	eps, _, _ := s.budget()
	for k, v := range st.Options {
		if k != "epsilon" {
			return nil, Errorf(CodeBadValue, "unknown option %s (epsilon)", k)
		}
		f, ok := v.(float64)
		if !ok {
			return nil, Errorf(CodeBadValue, "epsilon must be a positive finite number, got %v", v)
		}
		eps = f
	}
	if err := s.checkEpsilon(ctx, eps); err != nil {
		return nil, err
	}
	lap, err := mechanism.NewLaplace(eps, sensitivity.Count(sensitivity.Contribution{MaxRows: 1, MaxGroups: 1}).L1)
	if err != nil {
		return nil, Errorf(CodeBadValue, "%v", err)
	}
	q := rewrite.EvaluationSQL(ts, s.engine.backendDialect(), weight[train.InterceptName], nums, cats)
	var cells [2][2]int64
	_, _, err = s.withCharge(ctx, ledger.Charge{
		User: s.user.Name, Role: s.role.Name, Statement: sqlText, Mechanism: "laplace",
		// Pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4).
		Epsilon: eps, Rho: eps * eps / 2,
	}, []string{q}, func(ctx context.Context, db querier) (*Result, error) {
		var err error
		cells, err = s.engine.confusion(ctx, db, q)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	// Every cell is released, also an empty one: which are empty is data.
	var noisy [2][2]int64
	for p := 0; p < 2; p++ {
		for y := 0; y < 2; y++ {
			noisy[p][y] = max(lap.AddNoiseInt(cells[p][y]), 0)
		}
	}
	tp, fp, fn, tn := noisy[1][1], noisy[1][0], noisy[0][1], noisy[0][0]
	ratio := func(a, b int64) any {
		if b <= 0 {
			return nil
		}
		return math.Min(math.Max(float64(a)/float64(b), 0), 1)
	}
	return &Result{Columns: evaluateColumns, Rows: [][]Value{{
		m.Name, ratio(tp+tn, tp+tn+fp+fn), ratio(tp, tp+fp), ratio(tp, tp+fn), tp, fp, fn, tn, eps,
	}}}, nil
}

// confusion reads the (predicted, actual) counts. It is total on what the
// backend returns: toNumber maps anything that is not a finite number to 0,
// a cell index is its value's low bit, and a count is clamped to
// [0, 2⁵³] before it is added, so no value can make it fail or overflow
// after the charge.
func (e *Engine) confusion(ctx context.Context, db querier, q string) ([2][2]int64, error) {
	var cells [2][2]int64
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return cells, err
	}
	defer rows.Close()
	for rows.Next() {
		var p, y, n any
		if err := rows.Scan(&p, &y, &n); err != nil {
			return cells, err
		}
		pf, yf, nf := toNumber(p), toNumber(y), toNumber(n)
		cells[int64(pf)&1][int64(yf)&1] += int64(min(max(nf, 0), 1<<53))
	}
	return cells, rows.Err()
}
