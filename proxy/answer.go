package proxy

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/mechanism"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
)

// answer turns the backend's groups into the released result: choose the
// groups (every public one, or those passing partition selection), add noise
// to every quantity, then evaluate the select list, HAVING, ORDER BY and
// LIMIT on the noisy values only (post-processing, Dwork & Roth 2014,
// Proposition 2.1).
func (r *release) answer(plan *rewrite.Plan, groups []group) (*Result, error) {
	released := r.chooseGroups(plan, groups)
	type outRow struct {
		vals []any
		env  *groupEnv
	}
	rows := make([]outRow, 0, len(released))
	for _, g := range released {
		aggs, cis := r.noisyAggregates(plan, g)
		env := &groupEnv{plan: plan, keys: g.keys, aggs: aggs, args: r.args}
		vals := make([]any, len(plan.Items))
		for i, it := range plan.Items {
			v, err := eval.Eval(it.Expr, env)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		env.items = vals
		if r.confidence > 0 {
			vals = appendIntervals(plan, vals, cis)
		}
		if plan.Having != nil {
			v, err := eval.Eval(plan.Having, env)
			if err != nil {
				return nil, err
			}
			if ok, isNull := eval.Truthy(v); !ok || isNull {
				continue
			}
		}
		rows = append(rows, outRow{vals: vals, env: env})
	}
	if len(plan.OrderBy) > 0 {
		keys := make([][]any, len(rows))
		for i, row := range rows {
			keys[i] = make([]any, len(plan.OrderBy))
			for j, o := range plan.OrderBy {
				v, err := orderValue(o.Expr, row.vals, row.env)
				if err != nil {
					return nil, err
				}
				keys[i][j] = v
			}
		}
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			for j, o := range plan.OrderBy {
				c := eval.Compare(keys[idx[a]][j], keys[idx[b]][j])
				if c != 0 {
					return (c < 0) != o.Desc
				}
			}
			return false
		})
		sorted := make([]outRow, len(rows))
		for i, k := range idx {
			sorted[i] = rows[k]
		}
		rows = sorted
	}
	if plan.Offset > 0 {
		if plan.Offset >= int64(len(rows)) {
			rows = nil
		} else {
			rows = rows[plan.Offset:]
		}
	}
	if plan.Limit >= 0 && plan.Limit < int64(len(rows)) {
		rows = rows[:plan.Limit]
	}
	res := &Result{Rows: make([][]Value, len(rows))}
	for i, row := range rows {
		res.Rows[i] = row.vals
	}
	res.Columns = make([]Column, len(plan.Items))
	for i, it := range plan.Items {
		res.Columns[i] = Column{Name: it.Name, Type: itemType(plan, it.Expr, res.Rows, i)}
	}
	if r.confidence > 0 {
		for _, i := range intervalItems(plan) {
			name := plan.Items[i].Name
			res.Columns = append(res.Columns, Column{Name: name + "_ci_low", Type: TypeFloat}, Column{Name: name + "_ci_high", Type: TypeFloat})
		}
	}
	return res, nil
}

// chooseGroups returns the groups to release. With public keys only, that is
// every combination of public values, present in the data or not, so that
// which groups appear reveals nothing. Otherwise a group is released only if
// its noisy count of distinct units passes the selection threshold.
func (r *release) chooseGroups(plan *rewrite.Plan, groups []group) []group {
	if r.selector != nil {
		// queryGroups has already run the selection as the groups
		// streamed in (release.keep).
		out := append([]group(nil), groups...)
		sortGroups(out)
		return out
	}
	byKey := make(map[string]group, len(groups))
	for _, g := range groups {
		byKey[groupKey(g.keys)] = g
	}
	nQuant := 0
	for _, a := range plan.Aggs {
		nQuant += len(a.Quantities)
	}
	var out []group
	var enumerate func(prefix []any)
	enumerate = func(prefix []any) {
		if len(prefix) == len(plan.Keys) {
			keys := append([]any(nil), prefix...)
			if g, ok := byKey[groupKey(keys)]; ok {
				g.keys = keys
				out = append(out, g)
			} else {
				out = append(out, group{keys: keys, quant: make([]float64, nQuant)})
			}
			return
		}
		for _, v := range plan.Keys[len(prefix)].Public {
			enumerate(append(prefix, v))
		}
	}
	enumerate(nil)
	return out
}

func sortGroups(gs []group) {
	sort.SliceStable(gs, func(a, b int) bool {
		for i := range gs[a].keys {
			if c := eval.Compare(gs[a].keys[i], gs[b].keys[i]); c != 0 {
				return c < 0
			}
		}
		return false
	})
}

// groupKey is a canonical string of a key tuple, for matching the backend's
// groups to the public domain.
func groupKey(keys []any) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(canonical(k))
		b.WriteByte(0)
	}
	return b.String()
}

func canonical(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x01NULL"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

// keyValue types a key the backend returned by the policy's column type, so
// it matches the policy's public values and prints as the analyst expects.
func keyValue(raw any, k rewrite.Key) any {
	if b, ok := raw.([]byte); ok {
		raw = string(b)
	}
	if k.Column == nil || raw == nil {
		return raw
	}
	switch k.Column.Type {
	case policy.TypeInt:
		if f, ok := eval.ToInt(raw); ok {
			return f
		}
	case policy.TypeFloat:
		if f, ok := eval.ToFloat(raw); ok {
			return f
		}
	case policy.TypeString, policy.TypeDate:
		return eval.ToString(raw)
	}
	return raw
}

// noisyAggregates releases every aggregate of one group and, when the
// session asked for them (dp_confidence), a confidence interval for each.
// The intervals cover the noise only (not the bias of clamping and of
// contribution bounding) and are computed from the noisy values and the
// mechanisms' public scales: post-processing, free of charge.
func (r *release) noisyAggregates(plan *rewrite.Plan, g group) ([]any, []mechanism.Interval) {
	out := make([]any, len(plan.Aggs))
	ci := make([]mechanism.Interval, len(plan.Aggs))
	c := r.confidence
	for i, a := range plan.Aggs {
		ms := r.mechs[i]
		// value is the true value of the aggregate's j-th quantity.
		value := func(j int) float64 { return g.quant[a.Quantities[j].Column-len(plan.Keys)] }
		ci[i] = mechanism.Interval{Low: math.NaN(), High: math.NaN()}
		switch a.Kind {
		case rewrite.AggCount, rewrite.AggCountDistinct:
			n := noisyInt(plan, ms[0], value(0))
			// A count below zero is impossible, and no more distinct
			// values than the public domain holds; clamping is
			// post-processing.
			hi := int64(math.MaxInt64)
			if a.MaxDistinct > 0 {
				hi = a.MaxDistinct
			}
			out[i] = min(max(n, 0), hi)
			if c > 0 {
				h := intHalfWidth(plan, ms[0], c)
				high := math.Min(float64(n)+h, float64(hi))
				ci[i] = mechanism.Interval{Low: math.Min(math.Max(float64(n)-h, 0), high), High: high}
			}
		case rewrite.AggVar, rewrite.AggStddev:
			out[i], ci[i] = noisyVariance(plan, a, ms, value, c)
		case rewrite.AggQuantile:
			out[i] = r.noisyQuantile(i, a, g.keys)
		case rewrite.AggSum:
			v := value(0)
			// A sum of values that are all ≥ 0 (or all ≤ 0) cannot change
			// sign; clamping the noisy sum is post-processing.
			var f float64
			var h float64
			if a.IntValued {
				f = float64(noisyInt(plan, ms[0], v))
				if c > 0 {
					h = intHalfWidth(plan, ms[0], c)
				}
			} else {
				f = ms[0].AddNoise(v)
				if c > 0 {
					h = ms[0].ConfidenceHalfWidth(c)
				}
			}
			lo, hi := math.Inf(-1), math.Inf(1)
			if a.Lower >= 0 {
				lo = 0
			} else if a.Upper <= 0 {
				hi = 0
			}
			f = math.Min(math.Max(f, lo), hi)
			if a.IntValued {
				out[i] = int64(f)
			} else {
				out[i] = f
			}
			if c > 0 {
				ci[i] = mechanism.Interval{Low: math.Max(f-h, lo), High: math.Min(f+h, hi)}
			}
		case rewrite.AggAvg:
			// AVG = mid + noisy Σ(x−mid) / noisy count, clamped to the
			// bounds (the normalised mean; see sensitivity.CenteredSum).
			sum := ms[0].AddNoise(value(0))
			n := noisyInt(plan, ms[1], value(1))
			mid := (a.Lower + a.Upper) / 2
			avg := mid + sum/float64(max(n, 1))
			out[i] = math.Min(math.Max(avg, a.Lower), a.Upper)
			if c > 0 {
				// A sound interval by the union bound over the two noises
				// and interval arithmetic on the ratio (mechanism.RatioInterval).
				each := mechanism.SplitConfidence(c, 2)
				ci[i] = mechanism.RatioInterval(sum, ms[0].ConfidenceHalfWidth(each), float64(n), intHalfWidth(plan, ms[1], each)).
					Shift(mid).Clamp(a.Lower, a.Upper)
			}
		}
	}
	return out, ci
}

// noisyInt releases an integer-valued quantity. The backend's value is an
// integer except where a plan scales units' partials (Plan.Fractional); then
// it is noised as a real number and rounded after the noise
// (post-processing), since rounding first could move it by up to 1 beyond
// its sensitivity. Which path is taken depends on the plan only, never on
// the data.
func noisyInt(plan *rewrite.Plan, m mechanism.Mechanism, v float64) int64 {
	if plan.Fractional {
		return int64(math.Round(m.AddNoise(v)))
	}
	return m.AddNoiseInt(int64(math.Round(v)))
}

// intHalfWidth is the half-width of noisyInt's interval.
func intHalfWidth(plan *rewrite.Plan, m mechanism.Mechanism, c float64) float64 {
	if plan.Fractional {
		return m.ConfidenceHalfWidth(c) + 0.5
	}
	return mechanism.IntegerHalfWidth(m, c)
}

// intervalItems are the select-list items that are an aggregate with a
// confidence interval: they get <name>_ci_low and <name>_ci_high columns.
func intervalItems(plan *rewrite.Plan) []int {
	var out []int
	for i, it := range plan.Items {
		if f, ok := it.Expr.(*parser.Func); ok {
			if j, ok := plan.AggregateOf(f); ok && plan.Aggs[j].Kind != rewrite.AggQuantile {
				out = append(out, i)
			}
		}
	}
	return out
}

// appendIntervals adds the interval columns of one row.
func appendIntervals(plan *rewrite.Plan, vals []any, cis []mechanism.Interval) []any {
	for _, i := range intervalItems(plan) {
		j, _ := plan.AggregateOf(plan.Items[i].Expr.(*parser.Func))
		ci := cis[j]
		if math.IsNaN(ci.Low) || math.IsNaN(ci.High) {
			vals = append(vals, nil, nil)
			continue
		}
		vals = append(vals, ci.Low, ci.High)
	}
	return vals
}

// noisyQuantile releases a quantile of one group from its histogram (all
// zeros when the group has no rows: which bins are empty is exactly what the
// mechanism protects). Over an integer domain with one bin per value the
// released point is rounded down to its bin's integer (post-processing).
func (r *release) noisyQuantile(i int, a *rewrite.Aggregate, keys []any) any {
	counts := r.histograms[i][groupKey(keys)]
	if counts == nil {
		counts = make([]int64, a.Bins)
	}
	v, err := r.quantiles[i].Release(counts, a.P)
	if err != nil {
		return nil
	}
	if a.BinWidth == 1 {
		return int64(math.Floor(v))
	}
	return v
}

// noisyVariance releases VAR or STDDEV from three noisy moments of the
// centred values d = clamp(x) − mid: Σd², Σd and n. The variance is
// Σd²/n − (Σd/n)² (shift-invariant, so centring changes nothing but the
// sensitivity), times n/(n−1) for the sample form, clamped to its valid
// range [0, ((upper−lower)/2)²] — post-processing of the noisy moments
// (the approach of Google's dpagg.Variance and SmartNoise).
func noisyVariance(plan *rewrite.Plan, a *rewrite.Aggregate, ms []mechanism.Mechanism, value func(int) float64, c float64) (float64, mechanism.Interval) {
	s2 := ms[0].AddNoise(value(0))
	s1 := ms[1].AddNoise(value(1))
	nNoisy := noisyInt(plan, ms[2], value(2))
	n := float64(max(nNoisy, 1))
	mean := s1 / n
	v := s2/n - mean*mean
	if a.Sample && n > 1 {
		v *= n / (n - 1)
	}
	half := (a.Upper - a.Lower) / 2
	v = math.Min(math.Max(v, 0), half*half)
	ci := mechanism.Interval{Low: math.NaN(), High: math.NaN()}
	if c > 0 {
		// Three noises, union bound; interval arithmetic on the moments
		// (mechanism.VarianceInterval). The sample form's n/(n−1) factor is
		// at most 2 and is applied to the upper end only, for soundness.
		each := mechanism.SplitConfidence(c, 3)
		ci = mechanism.VarianceInterval(float64(nNoisy), intHalfWidth(plan, ms[2], each),
			s1, ms[1].ConfidenceHalfWidth(each), s2, ms[0].ConfidenceHalfWidth(each), half*half)
		if a.Sample {
			ci.High = math.Min(ci.High*2, half*half)
		}
	}
	if a.Kind == rewrite.AggStddev {
		return math.Sqrt(v), ci.Sqrt()
	}
	return v, ci
}

// groupEnv evaluates the select list, HAVING and ORDER BY of one group: a
// column is a key, an aggregate is its noisy value, a bare name may be a
// select-list alias.
type groupEnv struct {
	plan  *rewrite.Plan
	keys  []any
	aggs  []any
	items []any // the evaluated select list, for aliases in HAVING / ORDER BY
	args  []Value
}

// ResolvesCall implements eval.Resolver: the plan's aggregates.
func (g *groupEnv) ResolvesCall(f *parser.Func) bool {
	_, ok := g.plan.AggregateOf(f)
	return ok
}

// ResolvesColumn implements eval.Resolver: group keys, and select-list
// aliases for unqualified names.
func (g *groupEnv) ResolvesColumn(ref *parser.ColumnRef) bool {
	name := strings.ToLower(ref.Name)
	for _, k := range g.plan.Keys {
		if k.Name == name {
			return true
		}
	}
	if ref.Table == "" {
		for _, it := range g.plan.Items {
			if strings.EqualFold(it.Name, ref.Name) {
				return true
			}
		}
	}
	return false
}

func (g *groupEnv) Column(ref *parser.ColumnRef) (any, error) {
	name := strings.ToLower(ref.Name)
	for i, k := range g.plan.Keys {
		if k.Name == name {
			return g.keys[i], nil
		}
	}
	if ref.Table == "" && g.items != nil {
		for i, it := range g.plan.Items {
			if strings.EqualFold(it.Name, ref.Name) {
				return g.items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("unknown column '%s'", ref.Name)
}

func (g *groupEnv) Variable(v *parser.Variable) (any, error) {
	return nil, fmt.Errorf("variables are not allowed here")
}

func (g *groupEnv) Param(i int) (any, error) {
	if i < 0 || i >= len(g.args) {
		return nil, fmt.Errorf("parameter %d has no value", i+1)
	}
	return g.args[i], nil
}

func (g *groupEnv) Call(f *parser.Func) (any, bool, error) {
	if i, ok := g.plan.AggregateOf(f); ok {
		return g.aggs[i], true, nil
	}
	return nil, false, nil
}

// orderValue evaluates one ORDER BY key: a position, an alias, or an
// expression.
func orderValue(e parser.Expr, vals []any, env *groupEnv) (any, error) {
	if lit, ok := e.(*parser.Literal); ok {
		if pos, ok := lit.Value.(int64); ok {
			if pos < 1 || int(pos) > len(vals) {
				return nil, Errorf(CodeUnknownColumn, "Unknown column '%d' in 'order clause'", pos)
			}
			return vals[pos-1], nil
		}
	}
	if ref, ok := e.(*parser.ColumnRef); ok && ref.Table == "" {
		for i, it := range env.plan.Items {
			if strings.EqualFold(it.Name, ref.Name) {
				return vals[i], nil
			}
		}
	}
	return eval.Eval(e, env)
}

// itemType is a result column's type: from the released values when there
// are any, else from what the expression is.
func itemType(plan *rewrite.Plan, e parser.Expr, rows [][]Value, col int) ColumnType {
	if t, seen := valuesType(rows, col); seen {
		return t
	}
	switch x := e.(type) {
	case *parser.Func:
		if i, ok := plan.AggregateOf(x); ok && plan.Aggs[i].IntValued {
			return TypeInt
		}
		return TypeFloat
	case *parser.ColumnRef:
		for _, k := range plan.Keys {
			if k.Name == strings.ToLower(x.Name) && k.Column != nil {
				switch k.Column.Type {
				case policy.TypeInt, policy.TypeBool:
					return TypeInt
				case policy.TypeFloat:
					return TypeFloat
				}
			}
		}
		return TypeString
	}
	return TypeFloat
}

// valuesType is the type of a column from its non-NULL values: their common
// type, a float when ints and floats mix, else a string. seen is false when
// every value is NULL.
func valuesType(rows [][]Value, col int) (t ColumnType, seen bool) {
	for _, row := range rows {
		if row[col] == nil {
			continue
		}
		vt := valueType(row[col])
		switch {
		case !seen:
			t, seen = vt, true
		case t == vt:
		case (t == TypeInt && vt == TypeFloat) || (t == TypeFloat && vt == TypeInt):
			t = TypeFloat
		default:
			t = TypeString
		}
	}
	return t, seen
}

func valueType(v any) ColumnType {
	switch v.(type) {
	case int64, bool:
		return TypeInt
	case float64:
		return TypeFloat
	case nil:
		return TypeNull
	}
	return TypeString
}
