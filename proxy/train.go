package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/eval"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/rewrite"
	"github.com/dpproxy/dpproxy/train"
)

// modelsNamespace is where trained models live in the ledger's store, so
// they survive restarts and are shared by a fleet on etcd.
const modelsNamespace = "models"

// storedModel is a released model with who trained it, when, and at what
// cost; or, with Reserved set and no Model, the reservation of its name by
// a TRAIN in progress.
type storedModel struct {
	Name      string       `json:"name"`
	Reserved  bool         `json:"reserved,omitempty"`
	Model     *train.Model `json:"model"`
	Owner     string       `json:"owner"`
	Role      string       `json:"role"`
	TrainedAt time.Time    `json:"trained_at"`
	Statement string       `json:"statement"`
	ChargeID  string       `json:"charge_id"`
}

// defaultMaxTrainingBytes caps the memory of one training set; WITH
// (max_bytes = ...) may lower it, never raise it.
const defaultMaxTrainingBytes = train.DefaultMaxBytes

// maxComponents caps the random Fourier features of a kernel model: 4,096
// features of float32 are 16 KiB a row.
const maxComponents = 4096

// trainModel answers TRAIN PRIVATE LOGREG. Everything that depends only on
// the statement and the policy is decided first, and a refusal there costs
// nothing: the plan of the rows, the features' encoding, every option, that
// one row fits in max_bytes, that the role can spend the (ε, δ). Then the
// model's name is reserved (a create-only write: of two TRAINs of one name
// at once exactly one gets here), and only then is ε charged (withCharge).
// After the charge, on the pinned connection: the label histogram is
// released from one backend aggregate, the rows are streamed as a Poisson
// sample sized to the memory cap (train.PlanSample: never an error on
// data), the model is fitted and replaces the reservation. Any failure after
// the charge deletes the reservation (no half model) and the charge stands.
func (s *Session) trainModel(ctx context.Context, sqlText string, st *parser.TrainModel) (*Result, error) {
	s.kind = metrics.KindTrain
	ts, err := rewrite.Training(rewrite.Input{
		Select: st.Query, Policy: s.engine.policy, Schema: s.engine,
		Database: s.engine.database, Dialect: s.engine.backendDialect(),
	}, st.Label)
	if err != nil {
		return nil, err
	}
	features := make([]train.Feature, len(ts.Features))
	for i, name := range ts.Features {
		f, err := featureOf(ts.Table, name)
		if err != nil {
			return nil, err
		}
		features[i] = f
	}
	opts, maxBytes, err := s.trainOptions(ctx, st.Options)
	if err != nil {
		return nil, err
	}
	enc, err := train.NewEncoder(features)
	if err != nil {
		return nil, Errorf(CodeRefused, "dpproxy refused to train: %v", err)
	}
	if _, err := train.RowCap(enc, opts.Kernel, maxBytes); err != nil {
		rb, _ := train.RowBytes(enc, opts.Kernel)
		return nil, Errorf(CodeBadValue, "max_bytes must be at least %d, the bytes of one row of these features (%v)", rb, err)
	}
	// The memory cap's drop event costs δ = train.DropDelta (see
	// train/sample.go): a role without any δ cannot train.
	delta := train.DropDelta
	if err := s.checkTrainDelta(ctx, delta); err != nil {
		return nil, err
	}
	if err := s.reserveModel(ctx, st.Name); err != nil {
		return nil, err
	}
	stored := false
	defer func() {
		if !stored {
			s.releaseReservation(ctx, st.Name)
		}
	}()
	var model *train.Model
	_, receipt, err := s.withCharge(ctx, ledger.Charge{
		User: s.user.Name, Role: s.role.Name, Statement: sqlText,
		Mechanism: "logreg-" + opts.Method, Epsilon: opts.Epsilon, Delta: delta,
		// (ε, δ)-DP: ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4) off an
		// event of probability below δ, which stays a δ (DeltaInRho 0).
		Rho: opts.Epsilon * opts.Epsilon / 2,
	}, []string{labelCountSQL(ts), ts.SQL}, func(ctx context.Context, db querier) (*Result, error) {
		// The noise is drawn inside: a failure there is an outcome too.
		var err error
		model, err = s.engine.fitSampled(ctx, db, ts, enc, opts, maxBytes)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	m := &storedModel{Name: st.Name, Model: model, Owner: s.user.Name, Role: s.role.Name,
		TrainedAt: receipt.Time, Statement: sqlText, ChargeID: receipt.ID}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, s.afterCharge(ctx, receipt, ledger.Charge{Epsilon: opts.Epsilon, Delta: delta}, err)
	}
	if err := s.engine.ledger.Put(ctx, modelsNamespace, st.Name, b); err != nil {
		return nil, s.afterCharge(ctx, receipt, ledger.Charge{Epsilon: opts.Epsilon, Delta: delta}, err)
	}
	stored = true
	return modelResult(m), nil
}

// reserveModel claims a model name for the session's user before anything
// is charged, with a create-only write to the ledger's store (atomic on
// Badger and across a fleet on etcd). Names are global: the existence of a
// name is not private data about the people in the tables — it says that
// some analyst chose that name, a fact about analysts, which no DP
// guarantee covers — and a global namespace is what makes "exactly one of
// two concurrent TRAINs of one name" decidable before the charge.
func (s *Session) reserveModel(ctx context.Context, name string) error {
	b, err := json.Marshal(&storedModel{Name: name, Reserved: true, Owner: s.user.Name, Role: s.role.Name, TrainedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	ok, err := s.engine.ledger.Create(ctx, modelsNamespace, name, b)
	if err != nil {
		return err
	}
	if !ok {
		return Errorf(CodeBadValue, "model %s exists (or is being trained); DROP MODEL %s first or choose another name", name, name)
	}
	return nil
}

// releaseReservation deletes the reservation of a TRAIN that did not store
// its model, even when the client's context is gone.
func (s *Session) releaseReservation(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.engine.ledger.Delete(ctx, modelsNamespace, name); err != nil {
		s.engine.log.Warn("could not release a model name's reservation", append(s.logAttrs(), "model", name, "err", err)...)
	}
}

// checkTrainDelta refuses, before the charge, a TRAIN whose δ the role's
// limits can never admit, with a message that says why (the ledger would
// refuse it too, but only as an exhausted budget).
func (s *Session) checkTrainDelta(ctx context.Context, delta float64) error {
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return err
	}
	if lim.User.Delta < delta || (lim.Pool != nil && lim.Pool.Delta < delta) {
		return Errorf(CodeRefused, "dpproxy refused to train: a TRAIN spends δ = %g for its memory cap (the chance that sampling to the cap drops a row), and role %s has no δ budget", delta, s.role.Name)
	}
	if q := lim.MaxPerQuery.Delta; q > 0 && q < delta {
		return Errorf(CodeRefused, "dpproxy refused to train: a TRAIN spends δ = %g for its memory cap, more than role %s's max_delta_per_query = %g", delta, s.role.Name, q)
	}
	return nil
}

// checkEpsilon refuses, before the charge, an ε that is not a finite number
// between the role's floor (min_epsilon_per_query) and its most per query.
func (s *Session) checkEpsilon(ctx context.Context, eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || !(eps > 0) {
		return Errorf(CodeBadValue, "epsilon must be a positive finite number, got %v", eps)
	}
	if err := s.checkEpsilonFloor(eps); err != nil {
		return err
	}
	lim, err := s.effectiveLimits(ctx)
	if err != nil {
		return err
	}
	if max := lim.MaxPerQuery.Epsilon; max > 0 && eps > max {
		return Errorf(CodeBadValue, "epsilon must be at most %g: a query may spend at most ε=%g for role %s", max, max, s.role.Name)
	}
	return nil
}

// featureOf describes a feature column from PUBLIC information only: its
// policy bounds (numeric) or public values (categorical).
func featureOf(t *policy.Table, name string) (train.Feature, error) {
	col, _ := t.Column(name)
	switch {
	case col != nil && len(col.PublicValues) > 0 && !(col.Bounded() && col.Type != policy.TypeString):
		cats := make([]string, len(col.PublicValues))
		for i, v := range col.PublicValues {
			cats[i] = eval.ToString(v)
		}
		return train.Feature{Name: name, Categories: cats}, nil
	case col != nil && col.Type == policy.TypeDate:
		// Date bounds are days, the backend's values dates: a date is
		// not a number a model can weigh.
		return train.Feature{}, Errorf(CodeUnsupported, "unsupported SQL: date column %s of %s as a feature (list its public values to one-hot encode it)", name, t.Name)
	case col.Bounded():
		return train.Feature{Name: name, Numeric: true, Lower: *col.Lower, Upper: *col.Upper}, nil
	}
	return train.Feature{}, Errorf(CodeRefused,
		"dpproxy refused to train: column %s of %s has neither public bounds nor public values, so it cannot be scaled or one-hot encoded without looking at the data", name, t.Name)
}

// trainOptions reads WITH (...): epsilon (default: the session's), lambda
// (a positive number or 'auto'; default: set from the row count and ε, see
// package train), method ('objective' | 'output'), kernel = 'rbf' | 'linear'
// with components (an integer, 1 to maxComponents) and gamma (finite > 0),
// max_bytes (an integer up to defaultMaxTrainingBytes; that one row fits is
// checked by the caller). Every value is checked here, before the charge.
func (s *Session) trainOptions(ctx context.Context, o map[string]any) (train.Options, int64, error) {
	eps, _, _ := s.budget()
	opts := train.Options{Epsilon: eps, Method: train.MethodObjective}
	maxBytes := int64(defaultMaxTrainingBytes)
	num := func(k string, v any) (float64, error) {
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, Errorf(CodeBadValue, "%s must be a finite number, got %v", k, v)
		}
		return f, nil
	}
	integer := func(k string, v any, lo, hi float64) (float64, error) {
		f, err := num(k, v)
		if err == nil && (f != math.Trunc(f) || f < lo || f > hi) {
			err = Errorf(CodeBadValue, "%s must be an integer from %.0f to %.0f, got %v", k, lo, hi, v)
		}
		return f, err
	}
	var rff *train.RFFOptions
	rbf := func() *train.RFFOptions {
		if rff == nil {
			rff = &train.RFFOptions{Components: 200, Gamma: 0.1}
		}
		return rff
	}
	linear := false
	for k, v := range o {
		var err error
		switch k {
		case "epsilon":
			opts.Epsilon, err = num(k, v)
		case "lambda":
			if str, ok := v.(string); ok && strings.EqualFold(str, "auto") {
				opts.AutoLambda = true
			} else if opts.Lambda, err = num(k, v); err == nil && !(opts.Lambda > 0) {
				err = Errorf(CodeBadValue, "lambda must be positive or 'auto', got %v", v)
			} else if err != nil {
				err = Errorf(CodeBadValue, "lambda must be a positive finite number or 'auto', got %v", v)
			}
		case "method":
			m, _ := v.(string)
			if m != train.MethodObjective && m != train.MethodOutput {
				err = Errorf(CodeBadValue, "method must be 'objective' or 'output', got %v", v)
			}
			opts.Method = m
		case "kernel":
			switch str, _ := v.(string); str {
			case "rbf":
				rbf()
			case "linear":
				linear = true
			default:
				err = Errorf(CodeBadValue, "kernel must be 'rbf' or 'linear', got %v", v)
			}
		case "components":
			var f float64
			if f, err = integer(k, v, 1, maxComponents); err == nil {
				rbf().Components = int(f)
			}
		case "gamma":
			var f float64
			if f, err = num(k, v); err == nil && !(f > 0) {
				err = Errorf(CodeBadValue, "gamma must be a positive finite number, got %v", v)
			}
			rbf().Gamma = f
		case "max_bytes":
			var f float64
			if f, err = integer(k, v, 1, defaultMaxTrainingBytes); err != nil {
				err = Errorf(CodeBadValue, "max_bytes must be a positive integer number of bytes, at most %d, got %v", int64(defaultMaxTrainingBytes), v)
			}
			maxBytes = int64(f)
		default:
			err = Errorf(CodeBadValue, "unknown option %s (epsilon, lambda, method, kernel, components, gamma, max_bytes)", k)
		}
		if err != nil {
			return opts, 0, err
		}
	}
	if linear && rff != nil {
		return opts, 0, Errorf(CodeBadValue, "components and gamma apply to kernel = 'rbf', not to kernel = 'linear'")
	}
	opts.Kernel = rff
	if err := s.checkEpsilon(ctx, opts.Epsilon); err != nil {
		return opts, 0, err
	}
	return opts, maxBytes, nil
}

// labelCountSQL counts the training rows and their positive labels in the
// backend: one aggregate over exactly the rows of the training query (one
// per privacy unit, the same WHERE and LABEL), so the two counts are a
// histogram of sensitivity 1 under add/remove of a unit.
func labelCountSQL(ts *rewrite.TrainingSet) string {
	return "SELECT COUNT(*), COALESCE(SUM(dp_label), 0) FROM (" + ts.SQL + ") dp_labels"
}

// fitSampled is a TRAIN after its charge: release the label histogram,
// plan the sample for maxBytes, stream the rows into it, fit. No step can
// fail because of a value in a row: the counts are read with toNumber, the
// encoding is total, and the memory cap samples instead of failing (see
// train/sample.go for the proof that this spends ε and δ = train.DropDelta).
func (e *Engine) fitSampled(ctx context.Context, db querier, ts *rewrite.TrainingSet, enc *train.Encoder, opts train.Options, maxBytes int64) (*train.Model, error) {
	total, pos, err := e.labelCounts(ctx, db, ts)
	if err != nil {
		return nil, err
	}
	labels, err := train.ReleaseLabels(pos, max(total-pos, 0), enc, opts)
	if err != nil {
		return nil, err
	}
	plan, err := train.PlanSample(enc, opts, maxBytes, labels)
	if err != nil {
		return nil, err
	}
	data, err := e.trainingData(ctx, db, ts, train.NewSampledData(enc, plan))
	if err != nil {
		return nil, err
	}
	opts.Labels, opts.Sample = labels, plan
	return train.Fit(ctx, data, opts)
}

// labelCounts reads the exact row count and positive count of a training
// set (never released as such: ReleaseLabels adds the noise).
func (e *Engine) labelCounts(ctx context.Context, db querier, ts *rewrite.TrainingSet) (total, pos int64, err error) {
	rows, err := db.QueryContext(ctx, labelCountSQL(ts))
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var n, p any
	for rows.Next() {
		if err := rows.Scan(&n, &p); err != nil {
			return 0, 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	total, pos = int64(toNumber(n)), int64(toNumber(p))
	return max(total, 0), min(max(pos, 0), max(total, 0)), nil
}

// trainingData streams the training rows from the backend into data, which
// samples them to its plan; memory is bounded by the plan's cap.
func (e *Engine) trainingData(ctx context.Context, db querier, ts *rewrite.TrainingSet, data *train.Data) (*train.Data, error) {
	rows, err := db.QueryContext(ctx, ts.SQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := len(ts.Features)
	raw := make([]any, n+1)
	ptrs := make([]any, n+1)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	values := make([]any, n)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			v := raw[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			values[i] = v
		}
		label := toNumber(raw[n])
		if err := data.Add(values, label == 1); err != nil {
			return nil, err
		}
	}
	return data, rows.Err()
}

// modelColumns are the columns of a model's result: one row per feature.
var modelColumns = []Column{
	{Name: "feature", Type: TypeString},
	{Name: "weight", Type: TypeFloat},
	{Name: "model", Type: TypeString},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "delta", Type: TypeFloat},
	{Name: "lambda", Type: TypeFloat},
	{Name: "method", Type: TypeString},
	{Name: "rows_used", Type: TypeInt},
	{Name: "trained_at", Type: TypeString},
	{Name: "trained_by", Type: TypeString},
	// sample_rate is q, the probability with which each training row was
	// kept to fit the memory cap (1: every row); rows_used is q·N̂.
	{Name: "sample_rate", Type: TypeFloat},
}

// modelResult lists a model's weights on the original scale of each
// feature, with its metadata on every row.
func modelResult(m *storedModel) *Result {
	res := &Result{Columns: modelColumns}
	at := m.TrainedAt.UTC().Format("2006-01-02 15:04:05")
	rate := 1.0
	if m.Model.Sample != nil {
		rate = m.Model.Sample.Rate
	}
	for i, f := range m.Model.Features {
		res.Rows = append(res.Rows, []Value{f, m.Model.Weights[i], m.Name, m.Model.Epsilon, m.Model.Delta,
			m.Model.Lambda, m.Model.Method, m.Model.Rows, at, m.Owner, rate})
	}
	return res
}

// loadModel reads a model or a reservation by name.
func (s *Session) loadModel(ctx context.Context, name string) (*storedModel, error) {
	b, ok, err := s.engine.ledger.Get(ctx, modelsNamespace, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Errorf(CodeBadValue, "no model named %s", name)
	}
	var m storedModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading model %s: %w", name, err)
	}
	return &m, nil
}

// canRead says who may read a model: its owner and admins.
//
// A model is a DP release to the analyst who paid for it, like an answer:
// answers are per user (each user's budget bounds what that user learns), so
// a model readable by everyone would let every analyst learn from every
// other analyst's budget, and the privacy loss to the people in the tables
// would be bounded by the sum of all budgets, not by each user's. Owner and
// admins only keeps the per-user accounting true. (The release is DP, so
// sharing it would not break DP; it would break the per-user budget.)
func (s *Session) canRead(m *storedModel) bool {
	return m.Owner == s.user.Name || s.role.Admin
}

// readableModel loads a trained model the session may read.
func (s *Session) readableModel(ctx context.Context, name string) (*storedModel, error) {
	m, err := s.loadModel(ctx, name)
	if err != nil {
		return nil, err
	}
	if !s.canRead(m) {
		return nil, Errorf(CodePermission, "model %s belongs to another user; only its owner or an admin may read it", name)
	}
	if m.Reserved || m.Model == nil {
		return nil, Errorf(CodeBadValue, "model %s is being trained (or its TRAIN was interrupted; DROP MODEL %s releases the name)", name, name)
	}
	return m, nil
}

// showModel lists one model's weights, for its owner or an admin.
func (s *Session) showModel(ctx context.Context, st *parser.ShowModel) (*Result, error) {
	m, err := s.readableModel(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	return modelResult(m), nil
}

var modelsColumns = []Column{
	{Name: "model", Type: TypeString},
	{Name: "kind", Type: TypeString},
	{Name: "features", Type: TypeInt},
	{Name: "epsilon", Type: TypeFloat},
	{Name: "lambda", Type: TypeFloat},
	{Name: "method", Type: TypeString},
	{Name: "rows_used", Type: TypeInt},
	{Name: "trained_at", Type: TypeString},
	{Name: "trained_by", Type: TypeString},
}

// showModels lists the models the session may read (see canRead).
func (s *Session) showModels(ctx context.Context) (*Result, error) {
	all, err := s.engine.ledger.List(ctx, modelsNamespace)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	res := &Result{Columns: modelsColumns}
	for _, n := range names {
		var m storedModel
		if err := json.Unmarshal(all[n], &m); err != nil {
			return nil, fmt.Errorf("reading model %s: %w", n, err)
		}
		// Only the models the session may read; reservations are names
		// being trained, not models.
		if !s.canRead(&m) || m.Reserved || m.Model == nil {
			continue
		}
		kind := "logreg"
		if m.Model.RFF != nil {
			kind = "logreg-rbf"
		}
		res.Rows = append(res.Rows, []Value{n, kind, int64(len(m.Model.Inputs)), m.Model.Epsilon, m.Model.Lambda,
			m.Model.Method, m.Model.Rows, m.TrainedAt.UTC().Format("2006-01-02 15:04:05"), m.Owner})
	}
	return res, nil
}

// dropModel deletes a model, or the reservation of an interrupted TRAIN:
// its owner or an admin may. (Dropping the reservation of a TRAIN still
// running lets that TRAIN store its model under the name afterwards.)
func (s *Session) dropModel(ctx context.Context, st *parser.DropModel) (*Result, error) {
	m, err := s.loadModel(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	if m.Owner != s.user.Name && !s.role.Admin {
		return nil, Errorf(CodePermission, "model %s belongs to %s; only they or an admin may drop it", st.Name, m.Owner)
	}
	if err := s.engine.ledger.Delete(ctx, modelsNamespace, st.Name); err != nil {
		return nil, err
	}
	return &Result{Info: "DROP MODEL"}, nil
}
