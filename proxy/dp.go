package proxy

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/mechanism"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
)

// dpSelect answers an aggregate query over a private table: plan, charge,
// query the backend, add noise, post-process. The charge is written durably
// before the backend is even asked, and never refunded once it has been
// (withCharge), so no answer — nor any failure — leaves without its cost in
// the ledger.
func (s *Session) dpSelect(ctx context.Context, sqlText, fingerprint string, sel *parser.Select, args []Value) (*Result, error) {
	key := s.answerKey(sqlText, args)
	if res, ok := s.cachedResult(ctx, key); ok {
		return res, nil
	}
	res, err := s.dpAnswer(ctx, sqlText, fingerprint, sel, args)
	if err == nil {
		s.rememberResult(ctx, key, res)
	}
	return res, err
}

// dpAnswer computes a new answer and charges it.
func (s *Session) dpAnswer(ctx context.Context, sqlText, fingerprint string, sel *parser.Select, args []Value) (*Result, error) {
	plan, rel, err := s.prepareRelease(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	_, _, mech := s.budget()
	charge := ledger.Charge{
		User:        s.user.Name,
		Role:        s.role.Name,
		Statement:   sqlText,
		Fingerprint: fingerprint,
		Mechanism:   mech,
		Epsilon:     rel.epsilon,
		Delta:       rel.delta,
		Rho:         rel.rho,
		DeltaInRho:  rel.deltaInRho,
	}
	check := []string{plan.SQL}
	for _, a := range plan.Aggs {
		if a.Histogram != "" {
			check = append(check, a.Histogram)
		}
	}
	res, _, err := s.withCharge(ctx, charge, check, func(ctx context.Context, q querier) (*Result, error) {
		groups, err := s.engine.queryGroups(ctx, q, plan, rel.keep())
		if err != nil {
			return nil, err
		}
		hists, err := s.engine.queryHistograms(ctx, q, plan, groups)
		if err != nil {
			return nil, err
		}
		rel.histograms = hists
		rel.confidence = s.settings.confidence
		return rel.answer(plan, groups)
	})
	return res, err
}

// limits are the policy file's allowances for this session; the ledger
// merges the budgets DBAs set in SQL over them when it checks a charge.
func (s *Session) limits() ledger.Limits { return RoleLimits(s.role) }

// RoleLimits are a role's allowances as the policy file sets them; the
// ledger merges the budgets set in SQL over them.
func RoleLimits(role *policy.Role) ledger.Limits {
	lim := ledger.Limits{
		User:               ledger.Budget{Epsilon: role.Budget.Epsilon, Delta: role.Budget.Delta},
		MaxPerQuery:        ledger.Budget{Epsilon: role.MaxEpsilonPerQuery, Delta: role.MaxDeltaPerQuery},
		MinEpsilonPerQuery: role.MinEpsilonPerQuery,
	}
	if p := role.Pool; p != nil {
		lim.Pool = &ledger.Budget{Epsilon: p.Epsilon, Delta: p.Delta}
	}
	return lim
}

// effectiveLimits are the session's allowances with the budgets set in SQL
// merged in, for checks before a charge (per-query caps) and for display.
func (s *Session) effectiveLimits(ctx context.Context) (ledger.Limits, error) {
	return s.engine.ledger.Limits(ctx, s.role.Name, s.user.Name, s.limits())
}

// backendError wraps a failed backend query over public tables only (no
// charge, no private row): timeouts and cancellations keep their own codes.
// Charged statements never come here: see withCharge.
func (s *Session) backendError(err error) error {
	if ctxErr := s.classify(err); ctxErr.(*Error).Code == CodeTimeout || ctxErr.(*Error).Code == CodeCanceled {
		return ctxErr
	}
	s.engine.log.Warn("backend query failed", append(s.logAttrs(), "err", err)...)
	return &Error{Code: CodeBackend, Msg: "the backend query over public tables failed: " + err.Error(), Err: err}
}

// group is one row of the backend's answer to a plan.
type group struct {
	keys  []any
	quant []float64
	units int64
}

// queryGroups runs the plan's SQL and keeps the groups keep accepts (nil
// keeps all). Memory grows with the number of kept groups, never with the
// table, and is capped without an error: past maxBackendGroups kept groups,
// only those with the smallest keys stay (keptGroups). Since keep is
// partition selection or membership of the public domain, what is kept is a
// DP release or a public fact, and the cap is post-processing of it; an
// error here instead would be an oracle on the number of groups.
func (e *Engine) queryGroups(ctx context.Context, q querier, plan *rewrite.Plan, keep func(group) bool) ([]group, error) {
	rows, err := q.QueryContext(ctx, plan.SQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nKeys := len(plan.Keys)
	nCols := plan.UnitsColumn + 1
	raw := make([]any, nCols)
	ptrs := make([]any, nCols)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	kept := newKeptGroups(e.maxBackendGroups())
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("reading the backend's answer: %w", err)
		}
		g := group{keys: make([]any, nKeys), quant: make([]float64, nCols-nKeys-1)}
		for i := 0; i < nKeys; i++ {
			g.keys[i] = keyValue(raw[i], plan.Keys[i])
		}
		for i := range g.quant {
			g.quant[i] = toNumber(raw[nKeys+i])
		}
		g.units = int64(toNumber(raw[plan.UnitsColumn]))
		if keep == nil || keep(g) {
			kept.add(g)
		}
	}
	return kept.groups(), rows.Err()
}

// toNumber reads an aggregate the backend returned. NULL (a SUM over no
// rows) is 0: the released value must not reveal emptiness. A value that is
// not a number cannot come from the aggregates rewrite writes; were it to,
// it reads as 0 rather than failing, so that no value can turn an answer
// into an error.
func toNumber(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return x
	case []byte:
		return parseNumber(string(x))
	case string:
		return parseNumber(x)
	}
	return 0
}

func parseNumber(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// release holds the mechanisms of one query and what it costs.
type release struct {
	mechs     [][]mechanism.Mechanism     // per aggregate, per quantity
	quantiles map[int]*mechanism.Quantile // per quantile aggregate
	selector  *mechanism.PartitionSelector
	plan      *rewrite.Plan

	epsilon, delta, rho float64
	// confidence, when > 0, adds a confidence interval for each aggregate.
	confidence float64
	// histograms holds each quantile aggregate's bin counts per group key.
	histograms map[int]map[string][]int64
	// deltaInRho is the δ the Gaussian releases were calibrated at: ρ
	// describes their privacy loss completely (see ledger.Charge).
	deltaInRho float64
	// args are the statement's parameters, which HAVING and ORDER BY may use.
	args []Value
}

// checkPostProcessing refuses, before the charge, every select-list, HAVING
// and ORDER BY expression the proxy could not evaluate on the noisy values:
// a refusal found only while evaluating would come after the charge, and
// with lazy CASE/IF it would depend on the noisy values.
func checkPostProcessing(plan *rewrite.Plan) error {
	env := &groupEnv{plan: plan}
	check := func(e parser.Expr, where string) error {
		if err := eval.Check(e, env); err != nil {
			return Errorf(CodeUnsupported, "unsupported SQL in %s of a differentially private query: %v", where, err)
		}
		return nil
	}
	for _, it := range plan.Items {
		if err := check(it.Expr, "the select list"); err != nil {
			return err
		}
	}
	if plan.Having != nil {
		if err := check(plan.Having, "HAVING"); err != nil {
			return err
		}
	}
	for _, o := range plan.OrderBy {
		if lit, ok := o.Expr.(*parser.Literal); ok {
			if pos, ok := lit.Value.(int64); ok {
				if pos < 1 || int(pos) > len(plan.Items) {
					return Errorf(CodeUnknownColumn, "Unknown column '%d' in 'order clause'", pos)
				}
				continue
			}
		}
		if err := check(o.Expr, "ORDER BY"); err != nil {
			return err
		}
	}
	return nil
}

// checkEpsilonFloor refuses an ε below the role's min_epsilon_per_query: a
// probe at a vanishing ε would be all but free.
func (s *Session) checkEpsilonFloor(eps float64) error {
	if floor := s.role.MinEpsilonPerQuery; eps < floor {
		return Errorf(CodeBadValue, "epsilon must be at least %g (min_epsilon_per_query of role %s), got %g", floor, s.role.Name, eps)
	}
	return nil
}

// newRelease splits the query's (ε, δ) among its noisy releases. By basic
// composition (Dwork & Roth 2014, Theorem 3.16) the answer is (ε, δ)-DP
// whatever the split; the split is chosen to make the answer accurate
// (splitEpsilon). δ is split evenly among the parts that need one.
func newRelease(plan *rewrite.Plan, eps, delta float64, mech string) (*release, error) {
	nQuant := 0
	for _, a := range plan.Aggs {
		nQuant += len(a.Quantities)
	}
	if plan.PartitionSelection {
		if delta <= 0 {
			return nil, Errorf(CodeRefused, "dpproxy refused the query: grouping by a column whose values are not public needs partition selection, which needs dp_delta > 0 (SET dp_delta = 1e-6)")
		}
	}
	shares, selShare := splitEpsilon(plan)
	epsPart := eps * selShare // partition selection's share
	deltaParts := 0
	if plan.PartitionSelection {
		deltaParts++
	}
	if mech == "gaussian" {
		if delta <= 0 {
			return nil, Errorf(CodeBadValue, "the Gaussian mechanism needs dp_delta > 0")
		}
		deltaParts += nQuant
	}
	deltaPart := 0.0
	if deltaParts > 0 {
		deltaPart = delta / float64(deltaParts)
	}
	r := &release{plan: plan, epsilon: eps, quantiles: map[int]*mechanism.Quantile{}}
	for i, a := range plan.Aggs {
		if a.Kind == rewrite.AggQuantile {
			// The exponential mechanism over the histogram is pure ε-DP
			// (McSherry & Talwar 2007): ε²/2-zCDP (Bun & Steinke 2016).
			// The mechanism's bins are the backend's: Bins of BinWidth from Lower.
			// A unit moves the histograms of at most MaxGroups groups, so
			// each group's release gets 1/MaxGroups of the share (basic
			// composition, Dwork & Roth 2014, Theorem 3.16).
			qe := eps * shares[i][0]
			q, err := mechanism.NewQuantile(qe/float64(max(plan.Contribution.MaxGroups, 1)), a.Lower, a.Lower+float64(a.Bins)*a.BinWidth, a.Bins, plan.Contribution.MaxRows)
			if err != nil {
				return nil, Errorf(CodeBadValue, "%v", err)
			}
			r.quantiles[i] = q
			r.rho += qe * qe / 2
		}
		var ms []mechanism.Mechanism
		for j, q := range a.Quantities {
			var m mechanism.Mechanism
			var err error
			qe := eps * shares[i][j]
			if mech == "gaussian" {
				m, err = mechanism.NewGaussian(qe, deltaPart, q.Sensitivity.L2)
			} else {
				m, err = mechanism.NewLaplace(qe, q.Sensitivity.L1)
			}
			if err != nil {
				return nil, Errorf(CodeBadValue, "%v", err)
			}
			ms = append(ms, m)
			r.rho += m.Rho()
		}
		r.mechs = append(r.mechs, ms)
	}
	if mech == "gaussian" {
		r.deltaInRho = deltaPart * float64(nQuant)
	}
	if plan.PartitionSelection {
		sel, err := mechanism.NewPartitionSelector(epsPart, deltaPart, plan.Contribution.MaxGroups)
		if err != nil {
			return nil, Errorf(CodeBadValue, "%v", err)
		}
		r.selector = sel
		// Pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4); the
		// selection's δ is accounted for separately.
		r.rho += epsPart * epsPart / 2
	}
	if deltaParts > 0 {
		r.delta = delta
	}
	return r, nil
}

// publicGroups is the number of groups a query with only public keys
// releases (the product of the public domains); 0 with partition selection.
func (r *release) publicGroups() int {
	if r.plan.PartitionSelection {
		return 0
	}
	n := 1
	for _, k := range r.plan.Keys {
		n *= len(k.Public)
		if n > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return n
}

func (e *Engine) maxGroups() int {
	if n := e.policy.Limits.MaxGroups; n > 0 {
		return n
	}
	return 10000
}

// maxBackendGroups bounds the groups the proxy keeps in memory for one
// answer (after partition selection; see queryGroups).
func (e *Engine) maxBackendGroups() int { return 100 * e.maxGroups() }

// queryHistograms runs each quantile aggregate's histogram statement: bin
// counts per group key (groupKey of the keys), for the kept groups only.
func (e *Engine) queryHistograms(ctx context.Context, q querier, plan *rewrite.Plan, groups []group) (map[int]map[string][]int64, error) {
	out := map[int]map[string][]int64{}
	kept := make(map[string]bool, len(groups))
	for _, g := range groups {
		kept[groupKey(g.keys)] = true
	}
	for i, a := range plan.Aggs {
		if a.Kind != rewrite.AggQuantile {
			continue
		}
		byGroup, err := e.queryHistogram(ctx, q, plan, a, kept)
		if err != nil {
			return nil, err
		}
		out[i] = byGroup
	}
	return out, nil
}

func (e *Engine) queryHistogram(ctx context.Context, q querier, plan *rewrite.Plan, a *rewrite.Aggregate, kept map[string]bool) (map[string][]int64, error) {
	rows, err := q.QueryContext(ctx, a.Histogram)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nKeys := len(plan.Keys)
	raw := make([]any, nKeys+2)
	ptrs := make([]any, len(raw))
	for j := range raw {
		ptrs[j] = &raw[j]
	}
	byGroup := map[string][]int64{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		keys := make([]any, nKeys)
		for k := range keys {
			keys[k] = keyValue(raw[k], plan.Keys[k])
		}
		k := groupKey(keys)
		if plan.PartitionSelection && !kept[k] {
			continue
		}
		// Values at the upper bound fall just past the last bin.
		b := min(max(int(toNumber(raw[nKeys])), 0), a.Bins-1)
		if byGroup[k] == nil {
			byGroup[k] = make([]int64, a.Bins)
		}
		byGroup[k][b] += int64(toNumber(raw[nKeys+1]))
	}
	return byGroup, rows.Err()
}

// splitEpsilon returns each aggregate's quantities' shares of ε (for a
// quantile, its one release) and partition selection's share; all shares sum
// to 1.
//
// The rule: every output aggregate, and partition selection when the
// query needs it, gets an equal share — each is one number the analyst
// reads, and its error matters as much as any other's. Within an aggregate
// made of several noisy quantities, the share is divided to minimise the
// variance of the aggregate, Σᵢ kᵢ/εᵢ² subject to Σᵢ εᵢ = ε_agg, whose
// minimiser (Lagrange) is εᵢ ∝ kᵢ^(1/3), where kᵢ is quantity i's squared
// sensitivity times the squared derivative of the aggregate with respect to
// it, with the data-dependent factors replaced by public proxies:
//
//   - AVG = mid + S/N: ∂/∂S = 1/N, ∂/∂N = −(avg−mid)/N; with the proxy
//     |avg−mid| ≈ h/2 (h = (upper−lower)/2) and sensitivities m·h and m,
//     k = (h², h²/4), so S gets 1/(1+4^(−1/3)) ≈ 61% and N 39%.
//   - VAR = S₂/N − (S₁/N)²: ∂/∂S₂ = 1/N, ∂/∂S₁ = −2(S₁/N)/N, ∂/∂N ≈ −VAR/N;
//     with |S₁/N| ≈ h/2, VAR ≈ h²/3 and sensitivities m·h², m·h, m,
//     k = (h⁴, h⁴, h⁴/9): shares 1 : 1 : 9^(−1/3), i.e. 40.5%, 40.5%, 19%.
//
// The proxies are public (functions of the bounds only), so the split
// reveals nothing; only accuracy depends on how good they are.
func splitEpsilon(plan *rewrite.Plan) (shares [][]float64, selection float64) {
	parts := float64(len(plan.Aggs))
	if plan.PartitionSelection {
		parts++
	}
	within := func(k ...float64) []float64 {
		w := make([]float64, len(k))
		total := 0.0
		for i, ki := range k {
			w[i] = math.Cbrt(ki)
			total += w[i]
		}
		for i := range w {
			w[i] /= total * parts
		}
		return w
	}
	shares = make([][]float64, len(plan.Aggs))
	for i, a := range plan.Aggs {
		switch a.Kind {
		case rewrite.AggAvg:
			shares[i] = within(1, 0.25)
		case rewrite.AggVar, rewrite.AggStddev:
			shares[i] = within(1, 1, 1.0/9)
		default:
			shares[i] = within(1)
		}
	}
	if plan.PartitionSelection {
		selection = 1 / parts
	}
	return shares, selection
}
